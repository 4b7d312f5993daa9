import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const ROOT = join(__dirname, '..', '..');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');

/** The test process's environment without any Temporal or OpenAI settings, plus `extra`. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(TEMPORAL_|OPENAI_|AGENT_)/.test(k) || k === 'TEMPORAL_CLI_PATH') env[k] = v;
  }
  return { ...env, ...extra };
}

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a TypeScript entry point (or npm script) to completion. */
export function runTs(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<Finished> {
  return finish(spawn(TSX, args, { cwd: ROOT, env }), timeoutMs);
}

export function runNpm(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 90_000): Promise<Finished> {
  return finish(spawn('npm', args, { cwd: ROOT, env }), timeoutMs);
}

function finish(child: ChildProcess, timeoutMs: number): Promise<Finished> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

/** Starts a long-running TypeScript entry point and resolves once its stdout matches `ready`. */
export function startTs(args: string[], env: NodeJS.ProcessEnv, ready: RegExp, timeoutMs = 60_000): Promise<{ child: ChildProcess; output: () => string; exited: Promise<Finished> }> {
  const child = spawn(TSX, args, { cwd: ROOT, env });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<Finished>((resolve) => child.on('close', (code) => resolve({ code, stdout: out, stderr: err })));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`not ready in ${timeoutMs} ms:\n${out}\n${err}`));
    }, timeoutMs);
    const check = () => {
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve({ child, output: () => out, exited });
      }
    };
    child.stdout!.on('data', check);
    void exited.then((f) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${f.code} before ready:\n${f.stdout}\n${f.stderr}`));
    });
  });
}
