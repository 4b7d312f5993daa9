import type { ConversationInput, ConversationState } from './conversation-state';
import { forkAt, forkIndex, switchBranch, switchProblem } from './branches';

/**
 * A new conversation from an earlier point of this one (`forkConversation(..., { into })`): it
 * starts with the transcript before a user message of any branch this run keeps, and goes on on
 * its own. It holds those messages itself, the ones this run holds (a run's history is bounded, so
 * they are too); anything earlier stays in the runs this one continued from, which never change,
 * and is read from there (`previousWorkflowId`). It starts with this conversation's usage, so a
 * budget is not escaped by forking.
 */
export function forkedConversation(
  conv: ConversationState,
  at: { atMessage: number; branch?: string },
  source: { workflowId: string; runId: string },
): { input: ConversationInput } | { problem: string } {
  const problem = at.branch === undefined ? undefined : switchProblem(conv, at.branch);
  if (problem) return { problem };
  const from = at.branch === undefined ? conv : switchBranch(conv, at.branch);
  const found = forkIndex(from, { atMessage: at.atMessage }, source.workflowId);
  if ('problem' in found) return found;
  const cut = forkAt(from, found.index);
  // Everything this run holds before the fork, not a memory window: those messages are read nowhere else.
  const input: ConversationInput = {
    ...cut.options,
    carry: {
      tools: cut.tools ?? [],
      transcriptStart: cut.transcriptStart,
      messages: cut.messages,
      turns: cut.turns,
      usage: cut.usage,
      toolExecutionCount: cut.toolExecutionCount,
      runs: 1,
      // The runs before this one are the same on every branch, and closed: the new conversation reads them.
      previousRunId: cut.previousRunId ?? '',
      ...(cut.previousRunId ? { previousWorkflowId: source.workflowId } : {}),
      rejectedMessages: { count: 0 },
      ...(cut.given ? { given: cut.given } : {}),
      ...(cut.agentVersion ? { agentVersion: cut.agentVersion } : {}),
      ...(cut.context ? { context: cut.context } : {}),
      ...(cut.lastPrompt ? { lastPrompt: cut.lastPrompt } : {}),
      ...(cut.compactions ? { compactions: cut.compactions } : {}),
      ...(cut.workspace ? { workspace: cut.workspace } : {}),
    },
  };
  return { input };
}
