/**
 * The one seam between the memory store and a database: PGlite (PostgreSQL compiled to
 * WebAssembly, in-process, in a directory) and node-postgres speak the same SQL, so the store is
 * written once and tested against both.
 */
export interface SqlClient {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: T[] }>;
  /** Several statements, no parameters (the schema). */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
}

/** The embedded store's packages: optional peers, so a worker that keeps no memory installs no 27 MB of WebAssembly. */
export const PGLITE_PACKAGES = '@electric-sql/pglite@0.5.14 @electric-sql/pglite-pgvector@0.0.15';

/** A PGlite database in `dir` (created on first use), with pgvector loaded. */
export async function openPglite(dir: string): Promise<SqlClient> {
  // Loaded when used: a worker that keeps no memory never pays for the WebAssembly module.
  const { PGlite, vector } = await loadPackages(
    async () => ({
      PGlite: (await import('@electric-sql/pglite')).PGlite,
      vector: (await import('@electric-sql/pglite-pgvector')).vector,
    }),
    `the embedded memory store (PGlite) needs its packages: npm install ${PGLITE_PACKAGES} (or keep memory in PostgreSQL: AGENT_MEMORY_URL=postgres://...)`,
  );
  const db = await PGlite.create({ dataDir: dir, extensions: { vector } });
  return {
    query: async <T>(sql: string, params?: unknown[]) => ({ rows: (await db.query<T>(sql, params)).rows }),
    exec: async (sql) => void (await db.exec(sql)),
    close: () => db.close(),
  };
}

/** A pool of connections to the PostgreSQL server at `url` (`postgres://user:pass@host:5432/db`). */
export async function openPostgres(url: string): Promise<SqlClient> {
  const { Pool } = await loadPackages(
    () => import('pg'),
    'a PostgreSQL memory store (AGENT_MEMORY_URL) needs the pg package: npm install pg',
  );
  const pool = new Pool({ connectionString: url, max: 5 });
  // A server that is not there says so now, with its address, instead of at the first recall.
  const client = await pool.connect().catch(async (e: Error) => {
    await pool.end().catch(() => undefined);
    throw new Error(`cannot reach the memory database at ${withoutPassword(url)} (AGENT_MEMORY_URL): ${e.message}`);
  });
  client.release();
  // An idle connection the server dropped must not take the worker with it.
  pool.on('error', () => undefined);
  return {
    query: async <T>(sql: string, params?: unknown[]) => ({ rows: (await pool.query(sql, params)).rows as T[] }),
    exec: async (sql) => void (await pool.query(sql)),
    close: () => pool.end(),
  };
}

/** `url` without its password, for messages. */
export function withoutPassword(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(not a URL)';
  }
}

/** Loads optional packages, or fails with what to install. */
async function loadPackages<T>(load: () => Promise<T>, missing: string): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' || /Cannot find (module|package)/.test(String(err)))
      throw new MemoryPackageMissing(`${missing} (${(err as Error).message.split('\n')[0]})`);
    throw err;
  }
}

/** The packages a memory store needs are not installed: nothing to retry until they are. */
export class MemoryPackageMissing extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MemoryPackageMissing';
  }
}
