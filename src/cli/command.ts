import type { Readable } from 'node:stream';
import type { ClientSettings } from '../connection/settings';
import type { CommandTarget } from './session';

/** The overview's groups, in the order it lists them. */
export const COMMAND_GROUPS = [
  'Runs',
  'Conversations',
  'Any run or conversation',
  'Tenants',
  'Changing agents safely',
  'Servers and workers',
] as const;

/** Where a command stands in the overview. */
export type CommandGroup = (typeof COMMAND_GROUPS)[number];

/** How a command writes: lines to stdout and stderr, raw text (a streaming answer), and stdin. */
export interface CommandIo {
  stdout(text: string): void;
  stderr(line: string): void;
  write(text: string, toStderr?: boolean): void;
  stdin: Readable;
}

/** What `parse` gets besides the arguments. */
export interface ParseContext {
  /** The environment (the settings' own, when they were given). */
  env: NodeJS.ProcessEnv;
  /** The environment's settings; undefined for a command that talks to no Temporal (`talksToTemporal: false`). */
  settings?: ClientSettings;
  /** The tool names known in this process (a local worker's), to check `--tools` before connecting; else undefined. */
  registered?: readonly string[];
}

/** What `run` gets: where to work, how to write. */
export interface CommandContext {
  /**
   * The task queue (`--task-queue`, else `AGENT_TASK_QUEUE`), the settings and the local worker,
   * if any. A command with `talksToTemporal: false` has none (reading it throws): it reads `env`.
   */
  target: CommandTarget;
  /** The environment. */
  env: NodeJS.ProcessEnv;
  io: CommandIo;
}

/**
 * One command of the command line: its entry in the overview, its help page, how its arguments
 * are read and what it does. The table in `commands/index.ts` lists them all; help, dispatch and
 * the bin read only that table. `parse` and `run` load their implementation when called, so a
 * command loads the code it needs and no other (`status` loads no worker code).
 */
export interface CliCommand<P = unknown> {
  name: string;
  group: CommandGroup;
  /** What the overview shows: `status <id>`. */
  synopsis: string;
  /** One line: what it does. */
  summary: string;
  /** The help page under the summary: its first paragraph is the usage (`usage: <me> <name> ...`). */
  page(me: string): string;
  /** False for a command that needs no Temporal (no `--task-queue`, no client settings read). Default true. */
  talksToTemporal?: boolean;
  /**
   * A long-running server or worker (`serve`, `worker`, `mcp`, `a2a`, `codec-server`): it sets up
   * the runtime's logging and signals itself, and a failure to start exits 2 with its name.
   */
  server?: boolean;
  /** Reads the arguments; every mistake is a `UsageError`, thrown before anything connects. */
  parse(args: string[], context: ParseContext): P | Promise<P>;
  /** Does it; resolves to the exit code. */
  run(command: P, context: CommandContext): Promise<number>;
}

/** Declares a command (types `run`'s argument from `parse`'s result). */
export function defineCommand<P>(command: CliCommand<P>): CliCommand<P> {
  return command;
}
