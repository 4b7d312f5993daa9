/**
 * A run's workspace: a directory its tools work in (the built-in `bash`, `read_file`,
 * `write_file`, `edit_file`, `list_files`, `grep`, and tools of the user's own that ask for it),
 * whose state is saved after every call that changed it and committed with the call's result.
 * These are the options an agent (`defineAgent({ workspace: {...} })`), a run or a conversation
 * gives it, as plain JSON; what the sandbox is (bubblewrap, an AI SDK sandbox) is the worker's.
 */
export interface WorkspaceOptions {
  /**
   * Hosts commands may reach, through the sandbox's proxy: `"registry.npmjs.org"`, or
   * `"*.example.com"` for its subdomains. Default: none (no network at all).
   */
  network?: string[];
  /** The longest one command may run, e.g. `"120s"` (the default) or milliseconds; a `bash` call may ask for less. */
  commandTimeout?: string | number;
  /** The memory a command may use, in MiB (default 2048). */
  memoryMb?: number;
  /** The most the workspace may hold, in MiB (default 1024): a command that writes more fails, and its changes are undone. */
  diskMb?: number;
  /** The processes a command may run at once (default 256). */
  processes?: number;
}

/** A run's workspace as its state holds it: the options with defaults applied, and where it stands. */
export interface RunWorkspace {
  network: string[];
  commandTimeoutMs: number;
  memoryMb: number;
  diskMb: number;
  processes: number;
  /**
   * The committed state: the reference of its manifest in the blob store (`sha256:...`). Absent:
   * the workspace is empty (nothing was written yet).
   */
  ref?: string;
}
