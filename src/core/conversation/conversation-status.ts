import { runStatus } from '../run/run-result';
import { budgetReport } from '../run/limits';
import { calibratedTokens, calibration, contextView, densityOf, isInstructions } from '../memory/compaction';
import type { CloseReason, ConversationResult, ConversationState, ConversationStatus } from './conversation';
import type { RunState } from '../run/run-state';
import { memoryReport } from '../memory/run-memory';
import { addUsage } from '../messages/usage';

/** What a conversation reports: its result when it closes, and its status (the `status` query) while open. */

/** The workflow's result when it closes for `reason`. */
export function conversationResult(
  conversationId: string,
  conv: ConversationState,
  reason: CloseReason,
): ConversationResult {
  return {
    conversationId,
    reason,
    turns: conv.turns,
    messageCount: conv.transcriptStart + conv.messages.length,
    usage: conv.usage,
    runs: conv.runs,
    toolExecutionCount: conv.toolExecutionCount,
    rejectedMessages: conv.rejectedMessages,
  };
}

/** The status of a closed conversation, from its result: no worker has to replay it to answer. */
export function closedConversationStatus(result: ConversationResult): ConversationStatus {
  return {
    conversationId: result.conversationId,
    state: 'closed',
    turns: result.turns,
    queuedMessages: 0,
    pendingApprovals: [],
    usage: result.usage,
    messageCount: result.messageCount,
    toolExecutionCount: result.toolExecutionCount ?? 0,
    runs: result.runs,
    closeReason: result.reason,
    rejectedMessages: result.rejectedMessages ?? { count: 0 },
  };
}

/** The `status` query's answer. */
export function conversationStatus(
  conversationId: string,
  conv: ConversationState,
  active: { turn: number; run: RunState } | undefined,
  queuedMessages: number,
  closeReason: CloseReason | undefined,
): ConversationStatus {
  const run = active?.run;
  const runState = run ? runStatus(run) : undefined;
  const phase = runState?.phase ?? 'done';
  const approvals = runState?.pendingApprovals ?? [];
  let state: ConversationStatus['state'] = 'idle';
  if (closeReason) state = 'closed';
  else if (phase === 'approval') state = runState?.state === 'escalated' ? 'escalated' : 'awaiting_approval';
  else if (phase === 'wait') state = 'waiting';
  else if (phase === 'tools') state = 'running_tools';
  else if (phase === 'model') state = 'thinking';
  const held = run ? run.messages.length - (isInstructions(run.messages[0]) ? 1 : 0) : conv.messages.length;
  const status: ConversationStatus = {
    conversationId,
    state,
    turns: conv.turns,
    queuedMessages,
    pendingApprovals: approvals,
    usage: run ? addUsage(conv.usage, run.usage) : conv.usage,
    messageCount: conv.transcriptStart + held,
    toolExecutionCount: conv.toolExecutionCount + (run?.toolExecutions.length ?? 0),
    runs: conv.runs,
    rejectedMessages: conv.rejectedMessages,
  };
  const agent = (run?.handedOff ? run.agent.name : undefined) ?? conv.options.agent;
  if (agent) status.agent = agent;
  if (run && active) {
    const s = runStatus(run);
    status.currentTurn = {
      turn: active.turn,
      iteration: s.iteration,
      maxIterations: s.maxIterations,
      pendingToolCalls: s.pendingToolCalls,
    };
  }
  if (runState?.waits) status.waits = runState.waits;
  if (closeReason) status.closeReason = closeReason;
  if (conv.options.budget) status.budget = budgetReport(conv.options.budget, status.usage);
  if (run?.limits.maxPromptTokens !== undefined) status.memory = memoryReport(run, conv.compactions);
  else if (conv.options.maxPromptTokens !== undefined) {
    // Between turns: the conversation as the next turn will start from it.
    const view = contextView(conv.messages, {
      pinned: 0,
      ...(conv.context ?? { from: 0 }),
      messageCount: conv.messages.length,
    });
    status.memory = {
      maxPromptTokens: conv.options.maxPromptTokens,
      promptTokens: calibratedTokens(view, densityOf(view), calibration(conv.lastPrompt)),
      compactions: conv.compactions ?? 0,
    };
  }
  return status;
}
