import { lstat, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { dirname, join, posix } from 'node:path';
import type { CommandSandbox, SandboxCommand, SandboxResult } from './sandbox';
import { MAX_OUTPUT_BYTES } from './sandbox';
import { scanWorkspace } from './workspace-snapshots';

/**
 * The part of the AI SDK's sandbox session (`Experimental_SandboxSession` of `ai` 7: just-bash,
 * Vercel Sandbox, E2B, ...) that workspaces use: run a command, read and write a file. Declared
 * here, structurally, so the package does not need `ai` installed; sessions of every version
 * have these (listing and deleting are done with commands: older sessions lack those methods).
 */
export interface AiSdkSandboxSession {
  readonly description: string;
  run(options: {
    command: string;
    workingDirectory?: string;
    env?: Record<string, string>;
    abortSignal?: AbortSignal;
  }): PromiseLike<{ exitCode: number; stdout: string; stderr: string }>;
  readBinaryFile(options: { path: string }): PromiseLike<Uint8Array | null>;
  writeBinaryFile(options: { path: string; content: Uint8Array }): PromiseLike<void>;
}

/**
 * Workspaces' commands in an AI SDK sandbox session, so a team keeps the sandbox it uses. The
 * worker's directory stays the workspace's truth (what is committed and restored); around each
 * command the sandbox is brought to it (files whose hash differs are written, files it lacks are
 * deleted) and what the command changed is brought back (only files whose hash changed are
 * read). Hashes come from one `sha256sum` over the sandbox's directory. A session that failed (an
 * idle sandbox stopped, a restart) is replaced by a new one from `open`, which is given the whole
 * workspace: the work is never the sandbox's to lose.
 *
 * `open` as a function opens **a session per workspace** (per run or conversation): one run's
 * commands cannot read another's files, whoever's runs they are. The worker keeps the `sessions`
 * it used last (default 16) and lets older ones go (calling their `stop`, `close` or
 * `Symbol.asyncDispose`, when they have one); a run whose session went gets a new one. A session
 * object given instead is shared by every run of the worker, each in a directory of its own
 * under `root` (default `workspaces` under the session's base directory), which its commands can
 * leave: only for runs that may see each other's work.
 */
export function aiSdkSandbox(
  open: AiSdkSandboxSession | (() => AiSdkSandboxSession | PromiseLike<AiSdkSandboxSession>),
  options: { root?: string; name?: string; sessions?: number } = {},
): CommandSandbox {
  type Opened = Promise<{ s: AiSdkSandboxSession; base: string }>;
  const perWorkspace = typeof open === 'function';
  const opened = new Map<string, Opened>();
  const fresh = (key: string): Opened => {
    const session = Promise.resolve(typeof open === 'function' ? open() : open).then(async (s) => {
      // Paths are made absolute from the session's base directory: sessions differ on relative ones.
      const pwd = await s.run({ command: 'pwd' });
      return { s, base: pwd.stdout.trim() || '/' };
    });
    session.catch(() => undefined); // awaited by the command that asked for it
    opened.set(key, session);
    return session;
  };
  // Most recently used last; beyond the limit the oldest sessions go.
  const take = (key: string): Opened => {
    const session = opened.get(key) ?? fresh(key);
    opened.delete(key);
    opened.set(key, session);
    for (const [old, gone] of opened) {
      if (opened.size <= (options.sessions ?? 16)) break;
      opened.delete(old);
      void gone.then(({ s }) => stopSession(s)).catch(() => undefined);
    }
    return session;
  };
  return {
    name: options.name ?? 'ai-sdk',
    problem: async () => undefined,
    async run(cmd: SandboxCommand): Promise<SandboxResult> {
      if (cmd.network.length)
        return refused(
          'this sandbox takes its network rules from its provider: workspace.network applies to the bubblewrap sandbox only',
        );
      const key = perWorkspace ? cmd.dir : '';
      for (let attempt = 1; ; attempt++) {
        const { s, base } = await take(key);
        const remote = posix.join(
          posix.resolve(base, options.root ?? 'workspaces'),
          createHash('sha256').update(cmd.dir).digest('hex').slice(0, 16),
        );
        try {
          const local = await localFiles(cmd.dir);
          await syncIn(s, cmd.dir, remote, local);
          const result = await runWithin(s, cmd, remote);
          await syncOut(s, cmd.dir, remote, local);
          return result;
        } catch (e) {
          // The session is gone (an idle sandbox stopped, say): a new one gets the whole workspace.
          if (attempt >= 2 || cmd.signal?.aborted) throw e;
          void fresh(key);
        }
      }
    },
  };
}

/** Lets a session go, by whichever of the usual methods it has. */
async function stopSession(s: AiSdkSandboxSession): Promise<void> {
  const session = s as unknown as Record<string | symbol, unknown>;
  for (const name of ['stop', 'close', Symbol.asyncDispose]) {
    const method = session[name];
    if (typeof method === 'function') {
      await (method as () => unknown).call(s);
      return;
    }
  }
}

function refused(message: string): SandboxResult {
  return { exitCode: 126, stdout: '', stderr: `${message}\n` };
}

async function runWithin(s: AiSdkSandboxSession, cmd: SandboxCommand, remote: string): Promise<SandboxResult> {
  const abort = new AbortController();
  const onAbort = () => abort.abort();
  cmd.signal?.addEventListener('abort', onAbort, { once: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, cmd.timeoutMs);
  try {
    const r = await s.run({ command: `cd ${quoted(remote)} && ${cmd.command}`, abortSignal: abort.signal });
    return { exitCode: r.exitCode, stdout: cut(r.stdout), stderr: cut(r.stderr) };
  } catch (e) {
    if (timedOut) return { exitCode: null, stdout: '', stderr: '', timedOut: true };
    throw e;
  } finally {
    clearTimeout(timer);
    cmd.signal?.removeEventListener('abort', onAbort);
  }
}

function cut(text: string): string {
  return text.length > MAX_OUTPUT_BYTES ? `${text.slice(0, MAX_OUTPUT_BYTES)}\n[... output cut ...]` : text;
}

function quoted(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}

/** The local directory's files (path → content hash), by the same scan saves use; links are not given to remote sandboxes. */
async function localFiles(dir: string): Promise<Map<string, string>> {
  const { files } = await scanWorkspace(dir, new Map());
  return new Map(files.filter((f) => f.link === undefined).map((f) => [f.path, f.hash]));
}

/** The sandbox directory's files (path → content hash), from one command. */
async function remoteFiles(s: AiSdkSandboxSession, remote: string): Promise<Map<string, string>> {
  const r = await s.run({
    command: `mkdir -p ${quoted(remote)} && cd ${quoted(remote)} && find . -type f -print0 | xargs -0 -r sha256sum`,
  });
  if (r.exitCode !== 0) throw new Error(`the sandbox could not list the workspace: ${r.stderr.trim()}`);
  const out = new Map<string, string>();
  for (const line of r.stdout.split('\n')) {
    const m = /^([0-9a-f]{64}) [ *]\.\/(.+)$/.exec(line);
    if (m) out.set(m[2], m[1]);
  }
  return out;
}

/** Brings the sandbox's directory to the local one: writes what differs, deletes what it lacks. */
async function syncIn(s: AiSdkSandboxSession, dir: string, remote: string, local: Map<string, string>): Promise<void> {
  const there = await remoteFiles(s, remote);
  for (const [path, hash] of local)
    if (there.get(path) !== hash)
      await s.writeBinaryFile({ path: posix.join(remote, path), content: await readFile(join(dir, path)) });
  const stale = [...there.keys()].filter((p) => !local.has(p));
  if (stale.length) await s.run({ command: `cd ${quoted(remote)} && rm -f -- ${stale.map(quoted).join(' ')}` });
}

/** Brings what the command changed back to the local directory. */
async function syncOut(
  s: AiSdkSandboxSession,
  dir: string,
  remote: string,
  before: Map<string, string>,
): Promise<void> {
  const after = await remoteFiles(s, remote);
  for (const [path, hash] of after) {
    if (before.get(path) === hash) continue;
    const bytes = await s.readBinaryFile({ path: posix.join(remote, path) });
    if (!bytes) continue;
    const abs = join(dir, path);
    await mkdir(dirname(abs), { recursive: true });
    if ((await lstat(abs).catch(() => undefined))?.isDirectory()) await rm(abs, { recursive: true });
    await writeFile(abs, bytes);
  }
  for (const path of before.keys()) if (!after.has(path)) await rm(join(dir, path), { force: true });
}
