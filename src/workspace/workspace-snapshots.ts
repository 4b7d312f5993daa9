import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, lchown, lstat, mkdir, readdir, readFile, readlink, rm, rmdir, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  contentRef,
  contentsToStore,
  manifestProblem,
  workspaceManifest,
  type WorkspaceFile,
  type WorkspaceManifest,
} from '../core/workspace/manifest';
import { writeWhole, type BlobStore } from '../storage/blob-store';
import { inScope, ownStore, stateStore } from './workspace-store';

/**
 * A workspace directory on a worker, and its states in the blob store: what a directory holds
 * (a scan, which hashes only files whose size, times or inode changed since it last looked), the
 * saving of a state (its new contents, then its manifest, each stored once by hash), and the
 * restoring of one (only the files that differ are written or removed). Contents and manifests are
 * blobs (`sha256:<hex>`), so a state saved on one worker is restored on any other that shares the
 * store, and two states that share files share their bytes.
 */

/** What the scan knew of a file when it last hashed it: if these are the same, so is the hash. */
interface Seen {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  hash: string;
}

/** The files a scan last saw, by path: later scans hash only what changed. */
export type ScanCache = Map<string, Seen>;

/** An empty workspace's manifest. */
export const EMPTY_MANIFEST: WorkspaceManifest = workspaceManifest([]);

/**
 * What `dir` holds now, as a manifest: regular files (with their execute bit) and links. What a
 * state cannot hold is dealt with here, never skipped in silence (a skipped file would read as
 * removed, and a restore elsewhere would lose it):
 * - a directory or file the worker cannot read (a command's `chmod 000`) is made readable by its
 *   owner: modes other than the execute bit are not kept anyway;
 * - FIFOs, sockets and devices are removed (a later `grep` would hang on a FIFO; no state keeps them);
 * - a name that is not UTF-8 text cannot be named in a manifest: {@link UnkeptNameError}.
 */
export async function scanWorkspace(dir: string, cache: ScanCache): Promise<WorkspaceManifest> {
  const files: WorkspaceFile[] = [];
  const seen = new Set<string>();
  const walk = async (rel: string): Promise<void> => {
    const abs = rel ? join(dir, rel) : dir;
    const entries = await readable(abs, () => readdir(abs, { withFileTypes: true }));
    for (const entry of entries) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      const at = join(dir, path);
      // A name that is not UTF-8 reads back with U+FFFD in it, and is then not found by that name.
      if (
        entry.name.includes('\uFFFD') &&
        !(await lstat(at).then(
          () => true,
          () => false,
        ))
      )
        throw new UnkeptNameError(rel);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isSymbolicLink()) {
        const target = await readlink(at);
        files.push({ path, hash: sha256(Buffer.from(target)), size: Buffer.byteLength(target), link: target });
      } else if (entry.isFile()) {
        const st = await lstat(at);
        const was = cache.get(path);
        const hash =
          was && was.size === st.size && was.mtimeMs === st.mtimeMs && was.ctimeMs === st.ctimeMs && was.ino === st.ino
            ? was.hash
            : await readable(at, () => hashFile(at));
        // Made readable just now (its ctime changed): the next scan hashes it again, once.
        cache.set(path, { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, hash });
        seen.add(path);
        files.push({ path, hash, size: st.size, ...(st.mode & 0o100 ? { executable: true } : {}) });
      } else await rm(at, { force: true });
    }
  };
  await walk('');
  for (const path of cache.keys()) if (!seen.has(path)) cache.delete(path);
  return workspaceManifest(files);
}

/** A file in the workspace whose name is not UTF-8 text: no state can name it. */
export class UnkeptNameError extends Error {
  constructor(readonly dir: string) {
    super(
      `a file in ${dir ? `"${dir}"` : 'the workspace'} has a name that is not UTF-8 text, which the workspace cannot keep: name files in UTF-8`,
    );
    this.name = 'UnkeptNameError';
  }
}

/** Removes every entry of `dir` whose name is not UTF-8 text (see {@link UnkeptNameError}). */
export async function removeUnkeptNames(dir: string): Promise<void> {
  const walk = async (at: Buffer): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true, encoding: 'buffer' })) {
      const path = Buffer.concat([at, Buffer.from('/'), entry.name]);
      if (!Buffer.from(entry.name.toString('utf8')).equals(entry.name))
        await rm(path, { recursive: true, force: true });
      else if (entry.isDirectory()) await walk(path);
    }
  };
  await walk(Buffer.from(dir));
}

/** `read()`, and once more after giving the owner read (and search) access when it was refused. */
async function readable<T>(abs: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'EPERM') throw e;
    const st = await lstat(abs);
    await chmod(abs, st.mode | (st.isDirectory() ? 0o700 : 0o600));
    return read();
  }
}

/**
 * Saves `manifest` (a scan of `dir`): the contents `base` (a saved manifest) does not hold
 * already, then the manifest itself, with where each content is in the store. Returns the
 * manifest's reference and the manifest as saved: the base of the next save.
 */
export async function saveWorkspace(
  dir: string,
  manifest: WorkspaceManifest,
  base: WorkspaceManifest,
  blobs: BlobStore,
): Promise<{ ref: string; saved: WorkspaceManifest }> {
  // Where the base's contents are in the store (an encrypting store names them otherwise).
  const stored = new Map(base.files.filter((f) => !f.link).map((f) => [f.hash, f.blob]));
  const toStore = new Set(contentsToStore(manifest, new Set(stored.keys())));
  const byHash = new Map(manifest.files.filter((f) => toStore.has(f.hash) && !f.link).map((f) => [f.hash, f.path]));
  await inBatches([...byHash], async ([hash, path]) => {
    const bytes = await readFile(join(dir, path));
    // The file changed since the scan (a command still writing): its state is not this one.
    if (sha256(bytes) !== hash) throw new Error(`"${path}" changed while the workspace was being saved`);
    const ref = await blobs.put(bytes);
    stored.set(hash, ref === `sha256:${hash}` ? undefined : ref);
  });
  const files = manifest.files.map((f) => {
    const blob = f.link === undefined ? stored.get(f.hash) : undefined;
    const { blob: _, ...rest } = f;
    return blob ? { ...rest, blob } : rest;
  });
  const saved: WorkspaceManifest = { ...manifest, files };
  return { ref: await blobs.put(Buffer.from(JSON.stringify(saved))), saved };
}

/**
 * Copies the state `ref` (its manifest and its files' contents) into the workflow scope `scope`
 * and returns its reference there; `ref` itself when it is there already. A fork or rerun starts
 * this way, so the workflow it came from can be deleted at once without taking its start.
 */
export async function copyState(blobs: BlobStore, ref: string, scope: string): Promise<string> {
  if (inScope(blobs, ref, scope)) return ref;
  const from = stateStore(blobs, ref);
  const manifest = await loadManifest(from.manifest, from.store);
  const own = ownStore(blobs, scope);
  const files = [...manifest.files];
  await inBatches([...files.keys()], async (i) => {
    const { blob: _, ...file } = files[i];
    if (file.link !== undefined) return void (files[i] = file);
    const stored = await own.store.put(await from.store.get(contentRef(files[i])));
    files[i] = stored === `sha256:${file.hash}` ? file : { ...file, blob: stored };
  });
  return own.stateRef(await own.store.put(Buffer.from(JSON.stringify({ ...manifest, files }))));
}

/** The manifest a reference names; an error naming what is wrong when the blob is not one this build reads. */
export async function loadManifest(ref: string, blobs: BlobStore): Promise<WorkspaceManifest> {
  const bytes = await blobs.get(ref);
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    throw new Error(`the workspace state ${ref} is not a manifest (not JSON)`);
  }
  const problem = manifestProblem(value);
  if (problem) throw new Error(`the workspace state ${ref}: ${problem}`);
  return value as WorkspaceManifest;
}

/**
 * Makes `dir` hold exactly `manifest`: files that differ from it (as `current`, a scan, says) are
 * written from the store, files it lacks are removed. A file is written whole and renamed into
 * place, so no one sees half of it. `uid`: who owns what is written (the sandbox's user).
 */
export async function restoreWorkspace(
  dir: string,
  manifest: WorkspaceManifest,
  current: WorkspaceManifest,
  blobs: BlobStore,
  uid?: number,
): Promise<{ written: number; removed: number }> {
  await mkdir(dir, { recursive: true });
  const have = new Map(current.files.map((f) => [f.path, f]));
  const wanted = new Set(manifest.files.map((f) => f.path));
  const stale = current.files.filter((f) => !wanted.has(f.path));
  // A path that is a file in one state and a directory in the other: the file goes first.
  for (const f of stale) await rm(join(dir, f.path), { force: true });
  const write = manifest.files.filter((f) => {
    const h = have.get(f.path);
    return !h || h.hash !== f.hash || Boolean(h.executable) !== Boolean(f.executable) || h.link !== f.link;
  });
  await inBatches(write, async (f) => {
    const abs = join(dir, f.path);
    await makeDirs(dir, dirname(f.path), uid);
    await rm(abs, { force: true, recursive: true });
    if (f.link !== undefined) {
      await symlink(f.link, abs);
      if (uid !== undefined) await lchown(abs, uid, uid);
      return;
    }
    await writeWhole(abs, await blobs.get(contentRef(f)));
    await chmod(abs, f.executable ? 0o755 : 0o644);
    if (uid !== undefined) await lchown(abs, uid, uid);
  });
  await removeEmptyDirs(
    dir,
    stale.map((f) => dirname(f.path)),
  );
  return { written: write.length, removed: stale.length };
}

/** Makes the directories of `rel` (inside `dir`), owned by `uid` when given. */
export async function makeDirs(dir: string, rel: string, uid?: number): Promise<void> {
  if (rel === '.' || rel === '') return;
  const parts = rel.split('/');
  for (let i = 1; i <= parts.length; i++) {
    const abs = join(dir, ...parts.slice(0, i));
    const made = await mkdir(abs).then(
      () => true,
      (e: NodeJS.ErrnoException) => {
        if (e.code === 'EEXIST') return false;
        throw e;
      },
    );
    if (made && uid !== undefined) await lchown(abs, uid, uid);
  }
}

async function removeEmptyDirs(dir: string, rels: string[]): Promise<void> {
  const deepestFirst = [...new Set(rels)].filter((r) => r !== '.').sort((a, b) => b.length - a.length);
  for (const rel of deepestFirst) {
    const parts = rel.split('/');
    for (let i = parts.length; i > 0; i--) {
      const ok = await rmdir(join(dir, ...parts.slice(0, i))).then(
        () => true,
        () => false,
      );
      if (!ok) break;
    }
  }
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function hashFile(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}

/** Runs `work` on every item, eight at a time: a store far away answers many requests at once. */
async function inBatches<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(8, items.length) }, worker));
}
