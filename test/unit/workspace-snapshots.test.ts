import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
  mkdirSync,
  existsSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { FileBlobStore, type BlobStore } from '../../src/storage/blob-store';
import { CodecBlobStore } from '../../src/storage/codec-blob-store';
import { EncryptionCodec, parseEncryptionKeys } from '../../src/codec/encryption-codec';
import {
  EMPTY_MANIFEST,
  loadManifest,
  removeUnkeptNames,
  restoreWorkspace,
  saveWorkspace,
  scanWorkspace,
} from '../../src/workspace/workspace-snapshots';
import { insideWorkspace, WorkspaceHost } from '../../src/workspace/workspace-host';
import { runWorkspace } from '../../src/core/workspace/workspace-options';
import { parseStateRef, stateStore, workspaceScope } from '../../src/workspace/workspace-store';

/** What deleting a run's data does to its workspace states (see storage/workflow-purge.ts). */
const removeWorkspaceStates = async (blobs: BlobStore, namespace: string, workflowId: string) =>
  blobs.removeScope ? blobs.removeScope(workspaceScope(namespace, workflowId)) : 0;

/** A run of the default namespace, as the tool activity names it to the host. */
const run = (workflowId: string) => ({ namespace: 'default', workflowId });

/** A blob store that counts what it is asked to store. */
function countingStore(): BlobStore & { puts: number } {
  const files = new FileBlobStore(mkdtempSync(join(tmpdir(), 'snap-blobs-')));
  const store = {
    puts: 0,
    location: files.location,
    put: (bytes: Uint8Array) => {
      store.puts++;
      return files.put(bytes);
    },
    get: (ref: string) => files.get(ref),
  };
  return store;
}

it('saves only what changed, and restores a state into any directory, exactly', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'snap-'));
  mkdirSync(join(dir, 'src'));
  for (let i = 0; i < 20; i++) writeFileSync(join(dir, 'src', `f${i}.txt`), `file ${i}\n`);
  writeFileSync(join(dir, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
  symlinkSync('run.sh', join(dir, 'link'));
  const blobs = countingStore();
  const cache = new Map();
  const first = await scanWorkspace(dir, cache);
  const { ref: ref1, saved: saved1 } = await saveWorkspace(dir, first, EMPTY_MANIFEST, blobs);
  // 21 contents (the link is in the manifest) and the manifest.
  expect(blobs.puts).toBe(22);

  writeFileSync(join(dir, 'src', 'f3.txt'), 'changed\n');
  const second = await scanWorkspace(dir, cache);
  blobs.puts = 0;
  const { ref: ref2 } = await saveWorkspace(dir, second, saved1, blobs);
  expect(blobs.puts).toBe(2);
  expect(ref2).not.toBe(ref1);

  // Elsewhere (another worker): from nothing to state 2, then back to state 1, file by file.
  const other = mkdtempSync(join(tmpdir(), 'snap-other-'));
  const m2 = await loadManifest(ref2, blobs);
  await restoreWorkspace(other, m2, EMPTY_MANIFEST, blobs);
  expect(readFileSync(join(other, 'src', 'f3.txt'), 'utf8')).toBe('changed\n');
  expect(readFileSync(join(other, 'link'), 'utf8')).toBe('#!/bin/sh\necho hi\n');
  const otherCache = new Map();
  const scanned = await scanWorkspace(other, otherCache);
  expect(scanned).toEqual(m2);
  writeFileSync(join(other, 'stray.txt'), 'half-made\n');
  const written = await restoreWorkspace(
    other,
    await loadManifest(ref1, blobs),
    await scanWorkspace(other, otherCache),
    blobs,
  );
  expect(written).toEqual({ written: 1, removed: 1 });
  expect(readFileSync(join(other, 'src', 'f3.txt'), 'utf8')).toBe('file 3\n');
  expect(existsSync(join(other, 'stray.txt'))).toBe(false);
  expect(await scanWorkspace(other, otherCache)).toEqual(first);
});

it('refuses paths that lead outside the workspace, links included', () => {
  const dir = mkdtempSync(join(tmpdir(), 'snap-paths-'));
  symlinkSync('/etc', join(dir, 'etc'));
  expect(insideWorkspace(dir, 'a/b.txt')).toBe(join(dir, 'a', 'b.txt'));
  expect(insideWorkspace(dir, '/workspace/a.txt')).toBe(join(dir, 'a.txt'));
  expect(() => insideWorkspace(dir, '../x')).toThrow(/outside the workspace/);
  expect(() => insideWorkspace(dir, '/etc/passwd')).toThrow(/outside the workspace/);
  expect(() => insideWorkspace(dir, 'etc/passwd')).toThrow(/through a link/);
});

it('keeps the directories of the runs used last only, and restores a run whose directory went', async () => {
  const root = mkdtempSync(join(tmpdir(), 'snap-host-'));
  const blobs = countingStore();
  const sandbox = {
    name: 'none',
    problem: async () => undefined,
    run: async () => ({ exitCode: 0, stdout: '', stderr: '' }),
  };
  const host = new WorkspaceHost({ root, blobs, sandbox, keep: 1 });
  const a = await host.use(run('run-a'), runWorkspace(true), (ws) => ws.writeFile('x.txt', 'a'));
  expect(readdirSync(root)).toHaveLength(1);
  await host.use(run('run-b'), runWorkspace(true), (ws) => ws.writeFile('x.txt', 'b'));
  // run-a's directory went; its state did not.
  expect(readdirSync(root)).toHaveLength(1);
  const read = await host.use(run('run-a'), runWorkspace(true, a.saved!.ref), (ws) => ws.readFile('x.txt'));
  expect(read.value.toString()).toBe('a');
  expect(read.saved).toBeUndefined();
});

it('saves and restores through a store that encrypts (which names each content by its encrypted bytes)', async () => {
  const files = new FileBlobStore(mkdtempSync(join(tmpdir(), 'snap-sealed-')));
  const blobs = new CodecBlobStore(files, [
    new EncryptionCodec(parseEncryptionKeys(`k1:${randomBytes(32).toString('base64')}`)),
  ]);
  const host = new WorkspaceHost({
    root: mkdtempSync(join(tmpdir(), 'snap-sealed-dirs-')),
    blobs,
    sandbox: {
      name: 'none',
      problem: async () => undefined,
      run: async () => ({ exitCode: 0, stdout: '', stderr: '' }),
    },
  });
  const one = await host.use(run('sealed'), runWorkspace(true), async (ws) => {
    await ws.writeFile('a.txt', 'secret a');
    await ws.writeFile('b.txt', 'secret b');
  });
  const two = await host.use(run('sealed'), runWorkspace(true, one.saved!.ref), (ws) =>
    ws.writeFile('b.txt', 'secret B'),
  );
  // On another worker: every file back, the unchanged one from the first save.
  const other = new WorkspaceHost({
    root: mkdtempSync(join(tmpdir(), 'snap-sealed-other-')),
    blobs,
    sandbox: host.sandbox,
  });
  const read = await other.use(run('sealed'), runWorkspace(true, two.saved!.ref), async (ws) =>
    [await ws.readFile('a.txt'), await ws.readFile('b.txt')].map(String),
  );
  expect(read.value).toEqual(['secret a', 'secret B']);
  // Nothing in the store is in the clear.
  const stored = readdirSync(files.location, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  expect(stored.length).toBeGreaterThan(0);
  for (const e of stored) expect(readFileSync(join(e.parentPath, e.name), 'utf8')).not.toContain('secret');
});

it("keeps each workflow's states in a scope of its own: a fork copies its start in, and deleting a run's states leaves the fork whole", async () => {
  const blobs = new FileBlobStore(mkdtempSync(join(tmpdir(), 'snap-scopes-')));
  const sandbox = {
    name: 'none',
    problem: async () => undefined,
    run: async () => ({ exitCode: 0, stdout: '', stderr: '' }),
  };
  const host = new WorkspaceHost({ root: mkdtempSync(join(tmpdir(), 'snap-scopes-dirs-')), blobs, sandbox });
  const parent = await host.use(run('parent'), runWorkspace(true), async (ws) => {
    await ws.writeFile('a.txt', 'from the parent');
    await ws.writeFile('b.txt', 'also');
  });
  const parentRef = parent.saved!.ref;
  expect(parseStateRef(parentRef).scope).toBe(workspaceScope('default', 'parent'));
  // The fork's first call only reads: its start is copied into its own scope all the same.
  const fork = await host.use(run('fork'), runWorkspace(true, parentRef), (ws) => ws.readFile('a.txt'));
  expect(fork.value.toString()).toBe('from the parent');
  expect(fork.saved).toMatchObject({ added: [], changed: [], removed: [] });
  expect(parseStateRef(fork.saved!.ref).scope).toBe(workspaceScope('default', 'fork'));
  // Its next call, in its own scope, saves nothing when nothing changed.
  const again = await host.use(run('fork'), runWorkspace(true, fork.saved!.ref), (ws) => ws.readFile('b.txt'));
  expect(again.saved).toBeUndefined();

  // Deleting the parent's data: its states are gone (3 blobs: two contents and a manifest).
  expect(await removeWorkspaceStates(blobs, 'default', 'parent')).toBe(3);
  expect(await removeWorkspaceStates(blobs, 'default', 'parent')).toBe(0);
  const elsewhere = new WorkspaceHost({ root: mkdtempSync(join(tmpdir(), 'snap-scopes-other-')), blobs, sandbox });
  await expect(elsewhere.use(run('parent'), runWorkspace(true, parentRef), async () => undefined)).rejects.toThrow(
    /not in the blob store/,
  );
  // The fork's state, on another worker, is whole.
  const read = await elsewhere.use(run('fork'), runWorkspace(true, fork.saved!.ref), async (ws) =>
    [await ws.readFile('a.txt'), await ws.readFile('b.txt')].map(String),
  );
  expect(read.value).toEqual(['from the parent', 'also']);
  // Nothing of the parent's is left on disk: only the fork's scope.
  expect(readdirSync(join(blobs.location, 'scopes'))).toEqual([workspaceScope('default', 'fork')]);
});

it('a store without scopes keeps plain references in the shared store, which deleting cannot reach', async () => {
  const blobs = countingStore();
  const host = new WorkspaceHost({
    root: mkdtempSync(join(tmpdir(), 'snap-unscoped-')),
    blobs,
    sandbox: {
      name: 'none',
      problem: async () => undefined,
      run: async () => ({ exitCode: 0, stdout: '', stderr: '' }),
    },
  });
  const one = await host.use(run('plain'), runWorkspace(true), (ws) => ws.writeFile('a.txt', 'a'));
  expect(one.saved!.ref).toMatch(/^sha256:[0-9a-f]{64}$/);
  expect(await removeWorkspaceStates(blobs, 'default', 'plain')).toBe(0);
  const fork = await host.use(run('fork'), runWorkspace(true, one.saved!.ref), (ws) => ws.readFile('a.txt'));
  expect(fork.saved).toBeUndefined();
});

it('keeps any name Linux allows, removes FIFOs, and refuses a name that is not UTF-8 by saying so (removable)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'snap-names-'));
  writeFileSync(join(dir, 'back\\slash'), 'b');
  writeFileSync(join(dir, 'new\nline'), 'n');
  execFileSync('mkfifo', [join(dir, 'pipe')]);
  const blobs = new FileBlobStore(mkdtempSync(join(tmpdir(), 'snap-blobs-')));
  const scanned = await scanWorkspace(dir, new Map());
  expect(scanned.files.map((f) => f.path)).toEqual(['back\\slash', 'new\nline']);
  expect(existsSync(join(dir, 'pipe'))).toBe(false);
  const { ref } = await saveWorkspace(dir, scanned, EMPTY_MANIFEST, blobs);
  const other = mkdtempSync(join(tmpdir(), 'snap-names-'));
  await restoreWorkspace(other, await loadManifest(ref, blobs), EMPTY_MANIFEST, blobs);
  expect(readFileSync(join(other, 'new\nline'), 'utf8')).toBe('n');
  // A name of bytes that are not UTF-8 cannot be named in a manifest: refused, never skipped.
  writeFileSync(Buffer.concat([Buffer.from(`${dir}/bad`), Buffer.from([0xff])]), 'x');
  await expect(scanWorkspace(dir, new Map())).rejects.toThrow(/has a name that is not UTF-8 text/);
  await removeUnkeptNames(dir);
  expect((await scanWorkspace(dir, new Map())).files).toHaveLength(2);
});

it('keeps the execute bit of a file a tool writes again, and commits it', async () => {
  const root = mkdtempSync(join(tmpdir(), 'snap-exec-'));
  const blobs = new FileBlobStore(mkdtempSync(join(tmpdir(), 'snap-blobs-')));
  const sandbox = {
    name: 'none',
    problem: async () => undefined,
    run: async () => ({ exitCode: 0, stdout: '', stderr: '' }),
  };
  const host = new WorkspaceHost({ root, blobs, sandbox });
  const mode = (ws: { resolve(p: string): string }, path: string) => statSync(ws.resolve(path)).mode & 0o777;
  const first = await host.use(run('run-x'), runWorkspace(true), async (ws) => {
    await ws.writeFile('run.sh', '#!/bin/sh\n');
    chmodSync(ws.resolve('run.sh'), 0o755);
  });
  const again = await host.use(run('run-x'), runWorkspace(true, first.saved!.ref), async (ws) => {
    await ws.writeFile('run.sh', '#!/bin/sh\necho two\n');
    await ws.writeFile('new.sh', 'x');
    return [mode(ws, 'run.sh'), mode(ws, 'new.sh')];
  });
  expect(again.value).toEqual([0o755, 0o644]);
  const { store, manifest } = stateStore(blobs, again.saved!.ref);
  const saved = await loadManifest(manifest, store);
  expect(saved.files.find((f) => f.path === 'run.sh')?.executable).toBe(true);
});
