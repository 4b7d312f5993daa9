import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, closeSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { Connection } from '@temporalio/client';
import { findTemporalCli, PROJECT_ROOT } from './temporal-cli';

/** A Temporal dev server this process started. */
export interface DevServer {
  address: string;
  uiUrl?: string;
  stop(): Promise<void>;
}

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
}

/**
 * Starts `temporal server start-dev` from the Temporal CLI and waits until it accepts gRPC calls.
 * We spawn it ourselves rather than through the SDK's test environment so its banner and logs go
 * to a file, and so its lifetime is tied to ours.
 */
export async function startDevServer(options: DevServerOptions = {}, env: NodeJS.ProcessEnv = process.env): Promise<DevServer> {
  const cli = findTemporalCli(env);
  const port = options.port || (await freePort());
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'warn', '--namespace', 'default'];
  if (options.uiPort) args.push('--ui-port', String(options.uiPort));
  else args.push('--headless');
  for (const [key, value] of Object.entries(options.dynamicConfig ?? {})) args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  if (options.dbFilename) {
    mkdirSync(dirname(options.dbFilename), { recursive: true });
    args.push('--db-filename', options.dbFilename);
  }
  const logFile = options.logFile ?? join(PROJECT_ROOT, '.temporal', 'dev-server.log');
  mkdirSync(dirname(logFile), { recursive: true });
  const fd = openSync(logFile, 'a');
  // Its own process group: a terminal's Ctrl+C reaches only us, so the worker can shut down
  // gracefully while the server is still up, and we stop the server afterwards.
  const child = spawn(cli, args, { stdio: ['ignore', fd, fd], detached: true });
  closeSync(fd);
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const address = `127.0.0.1:${port}`;
  try {
    await waitUntilReady(child, address, options.readyTimeoutMs ?? 60_000, logFile);
  } catch (err) {
    child.kill('SIGKILL');
    process.removeListener('exit', killOnExit);
    throw err;
  }
  return {
    address,
    uiUrl: options.uiPort ? `http://localhost:${options.uiPort}` : undefined,
    stop: async () => {
      process.removeListener('exit', killOnExit);
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function waitUntilReady(child: ChildProcess, address: string, timeoutMs: number, logFile: string): Promise<void> {
  let exited: number | null = null;
  child.once('exit', (code) => (exited = code ?? -1));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited !== null) throw new Error(`the Temporal dev server exited with code ${exited} during start-up; see ${logFile}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await connection.workflowService.describeNamespace({ namespace: 'default' });
        return;
      } finally {
        await connection.close();
      }
    } catch {
      if (Date.now() > deadline) throw new Error(`the Temporal dev server did not start within ${timeoutMs} ms; see ${logFile}`);
      await new Promise((r) => setTimeout(r, 250));
    }
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
