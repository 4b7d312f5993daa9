import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './processes';

/**
 * The package as users get it: `npm pack` of this repository, once per test run, whichever test
 * file asks first. Packing builds `dist/` afresh, so two test files packing at once would delete
 * each other's build: the first to take the lock packs, the others wait for its tarball.
 * (`TEST_PACK_DIR` comes from the global setup; a file run alone packs into a directory of its own.)
 */
export function packedTarball(): string {
  const dir =
    process.env.TEST_PACK_DIR ?? (process.env.TEST_PACK_DIR = mkdtempSync(join(tmpdir(), 'durable-agents-pack-')));
  const result = join(dir, 'result');
  try {
    mkdirSync(join(dir, 'lock'));
  } catch {
    // Another file packs, or the global setup started packing (see startPacking).
    const deadline = Date.now() + 300_000;
    while (!existsSync(result)) {
      if (Date.now() > deadline) throw new Error(`no tarball in ${dir} after 5 minutes`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
    return answer(readFileSync(result, 'utf8'));
  }
  const packed = spawnSync('npm', ['pack', '--pack-destination', dir, '--silent'], { cwd: ROOT, encoding: 'utf8' });
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  const outcome =
    packed.status === 0 && tarball ? join(dir, tarball) : `error: npm pack failed:\n${packed.stdout}\n${packed.stderr}`;
  writeFileSync(result, outcome);
  return answer(outcome);
}

function answer(outcome: string): string {
  if (outcome.startsWith('error: ')) throw new Error(outcome.slice(7));
  return outcome;
}

/**
 * Starts `npm pack` in the background, for the global setup: building the package takes about
 * half a minute, which the first test files then spend running instead of the package tests
 * waiting for it. Whoever asks {@link packedTarball} later waits for this one.
 */
export function startPacking(dir: string): ChildProcess {
  mkdirSync(join(dir, 'lock'));
  const result = join(dir, 'result');
  const child = spawn('npm', ['pack', '--pack-destination', dir, '--silent'], { cwd: ROOT, stdio: 'pipe' });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  child.on('close', (code) => {
    // A short run (one file, no package test) may end and remove the directory before packing does.
    if (!existsSync(dir)) return;
    const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
    writeFileSync(result, code === 0 && tarball ? join(dir, tarball) : `error: npm pack failed:\n${output}`);
  });
  return child;
}
