import { cpSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createHash } from 'node:crypto';
import { openPglite, PGLITE_PACKAGES } from '../../src/memory-store/sql-client';

/**
 * An embedded memory store's directory, ready to open: a copy of a PGlite database made once (and
 * kept in the system's temp directory, like the Python venvs in ~/.cache). Creating a PGlite
 * database runs initdb, about five CPU-seconds a directory; a copy takes milliseconds, and the
 * suite opens a few dozen stores. A directory that holds a database already is left as it is.
 */
export async function seededMemoryDir(dir: string): Promise<string> {
  if (existsSync(join(dir, 'PG_VERSION'))) return dir;
  const template = await pgliteTemplate();
  mkdirSync(dirname(dir), { recursive: true });
  cpSync(template, dir, { recursive: true });
  return dir;
}

/** The template database: made by whoever comes first (others wait for its `.complete`). */
async function pgliteTemplate(): Promise<string> {
  // One per PGlite version: another version's database would not open.
  const version = createHash('sha256').update(PGLITE_PACKAGES).digest('hex').slice(0, 12);
  const root = join(tmpdir(), `durable-agents-pglite-template-${version}`);
  const db = join(root, 'db');
  const done = join(root, '.complete');
  if (existsSync(done)) return db;
  const lock = `${root}.lock`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (existsSync(done)) return db;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lock} (remove it if no test is running)`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    if (existsSync(done)) return db;
    rmSync(root, { recursive: true, force: true });
    const making = join(tmpdir(), `durable-agents-pglite-making-${process.pid}`);
    rmSync(making, { recursive: true, force: true });
    const client = await openPglite(making);
    await client.close();
    mkdirSync(root, { recursive: true });
    renameSync(making, db);
    writeFileSync(done, '');
    return db;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
