import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { createConnection, createServer as createNetServer } from 'node:net';
import { freePort } from '../../src/connection/dev-server';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export const ROOT = join(__dirname, '..', '..');
/**
 * TypeScript entry points run as `node <program>`: one process, so a signal reaches the program
 * itself. (The `tsx` command runs it in a child and SIGKILLs that child when it does not
 * acknowledge a relayed signal within 30 ms, which a busy machine misses.) A program of this
 * repository runs bundled (see {@link programOf}); one elsewhere (a user's project) through tsx.
 */
function spawnTs(args: string[], env: NodeJS.ProcessEnv, cwd = ROOT): ChildProcess {
  // Its own process group, as in a terminal, so a signal can reach everything it started.
  return spawn(process.execPath, nodeArgs(args, cwd), { cwd, env, detached: true });
}

/**
 * Node's arguments to run a TypeScript entry point (`args[0]`, relative to `cwd`) with `args`:
 * bundled when it is this repository's (see {@link programOf}), else through tsx (by path: from
 * another directory, a project of a user's, `--import tsx` would not resolve).
 */
export function nodeArgs(args: string[], cwd = ROOT): string[] {
  const [entry, ...rest] = args;
  const bundled = programOf(resolve(cwd, entry));
  return bundled ? [bundled, ...rest] : ['--import', TSX, ...args];
}

/** tsx's loader, as a URL `--import` takes from any directory. */
const TSX = pathToFileURL(join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;

/**
 * A program of this repository bundled into one file (test/helpers/bundle-program.js says why),
 * once per test run and program; undefined for one outside the repository, or with
 * `TEST_PROGRAMS_TSX=1` (stack traces then name the sources).
 */
function programOf(entry: string): string | undefined {
  if (process.env.TEST_PROGRAMS_TSX === '1' || relative(ROOT, entry).startsWith('..') || !entry.endsWith('.ts'))
    return undefined;
  const dir = (process.env.TEST_PROGRAM_DIR ??= programsDir());
  const out = join(dir, `${relative(ROOT, entry).replace(/[/\\]/g, '__')}.cjs`);
  if (existsSync(out)) return out;
  const built = spawnSync(process.execPath, [join(__dirname, 'bundle-program.js'), entry, out], { encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`could not bundle ${entry}:\n${built.stderr}`);
  return out;
}

/**
 * A directory for one test run's bundled programs. Under node_modules, so the packages they
 * `require` resolve as from the sources; the global setup makes it, the teardown removes it.
 */
export function programsDir(): string {
  const cache = join(ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  return mkdtempSync(join(cache, 'test-programs-'));
}

/** The test process's environment without any Temporal or OpenAI settings, plus `extra`. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    // The test run's own stores and fleet queue (global setup) stay: children never write to the
    // home or working directory, nor serve another run's ledgers.
    const kept = ['TEMPORAL_CLI_PATH', 'AGENT_BLOB_DIR', 'AGENT_PAYLOAD_STORE', 'AGENT_FLEET_TASK_QUEUE'];
    if (!/^(TEMPORAL_|OPENAI_|AGENT_)/.test(k) || kept.includes(k)) env[k] = v;
  }
  return { ...env, ...extra };
}

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a TypeScript entry point to completion (in `cwd`, default this repository). */
export function runTs(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000, cwd = ROOT): Promise<Finished> {
  return finish(spawnTs(args, env, cwd), timeoutMs);
}

export function runNpm(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 90_000): Promise<Finished> {
  return finish(spawn('npm', args, { cwd: ROOT, env, detached: true }), timeoutMs);
}

function finish(child: ChildProcess, timeoutMs: number): Promise<Finished> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  // The whole group: npm and tsx run the program in child processes.
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

/** A long-running process started by {@link startTs}. */
export interface Started {
  child: ChildProcess;
  /** What it wrote to stdout so far. */
  output: () => string;
  /** What it wrote to stderr so far (warnings). */
  errors: () => string;
  exited: Promise<Finished>;
  /**
   * Signals the whole process group: tsx runs the program in a child process, so signalling only
   * tsx would leave that child behind when the signal is SIGKILL.
   */
  kill(signal: NodeJS.Signals): void;
}

/** Starts a long-running TypeScript entry point (in its own process group) and resolves once its stdout or stderr matches `ready`. */
export function startTs(args: string[], env: NodeJS.ProcessEnv, ready: RegExp, timeoutMs = 60_000): Promise<Started> {
  const child = spawnTs(args, env);
  const kill = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
  };
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<Finished>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout: out, stderr: err })),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      kill('SIGKILL');
      reject(new Error(`not ready in ${timeoutMs} ms:\n${out}\n${err}`));
    }, timeoutMs);
    const check = () => {
      if (ready.test(out) || ready.test(err)) {
        clearTimeout(timer);
        resolve({ child, output: () => out, errors: () => err, exited, kill });
      }
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    void exited.then((f) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${f.code} before ready:\n${f.stdout}\n${f.stderr}`));
    });
  });
}

/** A command running in its own process group, as in a terminal: Ctrl+C goes to the whole group. */
export interface Interactive {
  child: ChildProcess;
  /** Everything written so far, stdout and stderr interleaved. */
  output(): string;
  /** Waits until the output matches (or `timeoutMs` passes, then fails with the output). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  write(line: string): void;
  /** Ctrl+C: SIGINT to the process group. */
  interrupt(): void;
  exited: Promise<Finished>;
  /** Resolves when the command exits; fails with the output so far if it has not within `timeoutMs`. */
  exitedWithin(timeoutMs: number): Promise<Finished>;
}

export function startInteractive(args: string[], env: NodeJS.ProcessEnv): Interactive {
  const child = spawnTs(args, env);
  let out = '';
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => ((out += d), (stdout += d)));
  child.stderr!.on('data', (d) => ((out += d), (stderr += d)));
  const exited = new Promise<Finished>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return {
    child,
    output: () => out,
    waitFor: async (pattern, timeoutMs = 60_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(out) && Date.now() < deadline && child.exitCode === null)
        await new Promise((r) => setTimeout(r, 100));
      if (!pattern.test(out)) throw new Error(`output never matched ${pattern}:\n${out}`);
    },
    write: (line) => child.stdin!.write(`${line}\n`),
    interrupt: () => process.kill(-child.pid!, 'SIGINT'),
    exited,
    exitedWithin: (timeoutMs) =>
      new Promise<Finished>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`still running after ${timeoutMs} ms:\n${out}`)), timeoutMs);
        void exited.then((f) => (clearTimeout(timer), resolve(f)));
      }),
  };
}

/** Whether something accepts TCP connections on the loopback port. */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Polls `check` until it holds, for up to `timeoutMs`; returns whether it did. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * A port for an embedded dev server: free, and its Web UI's (port + 1000) free too. A port that
 * only `freePort` checked can clash on the UI's, failing the server's start now and then.
 */
export async function devServerPort(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 1000 > 65535) continue;
    const uiFree = await new Promise<boolean>((resolve) => {
      const probe = createNetServer();
      probe.once('error', () => resolve(false));
      probe.listen(port + 1000, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (uiFree) return port;
  }
}
