/**
 * Workspaces, measured (`npm run bench:workspace`): what a step pays for durability, and what a
 * resumed run pays to get its workspace back.
 *
 * For workspaces of 1 MB, 50 MB and 500 MB (1,000 files each, of random bytes: nothing compresses
 * or deduplicates) in a file blob store on this machine's disk:
 * - save after a one-file change: the scan (stat every file, hash the changed one), the new
 *   content and the manifest stored. Target: <= 50 ms at 50 MB.
 * - restore on a worker that has nothing (another machine, a new container): every file fetched
 *   from the store and written. Target: p50 <= 1 s at 50 MB.
 * - restore on the worker that ran the step before (its directory is there): a scan, nothing
 *   written.
 * Each figure is the median of 5 runs. The 40-step task with and without a SIGKILL every fifth
 * step is `test/e2e/workspace-cli.test.ts`'s setting at one kill; see bench/README.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileBlobStore } from '../src/storage/blob-store';
import {
  EMPTY_MANIFEST,
  loadManifest,
  restoreWorkspace,
  saveWorkspace,
  scanWorkspace,
  type ScanCache,
} from '../src/workspace/workspace-snapshots';

const FILES = 1000;
const RUNS = 5;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function measure(megabytes: number): Promise<Record<string, number | string>> {
  const root = mkdtempSync(join(tmpdir(), 'bench-ws-'));
  const dir = join(root, 'work');
  const blobs = new FileBlobStore(join(root, 'blobs'));
  const size = Math.floor((megabytes * 1024 * 1024) / FILES);
  for (let i = 0; i < FILES; i++) {
    const sub = join(dir, `d${i % 20}`);
    mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, `f${i}.bin`), randomBytes(size));
  }
  const cache: ScanCache = new Map();
  let t = performance.now();
  let { ref, saved: base } = await saveWorkspace(dir, await scanWorkspace(dir, cache), EMPTY_MANIFEST, blobs);
  const first = performance.now() - t;

  const saves: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    writeFileSync(join(dir, 'd3', 'f3.bin'), randomBytes(size));
    t = performance.now();
    ({ ref, saved: base } = await saveWorkspace(dir, await scanWorkspace(dir, cache), base, blobs));
    saves.push(performance.now() - t);
  }

  const cold: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const elsewhere = join(root, `elsewhere-${r}`);
    t = performance.now();
    const manifest = await loadManifest(ref, blobs);
    await restoreWorkspace(elsewhere, manifest, EMPTY_MANIFEST, blobs);
    cold.push(performance.now() - t);
    rmSync(elsewhere, { recursive: true, force: true });
  }

  const warm: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    t = performance.now();
    const manifest = await loadManifest(ref, blobs);
    const current = await scanWorkspace(dir, cache);
    await restoreWorkspace(dir, manifest, current, blobs);
    warm.push(performance.now() - t);
  }
  rmSync(root, { recursive: true, force: true });
  return {
    workspace: `${megabytes} MB`,
    'first save (ms)': Math.round(first),
    'save after a one-file change (ms)': Math.round(median(saves)),
    'restore, new worker (ms)': Math.round(median(cold)),
    'restore, same worker (ms)': Math.round(median(warm)),
  };
}

async function main(): Promise<void> {
  const sizes = (process.env.BENCH_WORKSPACE_MB ?? '1,50,500').split(',').map(Number);
  const rows = [];
  for (const mb of sizes) rows.push(await measure(mb));
  console.table(rows);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
