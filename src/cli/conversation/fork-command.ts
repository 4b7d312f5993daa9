import { forkConversation } from '../../client/branches';
import { workflowIdProblem } from '../../core/run/run-input';
import type { CommandContext } from '../command';
import { turnJson } from '../format-conversation';
import { outcomeText } from '../format-outcome';
import { parseFlags, UsageError, wholeNumber } from '../option-flags';
import { commandSession } from './command-session';
import { expectPositionals, JSON_FLAG, nonEmpty } from './conversation-args';

/** `fork <id> <index> ["<message>"] [--into <new id> [--branch <branch>]] [--json]`. */
export interface ForkCommand {
  conversationId: string;
  /** The transcript index of the user message the fork replaces. */
  atMessage: number;
  /** Absent: the same message again (regenerate). */
  message?: string;
  into?: string;
  branch?: string;
  json: boolean;
}

/** `fork`'s arguments, every mistake a `UsageError` before anything connects. */
export function parse(argv: string[]): ForkCommand {
  const { values, positionals } = parseFlags(argv, {
    ...JSON_FLAG,
    into: { type: 'string' },
    branch: { type: 'string' },
  });
  if (positionals.length !== 2 && positionals.length !== 3)
    throw new UsageError(
      `fork expects <id> <message index> and an optional "<message>" (absent: the same message again), got ${positionals.length === 0 ? 'none' : positionals.map((p) => JSON.stringify(p)).join(' ')}`,
    );
  const [conversationId] = expectPositionals('fork', positionals.slice(0, 1), ['<id>']);
  const atMessage = wholeNumber('<message index>', positionals[1], 0);
  const message = positionals[2];
  if (message !== undefined && !message.trim()) throw new UsageError('fork: "<message>" must not be empty');
  const into = nonEmpty('--into', values.into);
  const branch = nonEmpty('--branch', values.branch);
  if (into !== undefined) {
    const problem = workflowIdProblem(into, '--into');
    if (problem) throw new UsageError(problem);
  }
  if (branch !== undefined && into === undefined)
    throw new UsageError('--branch names the branch to fork from into a new conversation: give --into <new id> too');
  return {
    conversationId,
    atMessage,
    ...(message !== undefined ? { message } : {}),
    ...(into ? { into } : {}),
    ...(branch ? { branch } : {}),
    json: values.json ?? false,
  };
}

/** Answers an earlier message again (or an edited one) as a branch, or in a new conversation (`--into`). */
export function run(cmd: ForkCommand, context: CommandContext): Promise<number> {
  const id = cmd.conversationId;
  return commandSession(context, { json: cmd.json, workflowId: id }, async ({ client, taskQueue, print, uiLink }) => {
    const forked = await forkConversation(
      client,
      id,
      {
        atMessage: cmd.atMessage,
        ...(cmd.message !== undefined ? { message: cmd.message } : {}),
        ...(cmd.into ? { into: cmd.into } : {}),
        ...(cmd.branch ? { branch: cmd.branch } : {}),
      },
      { taskQueue },
    );
    const where = cmd.into
      ? `Forked ${id} at message ${cmd.atMessage} into the new conversation ${forked.conversationId}.`
      : `Branch ${forked.branch} of ${forked.conversationId} starts at message ${cmd.atMessage}; the branch it replaced stays readable (history --branch).`;
    const answer = forked.result ? `\n${outcomeText(forked.result, uiLink(forked.conversationId))}` : '';
    print(
      {
        conversationId: forked.conversationId,
        branch: forked.branch,
        ...(forked.result ? turnJson(forked.result) : {}),
      },
      `${where}${answer}`,
    );
    return forked.result?.status === 'failed' ? 1 : 0;
  });
}
