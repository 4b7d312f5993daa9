import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from '../../src/connection/dev-server';

/**
 * A real PostgreSQL server for the memory store's tests: Debian's (`npm run setup:postgres`
 * installs it), in a data directory of its own on a free loopback port, stopped at the end. Not
 * pgvector (Debian 12 has no package of it): the PostgreSQL store is tested as a fleet without
 * the extension would run it, full text only; the embedded store has pgvector.
 */
export interface TestPostgres {
  url: string;
  stop(): Promise<void>;
}

/** The directory of PostgreSQL's programs (initdb, postgres), or undefined when it is not installed. */
function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const version = readdirSync(root).sort((a, b) => Number(b) - Number(a))[0];
  const bin = version && join(root, version, 'bin');
  return bin && existsSync(join(bin, 'initdb')) ? bin : undefined;
}

/**
 * Why PostgreSQL tests cannot run here, or undefined. Outside CI a machine without PostgreSQL
 * skips them with one line; in CI it is a failure (CI installs it with `npm run setup:postgres`).
 */
export function postgresProblem(): string | undefined {
  const problem = postgresBin() ? undefined : 'PostgreSQL is not installed (npm run setup:postgres)';
  if (problem && process.env.CI) throw new Error(`the PostgreSQL tests cannot run in CI: ${problem}`);
  return problem;
}

/** Starts a PostgreSQL server (as the `postgres` user when this process is root: PostgreSQL refuses root). */
export async function startPostgres(): Promise<TestPostgres> {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL is not installed (npm run setup:postgres)');
  const dir = mkdtempSync(join(tmpdir(), 'durable-agents-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const asOwner = (command: string, args: string[]): [string, string[]] =>
    process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  const init = spawnSync(
    ...asOwner(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']),
    {
      encoding: 'utf8',
    },
  );
  if (init.status !== 0) throw new Error(`initdb failed:\n${init.stdout}\n${init.stderr}`);
  const port = await freePort();
  const [command, args] = asOwner(join(bin, 'postgres'), [
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    dir,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'fsync=off',
  ]);
  const server: ChildProcess = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  server.stdout!.on('data', (d) => (log += d));
  server.stderr!.on('data', (d) => (log += d));
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const client = new Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      break;
    } catch {
      await client.end().catch(() => undefined);
      if (server.exitCode !== null || Date.now() > deadline) throw new Error(`PostgreSQL did not start:\n${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    async stop() {
      if (server.exitCode === null) {
        // pg_ctl, as the server's owner: a signal to runuser would not reach the server.
        const exited = new Promise((r) => server.once('exit', r));
        spawnSync(...asOwner(join(bin, 'pg_ctl'), ['stop', '-D', data, '-m', 'immediate']));
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
