import { runStatus } from '../run/run-result';
import { budgetReport } from '../state/limits';
import { calibratedTokens, calibration, contextView, densityOf, isInstructions } from '../context/compaction';
import type { ConversationState, RejectedMessages } from './conversation-state';
import type { AgentState, MemoryReport } from '../state/run-results';
import type { BudgetReport } from '../state/limits';
import type { ChatMessage, Usage } from '../messages/chat-message';
import type { ActiveWait, PendingApproval, RunState } from '../state/run-state';
import { memoryReport } from '../context/run-context';
import { addUsage } from '../messages/usage';
import { currentBranch, switchProblem } from './branches';

/** What a conversation reports: its result when it closes, and its status (the `status` query) while open. */

/** Why a conversation closed. */
export type CloseReason = 'ended' | 'idle_timeout';

/** The conversation workflow's result. */
export interface ConversationResult {
  conversationId: string;
  reason: CloseReason;
  turns: number;
  messageCount: number;
  usage: Usage;
  runs: number;
  /** Absent in results of conversations closed before it was added. */
  toolExecutionCount?: number;
  rejectedMessages?: RejectedMessages;
  /**
   * The workspace state its current branch ended on (`""`: an empty one; absent: it had none, or it
   * closed before results said so).
   */
  workspace?: string;
}

/** What a conversation is doing, for the `status` query. */
export interface ConversationStatus {
  conversationId: string;
  state: Extract<
    AgentState,
    'idle' | 'thinking' | 'running_tools' | 'awaiting_approval' | 'escalated' | 'waiting' | 'closed'
  >;
  /** Turns finished so far. */
  turns: number;
  /** Messages waiting for the current turn to finish. */
  queuedMessages: number;
  currentTurn?: {
    turn: number;
    iteration: number;
    maxIterations: number;
    pendingToolCalls: Array<{ id: string; name: string; arguments: Record<string, unknown> }>;
  };
  pendingApprovals: PendingApproval[];
  /** The durable waits under way (`sleep`, `wait_for_event`): what for, and until when. */
  waits?: ActiveWait[];
  usage: Usage;
  /** Transcript length, system message excluded. */
  messageCount: number;
  toolExecutionCount: number;
  runs: number;
  /** The agent the conversation is with: the one it started with, or the last one it was handed off to. */
  agent?: string;
  /** Why it closed; clients report `terminated`, `cancelled`, `failed` or `timed_out` for conversations Temporal closed. */
  closeReason?: CloseReason | 'terminated' | 'cancelled' | 'failed' | 'timed_out';
  rejectedMessages: RejectedMessages;
  /** With a budget: its limits, what the conversation spent and what is left. */
  budget?: BudgetReport;
  /** With memory by tokens: the bound, the next request's estimated size, what summaries took in. */
  memory?: MemoryReport;
  /** A named agent's version (see `agentVersion`). */
  agentVersion?: string;
  /** With Worker Versioning: the build the conversation is on now. */
  buildId?: string;
  /** The branch new messages go to, when the conversation was forked (absent: `main`). */
  branch?: string;
  /** The workspace state its current branch works on (its reference; absent: empty, or no workspace). */
  workspace?: string;
}

/** One page of the transcript (the `transcript` query's answer). */
export interface TranscriptPage {
  system?: string;
  /** Transcript index of `messages[0]`. */
  offset: number;
  messages: ChatMessage[];
  /** Messages in the whole transcript. */
  total: number;
  /** The first index this run holds; earlier ones are read from `previousRunId`. */
  heldFrom: number;
  previousRunId?: string;
  /** The workflow `previousRunId` belongs to, when it is another (a conversation forked from another). */
  previousWorkflowId?: string;
  /** The branch read (absent: the current one). */
  branch?: string;
  /** The branch asked for is kept by this earlier run of the conversation: read it there (no messages here). */
  heldBy?: string;
}

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
    ...(workspaceOf(conv) !== undefined ? { workspace: workspaceOf(conv) } : {}),
  };
}

/**
 * The workspace state a conversation's current branch works on: its reference, `""` for an empty
 * one (its messages note a workspace, none was committed on this branch), undefined without one.
 */
function workspaceOf(conv: ConversationState): string | undefined {
  if (conv.workspace) return conv.workspace;
  return conv.messages.some((m) => m.role === 'user' && m.workspace !== undefined) ? '' : undefined;
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
    ...(result.workspace ? { workspace: result.workspace } : {}),
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
  if (conv.agentVersion) status.agentVersion = conv.agentVersion;
  if (conv.buildId) status.buildId = conv.buildId;
  if (conv.branch) status.branch = conv.branch.id;
  // A turn under way commits to its run first; the conversation takes the state when it ends.
  const workspace = run?.workspace?.ref ?? conv.workspace;
  if (workspace) status.workspace = workspace;
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

/** The messages a model call of this run reads (the `messages` query): system message first. */
export function runMessages(conv: ConversationState, active: RunState | undefined): ChatMessage[] {
  if (active) return active.messages;
  return conv.options.system ? [{ role: 'system', content: conv.options.system }, ...conv.messages] : conv.messages;
}

type PageOf = (messages: ChatMessage[], range: { offset: number; limit?: number }) => ChatMessage[];

/**
 * The transcript page for `{ offset, limit }` (transcript indices), from what this run holds: of
 * the current branch, or of `branch` (see `branches.ts`). Throws for a branch the conversation
 * does not have.
 */
export function transcriptPage(
  conv: ConversationState,
  active: RunState | undefined,
  range: { offset?: number; limit?: number; branch?: string },
  page: (messages: ChatMessage[], range: { offset: number; limit?: number }) => ChatMessage[],
): TranscriptPage {
  const before = { runId: conv.previousRunId, workflowId: conv.previousWorkflowId };
  if (range.branch !== undefined && range.branch !== currentBranch(conv)) {
    const held = conv.branches?.find((b) => b.id === range.branch);
    if (held) {
      const system = held.options.system ?? undefined;
      return { ...heldPage(held.messages, conv.transcriptStart, before, range, page, system), branch: held.id };
    }
    const older = conv.olderBranches?.find((b) => b.id === range.branch);
    if (!older?.heldBy) throw new Error(switchProblem(conv, range.branch) ?? `no branch "${range.branch}"`);
    return {
      offset: range.offset ?? 0,
      messages: [],
      total: older.messageCount,
      heldFrom: older.messageCount,
      branch: older.id,
      heldBy: older.heldBy,
    };
  }
  const all = runMessages(conv, active);
  // The active turn's system message: a handoff during the turn has changed it already.
  const system = isInstructions(all[0]) ? all[0].content : conv.options.system;
  return heldPage(all, conv.transcriptStart, before, range, page, system ?? undefined);
}

/**
 * The transcript page of a one-shot run (the `transcript` query's answer on runs): the run's
 * messages after its system message, earlier ones held by the run it continued from.
 */
export function runTranscriptPage(
  state: RunState,
  previousRunId: string | undefined,
  range: { offset?: number; limit?: number },
  page: (messages: ChatMessage[], range: { offset: number; limit?: number }) => ChatMessage[],
): TranscriptPage {
  const system = isInstructions(state.messages[0]) ? String(state.messages[0].content) : undefined;
  return heldPage(state.messages, state.messagesBefore ?? 0, { runId: previousRunId }, range, page, system);
}

/** A page of the messages a workflow run holds (`all`, system first), the transcript's `start` on. */
function heldPage(
  all: ChatMessage[],
  start: number,
  before: { runId?: string; workflowId?: string },
  range: { offset?: number; limit?: number },
  page: PageOf,
  system: string | undefined,
): TranscriptPage {
  const held = isInstructions(all[0]) ? all.slice(1) : all;
  const total = start + held.length;
  const offset = Math.min(Math.max(range.offset ?? 0, start), total);
  const limit = range.limit === undefined ? undefined : Math.max(0, range.limit - (offset - (range.offset ?? 0)));
  const result: TranscriptPage = {
    offset,
    messages: page(held, { offset: offset - start, limit }),
    total,
    heldFrom: start,
  };
  if (system) result.system = system;
  if (before.runId) result.previousRunId = before.runId;
  if (before.runId && before.workflowId) result.previousWorkflowId = before.workflowId;
  return result;
}
