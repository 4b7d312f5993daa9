import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/**
 * Where bytes that must not enter a workflow's history are kept (today: images sent with a
 * message or returned by a tool). Clients write them and pass a reference in the workflow input;
 * the worker's model-call activity reads them when it builds a request. Content-addressed: a
 * blob's reference is the SHA-256 of its bytes, so storing the same image twice is one blob,
 * and a reference recorded in a history months ago still names the same bytes.
 *
 * Clients and workers must reach the same store. The file store does when they share a disk
 * (one machine, or a shared volume); other stores implement this interface.
 */
export interface BlobStore {
  /** Stores the bytes and returns their reference, `sha256:<64 hex digits>`. */
  put(bytes: Uint8Array): Promise<string>;
  /** The bytes of a reference; a {@link BlobNotFoundError} when the store does not hold them. */
  get(ref: string): Promise<Uint8Array>;
  /** Where the store is, for messages: a directory, a bucket. */
  readonly location: string;
  /**
   * The store of one owner's blobs (a run's workspace states), kept apart from everyone else's so
   * that {@link BlobStore.removeScope} can delete them whole: the blobs of a run are its data, and
   * deleting its data deletes them. `name`: 64 hex digits. Optional: a store without it keeps all
   * blobs together (shared by content), and deleting a run's data leaves them.
   */
  scope?(name: string): BlobStore;
  /** Removes everything {@link BlobStore.scope} `name` holds; answers how many blobs were there. */
  removeScope?(name: string): Promise<number>;
}

/** A scope's name as stores take it: 64 hex digits (a hash), so it is safe in any path or key. */
export function checkScope(name: string): string {
  if (!/^[0-9a-f]{64}$/.test(name))
    throw new Error(`not a blob scope: ${JSON.stringify(name)} (expected 64 hex digits)`);
  return name;
}

/** A blob the store does not hold: the client that wrote it used another store. */
export class BlobNotFoundError extends Error {
  constructor(
    readonly ref: string,
    location: string,
  ) {
    super(
      `blob ${ref} is not in the blob store at ${location}; the client that sent it stored it elsewhere: clients and workers must share one store (set AGENT_BLOB_DIR to the same directory, a shared volume, on both)`,
    );
    this.name = 'BlobNotFoundError';
  }
}

/**
 * Writes a file so that a reader never sees half of it: to a temporary file, renamed into place
 * (the directory made first). The file stores of blobs and payloads both write this way.
 */
export async function writeWhole(path: string, bytes: Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temp, bytes);
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}

/** The reference of some bytes: `sha256:` and their hash in hex. */
export function blobRef(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/**
 * A blob store in a directory: `<dir>/sha256/<first two hex digits>/<hash>`. Writes go to a
 * temporary file renamed into place, so a reader never sees half a blob, and reads check the
 * hash, so a damaged file is reported rather than sent to a model.
 */
export class FileBlobStore implements BlobStore {
  readonly location: string;

  constructor(dir: string) {
    this.location = resolve(dir);
  }

  async put(bytes: Uint8Array): Promise<string> {
    const ref = blobRef(bytes);
    await writeWhole(this.pathOf(ref), bytes);
    return ref;
  }

  async get(ref: string): Promise<Uint8Array> {
    let bytes: Buffer;
    try {
      bytes = await readFile(this.pathOf(ref));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new BlobNotFoundError(ref, this.location);
      throw err;
    }
    if (blobRef(bytes) !== ref) throw new Error(`blob ${ref} in ${this.location} is damaged: its bytes do not match`);
    return bytes;
  }

  scope(name: string): BlobStore {
    return new FileBlobStore(join(this.location, 'scopes', checkScope(name)));
  }

  async removeScope(name: string): Promise<number> {
    const dir = join(this.location, 'scopes', checkScope(name));
    const blobs = await readdir(join(dir, 'sha256'), { recursive: true, withFileTypes: true }).catch(() => []);
    await rm(dir, { recursive: true, force: true });
    return blobs.filter((e) => e.isFile()).length;
  }

  private pathOf(ref: string): string {
    const match = /^sha256:([0-9a-f]{64})$/.exec(ref);
    if (!match) throw new Error(`not a blob reference: ${JSON.stringify(ref)} (expected "sha256:" and 64 hex digits)`);
    return join(this.location, 'sha256', match[1].slice(0, 2), match[1]);
  }
}

/** The blob store's directory unless `AGENT_BLOB_DIR` says otherwise: `~/.durable-agents/blobs`. */
export function defaultBlobDir(env: NodeJS.ProcessEnv): string {
  return env.AGENT_BLOB_DIR || join(env.HOME || homedir(), '.durable-agents', 'blobs');
}
