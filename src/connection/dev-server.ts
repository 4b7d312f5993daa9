import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { AGENT_SEARCH_ATTRIBUTES } from '../core/run/search-attributes';
import { connectClient } from './client-connection';
import { dataDir, findTemporalCli } from './temporal-cli';

/** A Temporal dev server this process started. */
export interface DevServer {
  address: string;
  uiUrl?: string;
  /** The guardian process's pid; the server runs as its child. */
  pid?: number;
  stop(): Promise<void>;
}

/** Options of {@link startDevServer}. */
export interface DevServerOptions {
  /** 0 (default): any free port. */
  port?: number;
  /** Serve the Web UI on this port. */
  uiPort?: number;
  /** SQLite file; in memory when absent. */
  dbFilename?: string;
  /** Where the server's own output goes (never our stdout: `--json` output must stay clean). */
  logFile?: string;
  readyTimeoutMs?: number;
  /** Server settings, e.g. `{ 'limit.historyCount.suggestContinueAsNew': 40 }` (tests force continue-as-new with it). */
  dynamicConfig?: Record<string, string | number | boolean>;
  /** Serve Prometheus metrics on this port (the bench counts requests by operation). */
  metricsPort?: number;
  /** The codec server the Web UI decodes payloads with (see `npm run codec-server`). */
  uiCodecEndpoint?: string;
}

/**
 * Server settings of the embedded dev server, besides the CLI's own defaults.
 *
 * The history service hands new workflow tasks to matching through its transfer queue, whose
 * reader may poll at most `history.transferProcessorMaxPollRPS` times a second (20 by default,
 * per shard). A cluster spreads workflows over hundreds of shards; the dev server has one, so
 * once the limiter's burst is spent every workflow task waited ~40 ms to be dispatched: most of
 * an agent step's time with a fast model (measured with `npm run bench`: 41 ms -> 2 ms per task).
 * Its SQLite store answers such polls in microseconds. The visibility reader gets the same, so
 * lists (the UI, `GET /runs`) show new runs promptly.
 */
export const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, number | boolean>> = {
  'history.transferProcessorMaxPollRPS': 1000,
  'history.visibilityProcessorMaxPollRPS': 1000,
  // Eager activity dispatch: a model call's activity goes back to the worker with the workflow
  // task's answer, saving a poll round trip before the model is asked (Temporal Cloud has it on).
  'system.enableActivityEagerExecution': true,
  // Fair shares by tenant: when a task queue backs up, tasks are dispatched by their fairness key
  // (the tenant) and its weight, not first come first served. Off by default in server 1.32; a
  // cluster needs it set too (see docs/production.md, "Tenants").
  'matching.enableFairness': true,
};

/**
 * SQLite settings of a dev server that keeps its data in a file. By default SQLite writes a
 * rollback journal and waits for the disk twice on every commit, and every workflow task, Update
 * and activity is a commit: on the engine on disk a new chat's model call started 65 ms after its
 * POST, an open chat's 36 ms. With a write-ahead log whose commits reach the operating system but
 * are synced at checkpoints, 54 and 26 ms (bench/fleet-latency.ts). A killed server loses nothing;
 * a power cut may lose its last commits, never the file, which is the trade a local server makes.
 */
export const DEV_SERVER_SQLITE_PRAGMAS: readonly string[] = ['journal_mode=wal', 'synchronous=normal'];

/**
 * Starts `temporal server start-dev` from the Temporal CLI and waits until it accepts gRPC calls.
 * We spawn it ourselves rather than through the SDK's test environment so its banner and logs go
 * to a file, and so its lifetime is tied to ours however this process ends (see GUARDIAN).
 */
export async function startDevServer(options: DevServerOptions = {}, env: NodeJS.ProcessEnv): Promise<DevServer> {
  // The CLI picks the ports of its internal services (history, matching, ...) itself, and one of
  // them is sometimes taken by the time it binds: it then exits at once with "address already in
  // use". A fresh attempt picks other ports, so such a start is tried again, up to three times.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startDevServerOnce(options, env);
    } catch (err) {
      if (!(err instanceof PortConflict) || attempt >= 3) throw err;
    }
  }
}

/** A start that failed because a port the server wanted was taken. */
class PortConflict extends Error {}

async function startDevServerOnce(options: DevServerOptions, env: NodeJS.ProcessEnv): Promise<DevServer> {
  const cli = findTemporalCli(env);
  const port = options.port || (await freePort());
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--log-level',
    'warn',
    '--namespace',
    'default',
  ];
  if (options.uiPort) args.push('--ui-port', String(options.uiPort));
  else args.push('--headless');
  if (options.uiPort && options.uiCodecEndpoint) args.push('--ui-codec-endpoint', options.uiCodecEndpoint);
  if (options.metricsPort) args.push('--metrics-port', String(options.metricsPort));
  // The agents' search attributes (AgentStatus, ...), so the UI and `client.ts list` filter on them.
  for (const [name, type] of Object.entries(AGENT_SEARCH_ATTRIBUTES))
    args.push('--search-attribute', `${name}=${type}`);
  // The eval of a run (`durable-agents eval` tags its runs with it).
  args.push('--search-attribute', 'AgentEval=Keyword');
  for (const [key, value] of Object.entries({ ...DEV_SERVER_DYNAMIC_CONFIG, ...options.dynamicConfig }))
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  if (options.dbFilename) {
    mkdirSync(dirname(options.dbFilename), { recursive: true });
    args.push('--db-filename', options.dbFilename);
    for (const pragma of DEV_SERVER_SQLITE_PRAGMAS) args.push('--sqlite-pragma', pragma);
  }
  const logFile = options.logFile ?? join(dataDir(), 'dev-server.log');
  mkdirSync(dirname(logFile), { recursive: true });
  const fd = openSync(logFile, 'a');
  const logStart = fstatSync(fd).size;
  // The guardian (see GUARDIAN) runs the server and stops it when our end of its stdin pipe closes,
  // which the kernel does whenever this process ends: a signal, a crash, SIGKILL, a closed pipe.
  // Both live in their own process group, so a terminal's Ctrl+C reaches only us: the worker
  // shuts down gracefully while the server is still up, and we stop the server afterwards.
  const child = spawn(process.execPath, ['-e', GUARDIAN, cli, ...args], { stdio: ['pipe', fd, fd], detached: true });
  closeSync(fd);
  // The server must not keep its owner alive: a worker that has stopped (Ctrl+C) lets its process
  // end, and the pipe's closing then stops the server. Only the owner's own work keeps it running.
  child.unref();
  (child.stdin as (typeof child.stdin & { unref?: () => void }) | null)?.unref?.();
  // Our normal exit closes the pipe too; this only makes the stop prompt.
  const stopOnExit = () => signalGroup(child, 'SIGTERM');
  process.once('exit', stopOnExit);
  const address = `127.0.0.1:${port}`;
  try {
    await waitUntilReady(child, address, options.readyTimeoutMs ?? 60_000, logFile);
  } catch (err) {
    signalGroup(child, 'SIGKILL');
    process.removeListener('exit', stopOnExit);
    if (child.exitCode !== null && /address already in use/.test(logSince(logFile, logStart)))
      throw new PortConflict((err as Error).message);
    throw err;
  }
  return {
    address,
    uiUrl: options.uiPort ? `http://localhost:${options.uiPort}` : undefined,
    pid: child.pid,
    stop: async () => {
      process.removeListener('exit', stopOnExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.stdin?.end(); // the guardian stops the server, waits for it, then exits
      const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * The guardian: `node -e GUARDIAN <cli> <args...>`. It starts the dev server in its own process
 * group and stops it (SIGTERM, SIGKILL after 5 s) when its stdin ends, i.e. when its owner is gone
 * or done, then exits with the server. Inline source, so it runs the same under tsx and from
 * compiled JavaScript. Hand-written because Node has no "kill my children when I die" (Linux's
 * PR_SET_PDEATHSIG) and a dev server outliving its owner is what users hit: a later start would
 * quietly reuse it.
 */
const GUARDIAN = `
process.title = 'durable-agents dev-server guardian';
const { spawn } = require('node:child_process');
const [cli, ...args] = process.argv.slice(1);
const server = spawn(cli, args, { stdio: ['ignore', 'inherit', 'inherit'] });
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  server.kill('SIGTERM');
  setTimeout(() => server.kill('SIGKILL'), 5000).unref();
};
process.stdin.on('data', () => {});
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.on('error', stop);
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.on('SIGHUP', stop);
server.on('error', (err) => { console.error(String(err)); process.exit(1); });
server.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
`;

/** Signals the guardian's whole process group (guardian and server), ignoring one already gone. */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

async function waitUntilReady(child: ChildProcess, address: string, timeoutMs: number, logFile: string): Promise<void> {
  let exited: number | null = null;
  child.once('exit', (code) => (exited = code ?? -1));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited !== null)
      throw new Error(`the Temporal dev server exited with code ${exited} during start-up; see ${logFile}`);
    try {
      const { connection, close } = await connectClient({ address, connectTimeout: 1_000 });
      try {
        await connection.workflowService.describeNamespace({ namespace: 'default' });
        return;
      } finally {
        await close();
      }
    } catch {
      if (Date.now() > deadline)
        throw new Error(`the Temporal dev server did not start within ${timeoutMs} ms; see ${logFile}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** What the server wrote to its log file from `offset` on (at most the last 64 KB). */
function logSince(logFile: string, offset: number): string {
  try {
    const text = readFileSync(logFile);
    return text.subarray(Math.max(offset, text.length - 65_536)).toString('utf8');
  } catch {
    return '';
  }
}

/** A free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}
