import type { Client } from '@temporalio/client';
import { forkConversation, listBranches, switchBranch } from '../client/branches';
import type { BranchInfo } from '../core';
import { outcomeText } from './format-outcome';
import { turnJson } from './format-conversation';
import type { ConversationCommand } from './parse-conversation-args';

/**
 * `fork <id> <index> ["<message>"]` and `branches <id> [--switch <branch>]`: a conversation's
 * branches from the terminal (see `core/conversation/branches.ts`). Returns the exit code.
 */
export async function runBranchCommand(
  client: Client,
  cmd: Extract<ConversationCommand, { kind: 'fork' | 'branches' }>,
  taskQueue: string,
  print: (json: unknown, text: string) => void,
  uiLink: (id: string) => string | undefined,
): Promise<number> {
  if (cmd.kind === 'branches') {
    const branches = cmd.switchTo
      ? await switchBranch(client, cmd.conversationId, cmd.switchTo)
      : await listBranches(client, cmd.conversationId);
    const note = cmd.switchTo ? `Branch ${cmd.switchTo} is current again; new messages go on from its end.\n` : '';
    print(branches, `${note}${branchesText(branches)}`);
    return 0;
  }
  const forked = await forkConversation(
    client,
    cmd.conversationId,
    {
      atMessage: cmd.atMessage,
      ...(cmd.message !== undefined ? { message: cmd.message } : {}),
      ...(cmd.into ? { into: cmd.into } : {}),
      ...(cmd.branch ? { branch: cmd.branch } : {}),
    },
    { taskQueue },
  );
  const where = cmd.into
    ? `Forked ${cmd.conversationId} at message ${cmd.atMessage} into the new conversation ${forked.conversationId}.`
    : `Branch ${forked.branch} of ${forked.conversationId} starts at message ${cmd.atMessage}; the branch it replaced stays readable (history --branch).`;
  const answer = forked.result ? `\n${outcomeText(forked.result, uiLink(forked.conversationId))}` : '';
  print(
    { conversationId: forked.conversationId, branch: forked.branch, ...(forked.result ? turnJson(forked.result) : {}) },
    `${where}${answer}`,
  );
  return forked.result?.status === 'failed' ? 1 : 0;
}

/** One line per branch: current first, where each parted, its size and its first message. */
export function branchesText(branches: readonly BranchInfo[]): string {
  return branches
    .map((b) => {
      const from = b.parent !== undefined ? `, from ${b.parent} at message ${b.forkedAt}` : '';
      const kept = b.heldBy ? ' (kept by an earlier run: readable, not switchable)' : '';
      const label = b.label ? `  "${b.label}"` : '';
      return `${b.current ? '*' : ' '} ${b.id}  ${b.messageCount} messages${from}${kept}${label}`;
    })
    .join('\n');
}
