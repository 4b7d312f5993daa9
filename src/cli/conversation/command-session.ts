import type { Client } from '@temporalio/client';
import { requireWorkerFor } from '../../client/task-queue-workers';
import type { CommandContext } from '../command';
import { inSession } from '../session';

/** Prints a command's answer: `json` under `--json`, else `text`. */
export type Printer = (json: unknown, text: string) => void;

/** What a command's work gets: the session's client and links, and its printer. */
export interface CommandSession {
  client: Client;
  taskQueue: string;
  print: Printer;
  uiLink: (id: string) => string | undefined;
  /** Runs `work` so that Ctrl+C and a dying connection end it as the session says (see session.ts). */
  scoped: <T>(work: () => Promise<T>) => Promise<T>;
}

/**
 * Runs a conversation command's work in a session: connected to Temporal, with the local worker
 * when the command starts work on the task queue (`needsWorker`), and, for a command on an
 * existing workflow (`workflowId`), a worker of that workflow's own task queue to answer it.
 * Returns the work's exit code.
 */
export function commandSession(
  { target, io }: Pick<CommandContext, 'target' | 'io'>,
  options: { json: boolean; needsWorker?: boolean; workflowId?: string },
  work: (session: CommandSession) => Promise<number>,
): Promise<number> {
  const print: Printer = (json, text) => io.stdout(options.json ? JSON.stringify(json) : text);
  return inSession(
    {
      ...target,
      needsWorker: options.needsWorker ?? false,
      note: (line) => (options.json ? undefined : io.stderr(line)),
    },
    async (session) => {
      if (options.workflowId !== undefined && !session.localWorker)
        await requireWorkerFor(session.client, options.workflowId);
      return work({
        client: session.client,
        taskQueue: target.taskQueue,
        print,
        uiLink: (id) => session.uiLink(id),
        scoped: (run) => session.scoped(run),
      });
    },
  );
}
