import { busyPolicyProblem } from './busy';
import { nextStep, startRun } from '../run/agent-loop';
import { withoutHistoryMark } from '../run/run-result';
import type { RunState } from '../state/run-state';
import type { ChatMessage } from '../messages/chat-message';
import { DEFAULT_MEMORY_WINDOW, memoryWindowStart, MIN_MEMORY_WINDOW } from '../context/message-window';
import { durationProblem, isToolList, messageProblem, runOptionProblems, type InputChecks } from '../run/run-input';
import { addUsage, noUsage } from '../messages/usage';
import { imagesProblem } from '../messages/images';
import { messageIdProblem } from '../messages/message-ids';
import { budgetReport, budgetSpent } from '../state/limits';
import { isInstructions } from '../context/compaction';
import type { ConversationTurnResult } from '../state/run-results';
import type { ToolInfo } from '../messages/tool-info';
import { applyAgent, type ResolvedAgent } from '../state/agents';
import { carriedBranches, forkPointProblem } from './branches';
import type { ConversationCarry, ConversationInput, ConversationState, TurnInput } from './conversation-state';

/**
 * A conversation: many turns on one workflow, each turn one run of the agent loop over the chat
 * memory. This module holds the conversation's bookkeeping as pure functions; the workflow only
 * queues messages and runs turns.
 */

/** How long an idle conversation stays open by default. */
export const DEFAULT_IDLE_TIMEOUT = '24h';

/** Checks a conversation's options; one readable line per problem. */
export function validateConversationOptions(input: unknown, checks: InputChecks = {}): string[] {
  if (input === null || typeof input !== 'object') return ['the conversation options must be an object'];
  const i = input as Record<string, unknown>;
  const problems = runOptionProblems(i, checks);
  if (i.rerun !== undefined) problems.push('"rerun" applies to one-shot runs, not conversations');
  const busy = busyPolicyProblem(i.busy);
  if (busy) problems.push(busy);
  if (
    i.memoryWindow !== undefined &&
    !(Number.isInteger(i.memoryWindow) && (i.memoryWindow as number) >= MIN_MEMORY_WINDOW)
  ) {
    problems.push(
      `"memoryWindow" must be an integer >= ${MIN_MEMORY_WINDOW} (a tool call needs the question, the call and its result), got ${JSON.stringify(i.memoryWindow)}`,
    );
  }
  if (i.memoryWindow !== undefined && i.maxPromptTokens !== undefined)
    problems.push(
      '"memoryWindow" and "maxPromptTokens" exclude each other: a window of messages, or memory by tokens with summaries',
    );
  const idle = durationProblem('idleTimeout', i.idleTimeout);
  if (idle) problems.push(idle);
  return problems;
}

/**
 * What is wrong with a user message for this conversation, or undefined when it can be queued.
 * `tools` is the conversation's tool set, unknown until resolved at its start.
 */
export function turnProblem(
  turn: unknown,
  tools: readonly ToolInfo[] | undefined,
  closing: boolean,
): string | undefined {
  if (closing) return 'the conversation is ending and accepts no more messages';
  if (turn === null || typeof turn !== 'object') return 'the message must be an object {"message": "..."}';
  const t = turn as Record<string, unknown>;
  const problem =
    messageProblem(t.message) ??
    imagesProblem(t.images) ??
    messageIdProblem(t.messageId) ??
    busyPolicyProblem(t.busy) ??
    forkPointProblem(t.fork, t.busy);
  if (problem) return problem;
  for (const key of ['tools', 'approvalTools'] as const) {
    const names = t[key];
    if (names === undefined) continue;
    if (!isToolList(names)) return `"${key}" must be an array of tool names`;
    if (!tools) continue;
    const unknown = names.filter((n) => !tools.some((k) => k.name === n));
    if (unknown.length > 0) {
      return `unknown tool${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}${key === 'approvalTools' ? ' in "approvalTools"' : ''}; this conversation's tools: ${tools.map((k) => k.name).join(', ') || 'none'} (set by the message that started it, or its agent: start a conversation with "tools" to have others, built-in ones such as remember included)`;
    }
  }
  return undefined;
}

/** The conversation with the turn's `approvalTools` (if any) needing approval from now on. */
export function withTurnApprovals(conv: ConversationState, turn: TurnInput): ConversationState {
  const names = turn.approvalTools ?? [];
  if (!conv.tools || !conv.tools.some((t) => names.includes(t.name) && !t.needsApproval)) return conv;
  return { ...conv, tools: conv.tools.map((t) => (names.includes(t.name) ? { ...t, needsApproval: true } : t)) };
}

/** A new conversation, or the continuation of one (from `input.carry`). */
export function startConversation(input: ConversationInput): ConversationState {
  // Its version is the input's, not an option (the workflow read the carry in this build's shape).
  const { carry, carryVersion: _version, ...options } = input;
  // The event log is the workflow's to restore; it is not conversation state.
  const {
    events: _events,
    inbox: _inbox,
    eventIds: _eventIds,
    refreshAgent: _refreshAgent,
    buildId: _buildId,
    ...carried
  } = carry ?? ({} as Partial<ConversationCarry>);
  const base: ConversationState = {
    options,
    transcriptStart: 0,
    messages: [],
    turns: 0,
    usage: noUsage(),
    toolExecutionCount: 0,
    runs: 1,
    rejectedMessages: { count: 0 },
  };
  return carry ? { ...base, ...(carried as ConversationCarry) } : base;
}

/**
 * The conversation with its agent resolved: the agent's settings under the options it was
 * started with, its tools and version. Resolved again on another build, tools that turns made
 * need approval (`approvalTools`) still do.
 */
export function withResolvedAgent(conv: ConversationState, agent: ResolvedAgent): ConversationState {
  const given = conv.given ?? conv.options;
  const before = conv.tools ?? [];
  const approved = (name: string) => before.some((t) => t.name === name && t.needsApproval);
  const tools = agent.tools.map((t) => (!t.needsApproval && approved(t.name) ? { ...t, needsApproval: true } : t));
  // After a handoff the conversation is on another agent than it started with: it stays on it.
  const options = {
    ...applyAgent(given, agent.settings),
    ...(agent.settings.name ? { agent: agent.settings.name } : {}),
  };
  const resolved: ConversationState = { ...conv, given, options, tools };
  if (agent.version) resolved.agentVersion = agent.version;
  else delete resolved.agentVersion;
  return resolved;
}

/** The window size in effect. */
export function memoryWindow(conv: ConversationState): number {
  return conv.options.memoryWindow ?? DEFAULT_MEMORY_WINDOW;
}

/** Starts a turn: a run over the conversation so far plus the new message, seeing the memory window. */
export function startTurn(conv: ConversationState, turn: TurnInput): RunState {
  const tools = conv.tools ?? [];
  const run = startRun(
    { ...conv.options, message: turn.message, ...(turn.images?.length ? { images: turn.images } : {}) },
    turn.tools ? tools.filter((t) => turn.tools!.includes(t.name)) : tools,
    conv.agentVersion,
  );
  const system = run.messages[0]?.role === 'system' ? [run.messages[0]] : [];
  // The turn's message knows its turn and its sender's id: a branch, and a fork of it, find it by them.
  const asked = run.messages
    .slice(system.length)
    .map((m) =>
      m.role === 'user'
        ? { ...m, turn: conv.turns + 1, ...(turn.messageId !== undefined ? { messageId: turn.messageId } : {}) }
        : m,
    );
  const state: RunState = {
    ...run,
    messages: [
      ...system,
      ...conv.messages,
      ...(run.workspace ? asked.map((m) => noteWorkspace(m, conv.workspace)) : asked),
    ],
    ...(conv.buildId ? { buildId: conv.buildId } : {}),
  };
  if (run.workspace && conv.workspace) state.workspace = { ...run.workspace, ref: conv.workspace };
  // A token budget replaces the message window: summaries keep the conversation in it.
  if (run.limits.maxPromptTokens === undefined) state.memoryWindow = memoryWindow(conv);
  else {
    const shift = system.length;
    if (conv.context) state.context = { from: conv.context.from + shift, summary: conv.context.summary + shift };
    if (conv.lastPrompt) state.lastPrompt = conv.lastPrompt;
  }
  // The conversation's budget covers every turn: this one starts from what the others spent.
  if (run.limits.budget) {
    state.spentBefore = {
      totalTokens: conv.usage.totalTokens,
      ...(conv.usage.costUsd !== undefined ? { costUsd: conv.usage.costUsd } : {}),
    };
    if (conv.lastCall) state.lastCall = conv.lastCall;
  }
  return conv.revision ? { ...state, revision: conv.revision } : state;
}

/** A turn's user message notes the workspace's state it was sent in ("": empty): a fork at it starts from that state. */
function noteWorkspace(m: ChatMessage, ref: string | undefined): ChatMessage {
  return m.role === 'user' ? { ...m, workspace: ref ?? '' } : m;
}

/** Folds a finished (or failed) turn into the conversation. */
export function finishTurn(conv: ConversationState, run: RunState): ConversationState {
  const pinned = isInstructions(run.messages[0]) ? 1 : 0;
  const next: ConversationState = {
    ...conv,
    messages: run.messages.slice(pinned),
    turns: conv.turns + 1,
    usage: addUsage(conv.usage, run.usage),
    toolExecutionCount: conv.toolExecutionCount + run.toolExecutions.length,
  };
  if (run.revision) next.revision = run.revision;
  if (run.workspace?.ref) next.workspace = run.workspace.ref;
  if (run.lastCall) next.lastCall = run.lastCall;
  if (run.lastPrompt) next.lastPrompt = run.lastPrompt;
  if (run.compactions) next.compactions = (conv.compactions ?? 0) + run.compactions;
  if (run.context) next.context = { from: run.context.from - pinned, summary: run.context.summary - pinned };
  if (!run.handedOff) return next;
  // Handed off during the turn: the next turns (and continue-as-new) are the new agent's.
  const { modelSettings: _m, toolCalling: _t, ...options } = conv.options;
  // applyHandoff always leaves a system message first: the new agent's instructions.
  next.options = { ...options, agent: run.agent.name!, system: String(run.messages[0].content ?? '') };
  if (run.agent.modelSettings) next.options.modelSettings = run.agent.modelSettings;
  if (run.agent.toolCalling) next.options.toolCalling = run.agent.toolCalling;
  next.tools = run.tools;
  return next;
}

/** The result of the turn `run`, numbered `turn`. `failure` is set when the model call failed for good. */
export function turnResult(
  run: RunState,
  conversationId: string,
  turn: number,
  failure?: { error: string; errorType: string },
): ConversationTurnResult {
  const common = {
    workflowId: conversationId,
    toolExecutions: run.toolExecutions.map(withoutHistoryMark),
    iterations: run.iterations,
    usage: run.usage,
    turn,
    ...(run.buildId ? { buildId: run.buildId } : {}),
  };
  if (failure) return { ...common, status: 'failed', content: null, ...failure };
  const step = nextStep(run);
  if (step.type !== 'finish') throw new Error(`turnResult: the turn is not finished (next step: ${step.type})`);
  const result: ConversationTurnResult = { ...common, status: step.status, content: step.content };
  if (run.output !== undefined) result.output = run.output;
  if (run.limits.budget) result.budget = budgetReport(run.limits.budget, budgetSpent(run));
  if (run.agentVersion) result.agentVersion = run.agentVersion;
  return result;
}

/** Records a signalled message that could not be accepted. */
export function rejectMessage(conv: ConversationState, error: string): ConversationState {
  return { ...conv, rejectedMessages: { count: conv.rejectedMessages.count + 1, lastError: error } };
}

/** What continue-as-new carries: the memory window (whole tool groups) and the counters. */
export function carryOver(conv: ConversationState, runId: string): ConversationCarry {
  // With a token budget: the summary and what the model sees after it; else the message window.
  const start =
    conv.options.maxPromptTokens === undefined
      ? memoryWindowStart(conv.messages, memoryWindow(conv))
      : conv.context
        ? Math.min(conv.context.from, conv.context.summary)
        : 0;
  const context = conv.context && { from: conv.context.from - start, summary: conv.context.summary - start };
  const older = carriedBranches(conv, runId);
  return {
    tools: conv.tools ?? [],
    transcriptStart: conv.transcriptStart + start,
    messages: conv.messages.slice(start),
    turns: conv.turns,
    usage: conv.usage,
    toolExecutionCount: conv.toolExecutionCount,
    runs: conv.runs + 1,
    previousRunId: runId,
    rejectedMessages: conv.rejectedMessages,
    ...(conv.revision ? { revision: conv.revision } : {}),
    ...(conv.agentVersion ? { agentVersion: conv.agentVersion } : {}),
    ...(conv.given ? { given: conv.given } : {}),
    ...(conv.lastCall ? { lastCall: conv.lastCall } : {}),
    ...(context ? { context } : {}),
    ...(conv.lastPrompt ? { lastPrompt: conv.lastPrompt } : {}),
    ...(conv.compactions ? { compactions: conv.compactions } : {}),
    ...(conv.workspace ? { workspace: conv.workspace } : {}),
    ...(conv.branch ? { branch: conv.branch } : {}),
    ...(conv.branchesMade ? { branchesMade: conv.branchesMade } : {}),
    ...(older ? { olderBranches: older } : {}),
  };
}
