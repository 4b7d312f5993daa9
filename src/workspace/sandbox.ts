/**
 * What runs a workspace's commands: the seam between the workspace tools and an operating-system
 * sandbox. The worker's default is bubblewrap (`bubblewrap-sandbox.ts`); a team gives its own
 * (`AgentsPlugin({ workspaces: { sandbox } })`), an AI SDK sandbox session among them
 * (`ai-sdk-sandbox.ts`).
 */

/** One command to run in a workspace. */
export interface SandboxCommand {
  /** The workspace's directory on this worker: the sandbox shows it as `/workspace`, the command's working directory. */
  dir: string;
  /** A bash command line. */
  command: string;
  /** The longest it may run; then it is killed (`timedOut`). */
  timeoutMs: number;
  /** Hosts it may reach (see `WorkspaceOptions.network`); empty: no network. */
  network: readonly string[];
  /**
   * Its memory (MiB), processes, and the largest file it may write (MiB): the workspace's size,
   * which its files together may not pass while it runs either (`diskMb`).
   */
  limits: { memoryMb: number; processes: number; fileMb: number };
  /** Aborted when the tool call is cancelled: the command is killed. */
  signal?: AbortSignal;
}

/** How a command ended and what it wrote. */
export interface SandboxResult {
  /** Its exit code; null when it was killed. */
  exitCode: number | null;
  /** The signal that killed it, if one did. */
  signal?: string;
  stdout: string;
  stderr: string;
  /** It ran past its time and was killed. */
  timedOut?: boolean;
  /** It filled the workspace past its size and was killed (the size is in `stderr`'s last line). */
  diskFull?: boolean;
  /** Its output passed what is kept ({@link MAX_OUTPUT_BYTES} each): the rest was dropped. */
  truncated?: boolean;
}

/** Runs commands in a workspace directory, confined to it. */
export interface CommandSandbox {
  /** What it is, for messages and the worker's description: `"bubblewrap"`, `"ai-sdk: vercel"`, ... */
  readonly name: string;
  /**
   * Whether it can run here: undefined when it can, else what is missing and how to get it (a
   * tool call answers this to the model, and `durable-agents worker` says it at start).
   */
  problem(): Promise<string | undefined>;
  run(command: SandboxCommand): Promise<SandboxResult>;
}

/** The most of each of stdout and stderr a command's result keeps. */
export const MAX_OUTPUT_BYTES = 1024 * 1024;

/** Collects a stream's output up to {@link MAX_OUTPUT_BYTES}, keeping its start and its end. */
export class OutputTail {
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  dropped = 0;

  add(chunk: Buffer): void {
    const half = MAX_OUTPUT_BYTES / 2;
    if (this.headBytes < half) {
      const take = chunk.subarray(0, half - this.headBytes);
      this.head.push(take);
      this.headBytes += take.length;
      chunk = chunk.subarray(take.length);
    }
    if (!chunk.length) return;
    this.tail.push(chunk);
    this.tailBytes += chunk.length;
    while (this.tailBytes - this.tail[0].length >= half) {
      this.tailBytes -= this.tail[0].length;
      this.dropped += this.tail.shift()!.length;
    }
  }

  text(): string {
    const head = Buffer.concat(this.head).toString('utf8');
    const tail = Buffer.concat(this.tail).toString('utf8');
    if (!this.dropped) return head + tail;
    return `${head}\n[... ${this.dropped} bytes of output left out ...]\n${tail}`;
  }
}

/** The sandbox cannot run here (not installed, no user namespaces, another system): the message says how to fix it. */
export class SandboxUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SandboxUnavailableError';
  }
}
