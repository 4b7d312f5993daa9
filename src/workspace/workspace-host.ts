import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { chmod, lchown, lstat, mkdir, readdir, readFile as readBytes, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { normalizeWorkspacePath, workspaceChanges, workspaceSize, unchanged } from '../core/workspace/manifest';
import type { WorkspaceManifest } from '../core/workspace/manifest';
import type { RunWorkspace } from '../core/state/workspace-types';
import type { ToolOutcome } from '../core/messages/tool-results';
import { writeWhole, type BlobStore } from '../storage/blob-store';
import { SandboxUnavailableError, type CommandSandbox, type SandboxResult } from './sandbox';
import {
  removeUnkeptNames,
  UnkeptNameError,
  EMPTY_MANIFEST,
  loadManifest,
  makeDirs,
  restoreWorkspace,
  saveWorkspace,
  scanWorkspace,
  type ScanCache,
} from './workspace-snapshots';
import { inScope, ownStore, stateStore, workspaceScope } from './workspace-store';

/**
 * A run's workspace as a tool call sees it (`ctx.workspace`): its directory on this worker, holding
 * the committed state when the call starts, and the sandbox its commands run in. What the call
 * leaves there is saved when it ends, and committed with its result.
 */
export interface ToolWorkspace {
  /** The directory on this worker (the sandbox shows it as `/workspace`). */
  readonly dir: string;
  /**
   * A path a model or person wrote (`src/a.ts`, `./src/a.ts`, `/workspace/src/a.ts`), as a path
   * on this worker; a {@link WorkspacePathError} when it leads outside the workspace, links
   * included.
   */
  resolve(path: string): string;
  /** Runs a bash command in the sandbox, in the workspace, within its limits. */
  run(command: string, options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<SandboxResult>;
  /** Reads a file of the workspace. */
  readFile(path: string): Promise<Buffer>;
  /** Writes a file of the workspace (its directories made), whole. */
  writeFile(path: string, content: string | Uint8Array): Promise<void>;
}

/** A path that leads outside the workspace: the model's to correct. */
export class WorkspacePathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkspacePathError';
  }
}

/** Where a worker keeps its workspaces' directories unless told: a cache (the store holds the states). */
export function defaultWorkspaceRoot(env: NodeJS.ProcessEnv): string {
  return env.AGENT_WORKSPACE_DIR || join(tmpdir(), `durable-agents-workspaces-${process.getuid?.() ?? 'user'}`);
}

/**
 * A worker's workspaces: one directory per run (by workflow id), brought to a run's committed
 * state before each of its calls and saved after it. Calls of one run take turns here (the
 * workflow runs them one at a time; an attempt that outlived its time must not overlap the next).
 */
export class WorkspaceHost {
  /** The runs whose directories are here, least recently used first. */
  private readonly held = new Map<string, { manifest: WorkspaceManifest; ref?: string; cache: ScanCache }>();
  private readonly turns = new Map<string, Promise<void>>();
  private swept = false;

  constructor(
    private readonly settings: {
      root: string;
      blobs: BlobStore;
      sandbox: CommandSandbox;
      /** Who owns the workspace's files, when commands run as another user than the worker (a root worker). */
      uid?: number;
      /**
       * The most runs' directories kept (default 64): the least recently used beyond it are
       * removed. They are a cache: a run whose directory is gone is restored from the store.
       */
      keep?: number;
    },
  ) {}

  /** The sandbox commands run in. */
  get sandbox(): CommandSandbox {
    return this.settings.sandbox;
  }

  /**
   * Brings the run's directory to `workspace.ref` and runs `work` in it, then saves what changed:
   * the outcome's `workspace` (absent when nothing did). A `work` that throws saves nothing: the
   * next attempt starts from the committed state again. A state of another workflow's (a fork's or
   * rerun's start) is copied into this one's scope, changed or not, so it outlives its origin.
   */
  async use<T>(
    run: { namespace: string; workflowId: string },
    workspace: RunWorkspace,
    work: (ws: ToolWorkspace) => Promise<T>,
  ): Promise<{ value: T; saved?: ToolOutcome['workspace'] }> {
    // The workflow's scope in the store (see workspace-store.ts), also its directory's key here.
    const key = workspaceScope(run.namespace, run.workflowId);
    const previous = this.turns.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    this.turns.set(key, mine);
    await previous;
    try {
      const dir = await this.prepare(key, workspace);
      const value = await work(this.toolWorkspace(dir, workspace));
      return { value, saved: await this.save(key, dir, workspace) };
    } finally {
      release();
      if (this.turns.get(key) === mine) this.turns.delete(key);
      await this.evict();
    }
  }

  /** Removes the least recently used directories beyond `keep` (none in use), and once, those a former worker left. */
  private async evict(): Promise<void> {
    const keep = this.settings.keep ?? 64;
    for (const key of [...this.held.keys()]) {
      if (this.held.size <= keep) break;
      if (this.turns.has(key)) continue;
      this.held.delete(key);
      await rm(this.dirOf(key), { recursive: true, force: true });
    }
    if (this.swept) return;
    this.swept = true;
    // Directories of runs this process never used: a former worker's (it restarted), a day old.
    const cutoff = Date.now() - STALE_MS;
    const known = new Set([...this.held.keys()].map((k) => this.dirOf(k)));
    for (const name of await readdir(this.settings.root).catch(() => [] as string[])) {
      const dir = join(this.settings.root, name);
      if (known.has(dir)) continue;
      const st = await lstat(dir).catch(() => undefined);
      if (st?.isDirectory() && st.mtimeMs < cutoff) await rm(dir, { recursive: true, force: true });
    }
  }

  private rootChecked?: Promise<string | undefined>;

  /**
   * Whether the sandbox's user (a root worker's commands run as another) can reach the workspaces'
   * directory: every folder above it must let others pass. Checked once; else every command would
   * fail with bwrap's "Can't find source path", which reads like the command's own failure.
   */
  private rootProblem(): Promise<string | undefined> {
    const { uid, root } = this.settings;
    if (uid === undefined) return Promise.resolve(undefined);
    this.rootChecked ??= (async () => {
      for (let at = dirname(root); ; at = dirname(at)) {
        const st = await lstat(at).catch(() => undefined);
        if (st && st.uid !== uid && !(st.mode & 0o001))
          return `the sandbox's user (uid ${uid}) cannot reach the workspaces' directory ${root}: ${at} does not let others pass (chmod o+x ${at}, or set AGENT_WORKSPACE_DIR to a directory outside it)`;
        if (at === dirname(at)) return undefined;
      }
    })();
    return this.rootChecked;
  }

  private dirOf(key: string): string {
    return join(this.settings.root, createHash('sha256').update(key).digest('hex').slice(0, 32));
  }

  /** The run's directory, holding exactly its committed state. */
  private async prepare(key: string, workspace: RunWorkspace): Promise<string> {
    const dir = this.dirOf(key);
    await mkdir(this.settings.root, { recursive: true, mode: 0o711 });
    // The sandbox's user (when the worker is root) must reach its directory, and list no other.
    if (this.settings.uid !== undefined) await chmod(this.settings.root, 0o711);
    await mkdir(dir, { recursive: true });
    await chmod(dir, 0o755);
    if (this.settings.uid !== undefined) await lchown(dir, this.settings.uid, this.settings.uid);
    const held: { manifest: WorkspaceManifest; ref?: string; cache: ScanCache } = this.held.get(key) ?? {
      manifest: EMPTY_MANIFEST,
      cache: new Map(),
    };
    const manifest =
      workspace.ref === undefined
        ? EMPTY_MANIFEST
        : held.ref === workspace.ref
          ? held.manifest
          : await this.manifestOf(workspace.ref);
    // What is there now, which may be a later state, another branch's, or half of a killed command's
    // (whose files with names no state keeps go first).
    const current = await scanWorkspace(dir, held.cache).catch(async (e: unknown) => {
      if (!(e instanceof UnkeptNameError)) throw e;
      await removeUnkeptNames(dir);
      return scanWorkspace(dir, held.cache);
    });
    if (!unchanged(workspaceChanges(current, manifest))) {
      await restoreWorkspace(dir, manifest, current, this.contentsOf(workspace.ref), this.settings.uid);
      await scanWorkspace(dir, held.cache);
    }
    // Most recently used last (see evict).
    this.held.delete(key);
    this.held.set(key, { manifest, ...(workspace.ref ? { ref: workspace.ref } : {}), cache: held.cache });
    return dir;
  }

  /** The manifest of the state `ref`, from the scope it is in. */
  private manifestOf(ref: string): Promise<WorkspaceManifest> {
    const { store, manifest } = stateStore(this.settings.blobs, ref);
    return loadManifest(manifest, store);
  }

  /** The store holding the contents of the state `ref` (any, for the empty workspace). */
  private contentsOf(ref: string | undefined): BlobStore {
    return ref === undefined ? this.settings.blobs : stateStore(this.settings.blobs, ref).store;
  }

  private async save(key: string, dir: string, workspace: RunWorkspace): Promise<ToolOutcome['workspace']> {
    const held = this.held.get(key)!;
    const undo = (now: WorkspaceManifest) =>
      restoreWorkspace(dir, held.manifest, now, this.contentsOf(held.ref), this.settings.uid);
    let after: WorkspaceManifest;
    try {
      after = await scanWorkspace(dir, held.cache);
    } catch (e) {
      if (!(e instanceof UnkeptNameError)) throw e;
      await removeUnkeptNames(dir);
      await undo(await scanWorkspace(dir, held.cache));
      throw new WorkspaceRefusedError(`${e.message}; the call's changes were undone`);
    }
    const changes = workspaceChanges(held.manifest, after);
    // Started from another workflow's state: copied into this one's scope (see `use`).
    const adopting = !inScope(this.settings.blobs, held.ref, key);
    if (unchanged(changes) && !adopting) return undefined;
    const size = workspaceSize(after);
    if (size.bytes > workspace.diskMb * 1024 * 1024) {
      // Over its size: the call's changes are undone, and the model told.
      await undo(after);
      throw new WorkspaceRefusedError(
        `the workspace would hold ${(size.bytes / 1048576).toFixed(1)} MiB, more than its ${workspace.diskMb} MiB (workspace.diskMb): the call's changes were undone; remove files or write less`,
      );
    }
    const own = ownStore(this.settings.blobs, key);
    const stored = await saveWorkspace(dir, after, adopting ? EMPTY_MANIFEST : held.manifest, own.store);
    const { saved } = stored;
    const ref = own.stateRef(stored.ref);
    this.held.set(key, { manifest: saved, ref, cache: held.cache });
    return { ref, ...changes };
  }

  private toolWorkspace(dir: string, workspace: RunWorkspace): ToolWorkspace {
    const { sandbox, uid } = this.settings;
    const resolve = (path: string) => insideWorkspace(dir, path);
    return {
      dir,
      resolve,
      run: async (command, options = {}) => {
        const problem = (await sandbox.problem()) ?? (await this.rootProblem());
        if (problem) throw new SandboxUnavailableError(problem);
        return sandbox.run({
          dir,
          command,
          timeoutMs: Math.min(options.timeoutMs ?? workspace.commandTimeoutMs, workspace.commandTimeoutMs),
          network: workspace.network,
          limits: { memoryMb: workspace.memoryMb, processes: workspace.processes, fileMb: workspace.diskMb },
          ...(options.signal ? { signal: options.signal } : {}),
        });
      },
      readFile: (path) => readBytes(resolve(path)),
      async writeFile(path, content) {
        const abs = resolve(path);
        const rel = abs.slice(dir.length + 1);
        await makeDirs(dir, dirname(rel), uid);
        // Written whole and renamed into place (a new file): a file that could be run still can.
        const was = await lstat(abs).catch(() => undefined);
        await writeWhole(abs, typeof content === 'string' ? Buffer.from(content) : content);
        if (was?.isFile() && was.mode & 0o100) await chmod(abs, 0o755);
        if (uid !== undefined) await lchown(abs, uid, uid);
      },
    };
  }
}

/** How old a directory no run of this process used must be before it is removed (a day). */
const STALE_MS = 24 * 60 * 60_000;

/**
 * A call left the workspace in a state it cannot keep (over its size, a name that is not UTF-8):
 * its changes were undone, and the model is told why.
 */
export class WorkspaceRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkspaceRefusedError';
  }
}

/**
 * `path` (as a model writes it) as a path under `dir`, refusing any that leads outside: by `..`,
 * by being absolute elsewhere, or through a link that points out (the deepest part that exists is
 * resolved).
 */
export function insideWorkspace(dir: string, path: string): string {
  const rel = normalizeWorkspacePath(path);
  if (rel === undefined)
    throw new WorkspacePathError(
      `"${path}" is outside the workspace: name a path inside it, like "src/main.py" (or "/workspace/src/main.py")`,
    );
  const abs = rel === '' ? dir : join(dir, rel);
  const root = realpathSync(dir);
  let probe = abs;
  for (;;) {
    let real: string | undefined;
    try {
      real = realpathSync(probe);
    } catch {
      real = undefined;
    }
    if (real !== undefined) {
      if (real !== root && !real.startsWith(root + sep))
        throw new WorkspacePathError(`"${path}" leads outside the workspace through a link`);
      return abs;
    }
    if (probe === dir) return abs;
    probe = dirname(probe);
  }
}
