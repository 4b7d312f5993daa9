import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A Python venv the tests made, with the packages a test asked for. */
export interface PythonVenv {
  /** The venv's `python`. */
  python: string;
  /** The venv's folder. */
  dir: string;
}

/**
 * Why the Python peers cannot run here, or undefined when they can. Outside CI a machine without
 * Python 3.10+ (or without `venv`) skips them with one line; in CI (`CI` set) it is a failure,
 * as the issue asked: the peers never silently drop out of `.ci/run`.
 */
export async function pythonProblem(): Promise<string | undefined> {
  try {
    const { stdout } = await run('python3', ['-c', 'import sys, venv; print("%d.%d" % sys.version_info[:2])']);
    const [major, minor] = stdout.trim().split('.').map(Number);
    if (major < 3 || (major === 3 && minor < 10)) return `python3 is ${stdout.trim()}; the Python peers need 3.10+`;
    return undefined;
  } catch (err) {
    return `no python3 with venv (${(err as Error).message.split('\n')[0]})`;
  }
}

/**
 * A venv with `packages` (pip requirement strings) installed from PyPI, made once per set of
 * packages and kept in `~/.cache/durable-agents/venvs/<hash>` (a fresh clone on the same machine,
 * as CI is, reuses it; a half-made one is made again). Concurrent test files asking for the same
 * set wait for one another through a lock directory.
 */
export async function pythonVenv(name: string, packages: string[], timeoutMs = 300_000): Promise<PythonVenv> {
  const hash = createHash('sha256').update(packages.join('\n')).digest('hex').slice(0, 12);
  const root = process.env.DURABLE_AGENTS_VENVS ?? join(homedir(), '.cache', 'durable-agents', 'venvs');
  const dir = join(root, `${name}-${hash}`);
  const python = join(dir, 'bin', 'python');
  const done = join(dir, '.complete');
  if (existsSync(done)) return { python, dir };
  mkdirSync(root, { recursive: true });
  const lock = `${dir}.lock`;
  const deadline = Date.now() + timeoutMs;
  // mkdir is atomic: whoever makes the lock builds the venv; the others wait for `.complete`.
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (existsSync(done)) return { python, dir };
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lock} (remove it if no test is running)`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  try {
    if (existsSync(done)) return { python, dir };
    rmSync(dir, { recursive: true, force: true });
    await run('python3', ['-m', 'venv', dir], { timeout: 60_000 });
    try {
      await run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...packages], {
        timeout: timeoutMs,
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`pip install ${packages.join(' ')} failed: ${(e.stderr ?? e.message).slice(-2000)}`);
    }
    writeFileSync(done, `${packages.join('\n')}\n`);
    return { python, dir };
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * Whether a Python peer test runs: undefined when it does; otherwise the reason, which outside CI
 * the test prints in one line and skips on, and which in CI fails the test (see {@link pythonProblem}).
 */
export async function pythonPeersProblem(extra?: () => string | undefined): Promise<string | undefined> {
  const problem = (await pythonProblem()) ?? extra?.();
  if (problem && process.env.CI) throw new Error(`the Python peer tests cannot run in CI: ${problem}`);
  return problem;
}
