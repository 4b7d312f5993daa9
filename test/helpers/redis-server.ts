import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { freePort } from '../../src/connection/dev-server';
import { eventually, listening } from './processes';

/**
 * A real Redis server for the live channel's tests: Debian's (`npm run setup:redis` installs it),
 * on a free loopback port, with nothing kept on disk; stopped (or killed, for the fault tests) by
 * the test, and started again on the same port.
 */
export interface TestRedis {
  url: string;
  port: number;
  /** Kills it outright (SIGKILL), as a crash would. */
  kill(): Promise<void>;
  /** Starts it again on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Why the Redis tests cannot run here, or undefined. Outside CI a machine without Redis skips
 * them with one line; in CI it is a failure (CI installs it with `npm run setup:redis`).
 */
export function redisProblem(): string | undefined {
  const found = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  const problem = found.status === 0 ? undefined : 'Redis is not installed (npm run setup:redis)';
  if (problem && process.env.CI) throw new Error(`the Redis tests cannot run in CI: ${problem}`);
  return problem;
}

/** Starts a Redis server on a free port (`start: false`: only chooses the port; `restart` starts it). */
export async function startRedis(options: { start?: boolean } = {}): Promise<TestRedis> {
  const port = await freePort();
  let server: ChildProcess | undefined;
  const start = async () => {
    server = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
      { stdio: 'ignore' },
    );
    if (!(await eventually(() => listening(port), 20_000))) throw new Error(`redis-server did not listen on ${port}`);
  };
  const kill = async () => {
    const s = server;
    if (!s || s.exitCode !== null || s.signalCode !== null) return;
    const exited = new Promise((r) => s.once('exit', r));
    s.kill('SIGKILL');
    await exited;
  };
  if (options.start !== false) await start();
  return { url: `redis://127.0.0.1:${port}`, port, kill, restart: start, stop: kill };
}
