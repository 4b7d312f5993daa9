import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
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
  try {
    mkdirSync(join(dir, 'lock'));
  } catch {
    // Another file packs, or the global setup started packing (see startPacking). The packing
    // shell writes its exit code itself: a file run in band, in the global setup's own process,
    // blocks that process's event loop while it waits here.
    const deadline = Date.now() + 300_000;
    while (!existsSync(join(dir, 'exit'))) {
      if (Date.now() > deadline) throw new Error(`no tarball in ${dir} after 5 minutes`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
    return outcome(dir);
  }
  spawnSync('sh', ['-c', PACK], { cwd: ROOT, env: { ...process.env, PACK_DIR: dir } });
  return outcome(dir);
}

/** `npm pack` into $PACK_DIR, its output in `output` and then its exit code in `exit` (written last). */
const PACK = 'npm pack --pack-destination "$PACK_DIR" --silent > "$PACK_DIR/output" 2>&1; echo $? > "$PACK_DIR/exit"';

/** The tarball packed into `dir`, or the error of packing it. */
function outcome(dir: string): string {
  const code = readFileSync(join(dir, 'exit'), 'utf8').trim();
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (code === '0' && tarball) return join(dir, tarball);
  throw new Error(`npm pack failed:\n${readFileSync(join(dir, 'output'), 'utf8')}`);
}

/**
 * Starts `npm pack` in the background, for the global setup: building the package takes about
 * half a minute, which the first test files then spend running instead of the package tests
 * waiting for it. Whoever asks {@link packedTarball} later waits for this one.
 */
export function startPacking(dir: string): ChildProcess {
  mkdirSync(join(dir, 'lock'));
  // A group of its own, so the teardown of a short run stops npm with it.
  return spawn('sh', ['-c', PACK], {
    cwd: ROOT,
    env: { ...process.env, PACK_DIR: dir },
    stdio: 'ignore',
    detached: true,
  });
}
