/**
 * A workspace's state as a run records it: a manifest of its files by content hash. The files'
 * contents are stored once each, by hash (content-addressed), so a state that changes one file of
 * many stores that file and a new manifest, and two states that share files share their contents.
 * The manifest is what a tool result commits with it (by reference) and what a fork, a rerun or
 * the next attempt restores. Pure: the worker side reads and writes the files.
 */

/** The manifest's format: a newer one is refused by name, never misread. */
export const WORKSPACE_MANIFEST_VERSION = 1;

/** One file of a workspace state. */
export interface WorkspaceFile {
  /** Its path inside the workspace: relative, `/`-separated, normalised (see {@link keptPathProblem}). */
  path: string;
  /** The SHA-256 of its content, in hex: the key its content is stored under. */
  hash: string;
  size: number;
  /** Whether it may be run (the owner's execute bit); the only mode kept. */
  executable?: boolean;
  /** A symbolic link: where it points (`hash` and `size` are those of this text). */
  link?: string;
  /**
   * The store's reference of its content, when it is not `sha256:<hash>`: a store that encrypts
   * names the encrypted bytes (each copy differently).
   */
  blob?: string;
}

/** A workspace state: its files, sorted by path. Directories are implied by their files. */
export interface WorkspaceManifest {
  version: typeof WORKSPACE_MANIFEST_VERSION;
  files: WorkspaceFile[];
}

/** What changed from one state to the next, by path (each list sorted). */
export interface WorkspaceChanges {
  added: string[];
  changed: string[];
  removed: string[];
}

/** The longest path a workspace file may have, in characters (Linux's PATH_MAX less the root). */
export const MAX_WORKSPACE_PATH = 4000;

/**
 * What is wrong with `path` as a path inside a workspace, or undefined when it is one: relative,
 * `/`-separated, without `.` or `..` segments, empty segments, NUL or control characters. Tools
 * and people name files this way; {@link normalizeWorkspacePath} turns what a model writes into it.
 */
export function workspacePathProblem(path: string): string | undefined {
  if (/[\u0000-\u001f\u007f]/.test(path)) return `"${printable(path)}" contains a control character`;
  if (path.includes('\\')) return `"${path}" uses "\\": workspace paths use "/"`;
  return keptPathProblem(path);
}

/**
 * What is wrong with `path` as the path of a file a workspace state keeps, or undefined. Laxer
 * than {@link workspacePathProblem}, which is for paths tools and people name: a command may make
 * any name Linux allows (a `\`, a newline), and the state must keep that file rather than lose it.
 * What stays refused is what could lead a restore outside the workspace.
 */
export function keptPathProblem(path: string): string | undefined {
  if (path === '') return 'a workspace path must not be empty';
  if (path.length > MAX_WORKSPACE_PATH) return `a workspace path must be at most ${MAX_WORKSPACE_PATH} characters`;
  if (path.includes('\u0000')) return `"${printable(path)}" contains NUL`;
  if (path.startsWith('/'))
    return `"${printable(path)}" is absolute: name a path inside the workspace, like "src/index.ts"`;
  const segments = path.split('/');
  if (segments.some((s) => s === '..')) return `"${printable(path)}" leads outside the workspace ("..")`;
  if (segments.some((s) => s === '' || s === '.'))
    return `"${printable(path)}" is not normalised (empty or "." segments)`;
  return undefined;
}

/**
 * A path a model or person wrote, as the workspace names it: `./a//b/` → `a/b`, `/workspace/a`
 * (the directory the sandbox shows) → `a`, `a/../b` → `b`. Undefined when it leads outside the
 * workspace or is not a path at all: the caller says so to the model, which can correct it.
 * `""` and `"."` name the workspace itself (returned as `""`).
 */
export function normalizeWorkspacePath(path: string, root = '/workspace'): string | undefined {
  let rest = path.trim();
  if (rest === root || rest.startsWith(`${root}/`)) rest = rest.slice(root.length);
  else if (rest.startsWith('/')) return undefined;
  const out: string[] = [];
  for (const segment of rest.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (out.length === 0) return undefined;
      out.pop();
    } else out.push(segment);
  }
  const normal = out.join('/');
  return normal === '' || workspacePathProblem(normal) === undefined ? normal : undefined;
}

/** A manifest of `files`, sorted by path; a path given twice is refused (the caller has two states). */
export function workspaceManifest(files: WorkspaceFile[]): WorkspaceManifest {
  const sorted = [...files].sort((a, b) => compare(a.path, b.path));
  for (let i = 1; i < sorted.length; i++)
    if (sorted[i].path === sorted[i - 1].path) throw new Error(`the workspace lists "${sorted[i].path}" twice`);
  return { version: WORKSPACE_MANIFEST_VERSION, files: sorted };
}

/** What is wrong with `value` as a stored manifest, or undefined when it is one this build reads. */
export function manifestProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'a workspace manifest must be an object';
  const m = value as Partial<WorkspaceManifest>;
  if (typeof m.version === 'number' && m.version > WORKSPACE_MANIFEST_VERSION)
    return `the workspace manifest is version ${m.version}, newer than this build reads (${WORKSPACE_MANIFEST_VERSION}): run it on a worker of the build that wrote it`;
  if (m.version !== WORKSPACE_MANIFEST_VERSION) return 'the workspace manifest has no known version';
  if (!Array.isArray(m.files)) return 'the workspace manifest has no files list';
  for (const [i, f] of m.files.entries()) {
    const file = f as Partial<WorkspaceFile>;
    if (typeof file?.path !== 'string') return `file ${i} of the workspace manifest has no path`;
    const pathProblem = keptPathProblem(file.path);
    if (pathProblem) return `file ${i} of the workspace manifest: ${pathProblem}`;
    if (typeof file.hash !== 'string' || !/^[0-9a-f]{64}$/.test(file.hash))
      return `"${file.path}" in the workspace manifest has no SHA-256 hash`;
    if (!Number.isSafeInteger(file.size) || (file.size as number) < 0)
      return `"${file.path}" in the workspace manifest has no size`;
    if (file.link !== undefined && typeof file.link !== 'string')
      return `"${file.path}" in the workspace manifest has a link that is not text`;
    if (file.blob !== undefined && typeof file.blob !== 'string')
      return `"${file.path}" in the workspace manifest has a blob reference that is not text`;
    if (i > 0 && compare((m.files[i - 1] as WorkspaceFile).path, file.path) >= 0)
      return `the workspace manifest is not sorted by path at "${file.path}"`;
  }
  return undefined;
}

/** What changed from `before` (none: an empty workspace) to `after`. */
export function workspaceChanges(before: WorkspaceManifest | undefined, after: WorkspaceManifest): WorkspaceChanges {
  const old = new Map((before?.files ?? []).map((f) => [f.path, f]));
  const changes: WorkspaceChanges = { added: [], changed: [], removed: [] };
  for (const file of after.files) {
    const was = old.get(file.path);
    if (!was) changes.added.push(file.path);
    else if (was.hash !== file.hash || Boolean(was.executable) !== Boolean(file.executable) || was.link !== file.link)
      changes.changed.push(file.path);
    old.delete(file.path);
  }
  changes.removed = [...old.keys()];
  return changes;
}

/** Whether nothing changed between the two states. */
export function unchanged(changes: WorkspaceChanges): boolean {
  return changes.added.length + changes.changed.length + changes.removed.length === 0;
}

/** The contents a state needs that `stored` (hashes already kept) lacks: what saving it uploads, once each. */
export function contentsToStore(manifest: WorkspaceManifest, stored: ReadonlySet<string>): string[] {
  // A link's target is in the manifest itself: nothing to store.
  return [...new Set(manifest.files.filter((f) => f.link === undefined).map((f) => f.hash))].filter(
    (hash) => !stored.has(hash),
  );
}

/** The store's reference of a file's content (see {@link WorkspaceFile.blob}). */
export function contentRef(file: WorkspaceFile): string {
  return file.blob ?? `sha256:${file.hash}`;
}

/** A state's size: its files and their bytes (contents shared between files counted for each). */
export function workspaceSize(manifest: WorkspaceManifest): { files: number; bytes: number } {
  return { files: manifest.files.length, bytes: manifest.files.reduce((n, f) => n + f.size, 0) };
}

/** Paths compared by UTF-16 code units, the same on every worker (no locale). */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A path with its control characters shown as escapes, for an error message. */
function printable(path: string): string {
  return JSON.stringify(path).slice(1, -1);
}
