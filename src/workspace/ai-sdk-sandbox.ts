import { lstat, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { dirname, join, posix } from 'node:path';
import type { CommandSandbox, SandboxCommand, SandboxResult } from './sandbox';
import { MAX_OUTPUT_BYTES } from './sandbox';

/**
 * The part of the AI SDK's sandbox session (`Experimental_SandboxSession` of `ai` 7: just-bash,
 * Vercel Sandbox, E2B, ...) that workspaces use: run a command, read, write, list and delete
 * files. Declared here, structurally, so the package does not need `ai` to be installed.
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
  listDirectory(options: {
    path: string;
  }): PromiseLike<Array<{ name: string; type: 'file' | 'directory' | 'symlink' | 'other' }> | null>;
  deleteFile(options: { path: string }): PromiseLike<boolean>;
}

/**
 * Workspaces' commands in an AI SDK sandbox session, so a team keeps the sandbox it uses. The
 * worker's directory stays the workspace's truth (what is committed and restored); around each
 * command the sandbox is brought to it (only files that differ from what it was last given are
 * written, what is gone is deleted) and what the command changed is brought back (each file
 * read and compared). A session that died (an idle timeout, a restart) is replaced by a new one
 * from `open` and given the whole workspace: the work is never the sandbox's to lose.
 *
 * `root`: the directory in the sandbox the workspaces live under (default `workspaces`, relative
 * to the session's base directory); each run's is a directory of its own there.
 */
export function aiSdkSandbox(
  open: AiSdkSandboxSession | (() => AiSdkSandboxSession | PromiseLike<AiSdkSandboxSession>),
  options: { root?: string; name?: string } = {},
): CommandSandbox {
  let session: Promise<AiSdkSandboxSession> | undefined;
  const fresh = () => (session = Promise.resolve(typeof open === 'function' ? open() : open));
  // What each workspace's directory in the sandbox holds, as this worker last left it (path → hash).
  const given = new Map<string, Map<string, string>>();
  const root = options.root ?? 'workspaces';
  return {
    name: options.name ?? 'ai-sdk',
    problem: async () => undefined,
    async run(cmd: SandboxCommand): Promise<SandboxResult> {
      if (cmd.network.length)
        return refused(
          'this sandbox takes its network rules from its provider: workspace.network applies to the bubblewrap sandbox only',
        );
      const remote = posix.join(root, createHash('sha256').update(cmd.dir).digest('hex').slice(0, 16));
      for (let attempt = 1; ; attempt++) {
        const s = await (session ?? fresh());
        try {
          const before = await syncIn(s, cmd.dir, remote, given.get(cmd.dir));
          const result = await runWithin(s, cmd, remote);
          given.set(cmd.dir, await syncOut(s, cmd.dir, remote, before));
          return result;
        } catch (e) {
          // The session is gone (an idle sandbox stopped, say): a new one gets the whole workspace.
          given.delete(cmd.dir);
          if (attempt >= 2 || cmd.signal?.aborted) throw e;
          void fresh();
        }
      }
    },
  };
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
    const r = await s.run({ command: cmd.command, workingDirectory: remote, abortSignal: abort.signal });
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

/** The local directory's files (path → content hash); links are not given to remote sandboxes. */
async function localFiles(dir: string): Promise<Map<string, { hash: string; abs: string }>> {
  const out = new Map<string, { hash: string; abs: string }>();
  const walk = async (rel: string) => {
    for (const e of await readdir(join(dir, rel), { withFileTypes: true }).catch(() => [])) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(path);
      else if (e.isFile()) {
        const abs = join(dir, path);
        out.set(path, {
          hash: createHash('sha256')
            .update(await readFile(abs))
            .digest('hex'),
          abs,
        });
      }
    }
  };
  await walk('');
  return out;
}

/** Brings the sandbox's directory to the local one; answers what it holds then. */
async function syncIn(
  s: AiSdkSandboxSession,
  dir: string,
  remote: string,
  known: Map<string, string> | undefined,
): Promise<Map<string, string>> {
  const local = await localFiles(dir);
  const there = known ?? (await remoteFiles(s, remote));
  for (const [path, f] of local)
    if (there.get(path) !== f.hash)
      await s.writeBinaryFile({ path: posix.join(remote, path), content: await readFile(f.abs) });
  for (const path of there.keys()) if (!local.has(path)) await s.deleteFile({ path: posix.join(remote, path) });
  // An empty workspace still needs its directory for the command to start in.
  if (!local.size) await s.run({ command: `mkdir -p '${remote.replace(/'/g, "'\\''")}'` });
  return new Map([...local].map(([p, f]) => [p, f.hash]));
}

/** Brings what the command changed back to the local directory; answers what the sandbox holds. */
async function syncOut(
  s: AiSdkSandboxSession,
  dir: string,
  remote: string,
  before: Map<string, string>,
): Promise<Map<string, string>> {
  const after = new Map<string, string>();
  const walk = async (rel: string) => {
    const entries = await s.listDirectory({ path: rel ? posix.join(remote, rel) : remote });
    for (const e of entries ?? []) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (e.type === 'directory') await walk(path);
      else if (e.type === 'file') {
        const bytes = await s.readBinaryFile({ path: posix.join(remote, path) });
        if (!bytes) continue;
        const hash = createHash('sha256').update(bytes).digest('hex');
        after.set(path, hash);
        if (before.get(path) !== hash) {
          const abs = join(dir, path);
          await mkdir(dirname(abs), { recursive: true });
          if ((await lstat(abs).catch(() => undefined))?.isDirectory()) await rm(abs, { recursive: true });
          await writeFile(abs, bytes);
        }
      }
    }
  };
  await walk('');
  for (const path of before.keys()) if (!after.has(path)) await rm(join(dir, path), { force: true });
  return after;
}

async function remoteFiles(s: AiSdkSandboxSession, remote: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (rel: string) => {
    const entries = await s.listDirectory({ path: rel ? posix.join(remote, rel) : remote }).then(
      (x) => x,
      () => null,
    );
    for (const e of entries ?? []) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (e.type === 'directory') await walk(path);
      else if (e.type === 'file') {
        const bytes = await s.readBinaryFile({ path: posix.join(remote, path) });
        if (bytes) out.set(path, createHash('sha256').update(bytes).digest('hex'));
      }
    }
  };
  await walk('');
  return out;
}
