import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Embedder, MemoryStore } from './memory-store';
import { openPglite, openPostgres, withoutPassword } from './sql-client';
import { SqlMemoryStore } from './sql-memory-store';

/** Where memory is kept: a PostgreSQL server (`AGENT_MEMORY_URL`), or a directory of this machine. */
export type MemoryLocation = { url: string } | { dir: string };

/** The directory of the embedded store unless `AGENT_MEMORY_DIR` says another: under the project. */
export const DEFAULT_MEMORY_DIR = '.durable-agents/memory';

/**
 * Opens the store at `location`, creating its tables. The embedded store is PGlite: PostgreSQL
 * itself, compiled to WebAssembly, so it needs no server, speaks the same SQL as the fleet's
 * PostgreSQL (one store implementation, one test suite for both) and has pgvector. It is one
 * process's: a second process that opens the directory is told who holds it and what to do.
 */
export async function openMemoryStore(location: MemoryLocation, embedder?: Embedder): Promise<MemoryStore> {
  if ('url' in location)
    return SqlMemoryStore.open(await openPostgres(location.url), 'postgres', withoutPassword(location.url), embedder);
  const dir = resolve(location.dir);
  const release = holdDirectory(dir);
  try {
    const store = await SqlMemoryStore.open(await openPglite(dir), 'embedded', dir, embedder);
    const close = store.close.bind(store);
    store.close = async () => {
      await close();
      release();
    };
    return store;
  } catch (e) {
    release();
    throw e;
  }
}

/**
 * Takes the embedded store's directory for this process (a lock file with its pid): PGlite has no
 * server to share one database between processes, and two at once would corrupt it.
 */
function holdDirectory(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const lock = join(dir, 'durable-agents.lock');
  let holder: number | undefined;
  try {
    holder = Number(readFileSync(lock, 'utf8').trim());
  } catch {
    // No lock: the directory is free.
  }
  if (holder && holder !== process.pid && alive(holder))
    throw new Error(
      `the memory store in ${dir} is in use by another process (pid ${holder}): the embedded store is one process's. ` +
        'Run memory commands through that worker (they go through Temporal), or give every process one PostgreSQL with AGENT_MEMORY_URL=postgres://...',
    );
  writeFileSync(lock, String(process.pid));
  return () => rmSync(lock, { force: true });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The store opened on first use, so a worker that keeps no memory never starts a database, and
 * one whose runs use memory opens it once (a failed opening is tried again at the next use).
 */
export function lazyMemoryStore(open: () => Promise<MemoryStore>): {
  get(): Promise<MemoryStore>;
  close(): Promise<void>;
} {
  let opening: Promise<MemoryStore> | undefined;
  return {
    get() {
      opening ??= open().catch((e) => {
        opening = undefined;
        throw e;
      });
      return opening;
    },
    async close() {
      const store = await opening?.catch(() => undefined);
      opening = undefined;
      await store?.close();
    },
  };
}
