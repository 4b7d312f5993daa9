import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import type { Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { EncryptionCodec, type EncryptionKey } from '../codec/encryption-codec';

/**
 * A small JSON file of secrets (logins to MCP servers, tenants' credentials): written atomically,
 * mode 0600, and encrypted with the payload keys when there are any (so a copied file is no use
 * without them). Without a path, in memory (a test, a process that keeps them for itself).
 */
export class SealedJsonFile<T extends object> {
  private memory: T;
  /** This process's changes, one after another (the lock file orders them with other processes'). */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly path: string | undefined,
    private readonly keys: readonly EncryptionKey[] | undefined,
    private readonly empty: () => T,
    /** What to do when the file is encrypted and there are no keys: the command that writes it anew. */
    private readonly rewrite: string,
  ) {
    this.memory = empty();
  }

  async read(): Promise<T> {
    if (!this.path) return structuredClone(this.memory);
    if (!existsSync(this.path)) return this.empty();
    const raw = readFileSync(this.path, 'utf8').trim();
    if (!raw) return this.empty();
    if (raw.startsWith('{')) return JSON.parse(raw) as T;
    if (!this.keys?.length)
      throw new Error(
        `${this.path} is encrypted: set AGENT_ENCRYPTION_KEYS to the keys it was written with (or write it again: ${this.rewrite})`,
      );
    const payload = temporal.api.common.v1.Payload.decode(Buffer.from(raw, 'base64')) as Payload;
    const [plain] = await new EncryptionCodec(this.keys).decode([payload]);
    return JSON.parse(Buffer.from(plain.data ?? []).toString('utf8')) as T;
  }

  /**
   * Reads, changes and writes the file as one step, so that changes made at once (here, or by
   * other processes: twelve `credentials set` in parallel) all land. Other processes are kept out
   * by a lock file beside it (`<path>.lock`, created exclusively; one left by a process that died
   * is taken over once it is older than {@link STALE_LOCK_MS}).
   */
  update(change: (value: T) => T | Promise<T>): Promise<void> {
    const next = this.queue.then(async () => {
      const release = this.path ? await lockFile(`${this.path}.lock`) : () => undefined;
      try {
        await this.write(await change(await this.read()));
      } finally {
        release();
      }
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  async write(value: T): Promise<void> {
    if (!this.path) return void (this.memory = structuredClone(value));
    let text = JSON.stringify(value, null, 2);
    if (this.keys?.length) {
      const plain: Payload = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(text) };
      const [sealed] = await new EncryptionCodec(this.keys).encode([plain]);
      text = Buffer.from(temporal.api.common.v1.Payload.encode(sealed).finish()).toString('base64');
    }
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const temp = `${this.path}.${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(temp, `${text}\n`, { mode: 0o600 });
    renameSync(temp, this.path);
    chmodSync(this.path, 0o600);
  }
}

/** How old a lock file must be before it is taken as left by a process that died. */
const STALE_LOCK_MS = 30_000;
/** How long a change waits for the lock before it gives up with a sentence. */
const LOCK_WAIT_MS = 60_000;

/**
 * Takes the lock file `lock` (created with O_EXCL, holding this process's id) and returns its
 * release. Hand-written: a few lines with Node's own `wx` flag, where the packages that do this
 * (proper-lockfile) are no longer maintained.
 */
async function lockFile(lock: string): Promise<() => void> {
  mkdirSync(dirname(lock), { recursive: true, mode: 0o700 });
  const start = Date.now();
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    try {
      const fd = openSync(lock, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        try {
          unlinkSync(lock);
        } catch {
          // Taken over as stale meanwhile: nothing of ours to remove.
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    try {
      if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) unlinkSync(lock);
    } catch {
      // Released meanwhile: try again at once.
    }
    if (Date.now() - start > LOCK_WAIT_MS)
      throw new Error(
        `${lock} has been held for over ${LOCK_WAIT_MS / 1000} s by another process: if none runs, remove it`,
      );
    await new Promise((resolve) => setTimeout(resolve, pause + Math.random() * pause));
  }
}
