import { TENANT_BUDGET_STOP_MESSAGE, type TenantBudgetReport } from '../fleet/tenant-ledger';
import { approvalOf, pendingApprovals } from '../tool-calls/approvals';
import { policyRequests } from '../policies/policies';
import {
  shouldReturnImmediately,
  READ_TOOL_OUTPUT,
  readToolOutput,
  toolResultView,
  toolErrorText,
} from '../messages/tool-results';
import { REACT_PARSE_ERROR_TOOL } from './react-parser';
import { maxToolResultTokens, runLimits } from './run-input';
import { contextView, densityOf, estimateTokens } from '../context/compaction';
import { contextRange, plannedCompaction, withCounts } from '../context/run-context';
import {
  iterationLimitReached,
  LIMIT_STOP_MESSAGE,
  BUDGET_STOP_MESSAGE,
  budgetExhausted,
  budgetSpent,
  wouldPassBudget,
} from '../state/limits';
import { parseToolArguments } from '../messages/tool-arguments';
import { addUsage, noUsage, usageOfReply } from '../messages/usage';
import { nextGuardrailStep } from '../guardrails/guardrails';
import type { RunGuardrails } from '../state/guardrail-types';
import type { CurrentAgent, NextStep, PlannedToolCall, RunPhase, RunState } from '../state/run-state';
import type { AgentInput } from '../state/run-options';
import type { ChatMessage, ToolCall } from '../messages/chat-message';
import type { ModelReply } from '../messages/model-reply';
import type { ToolExecution, ToolOutcome } from '../messages/tool-results';
import type { ToolInfo } from '../messages/tool-info';
import { runWorkspace, wantsWorkspace, workspaceAt } from '../workspace/workspace-options';

/**
 * The agent loop as a pure state machine. The workflow asks {@link nextStep} what to do, does it
 * (an activity, a timer), and folds the outcome back in with {@link applyModelReply} or
 * {@link applyToolOutcomes}. Nothing here touches Temporal or IO, so every decision is unit-testable
 * and replays identically.
 */

/** Starts a run from a validated input and the tools resolved for it. */
export function startRun(input: AgentInput, tools: ToolInfo[], agentVersion?: string): RunState {
  const messages: ChatMessage[] = [];
  if (input.system) messages.push({ role: 'system', content: input.system });
  // A re-run starts where the recorded run was before the model call it starts at.
  if (input.rerun) messages.push(...input.rerun.messages);
  else
    messages.push(
      input.images?.length
        ? { role: 'user', content: input.message, images: input.images }
        : { role: 'user', content: input.message },
    );
  return {
    ...(agentVersion ? { agentVersion } : {}),
    limits: runLimits(input),
    tools,
    messages,
    iterations: 0,
    toolExecutions: [],
    usage: noUsage(),
    phase: { kind: 'model' },
    agent: currentAgent(input),
    ...runGuardrails(input),
    ...(input.rerun?.toolCalls?.length ? { recorded: input.rerun.toolCalls } : {}),
    // A re-run starts from the workspace as it was before the model call it starts at.
    ...(wantsWorkspace(input.workspace, tools)
      ? {
          workspace: runWorkspace(
            typeof input.workspace === 'object' ? input.workspace : true,
            input.rerun ? workspaceAt(input.rerun.messages) : undefined,
          ),
        }
      : {}),
  };
}

/** The guardrails a run applies, when it has any (runs without keep their state's shape). */
function runGuardrails(input: AgentInput): { guardrails?: RunGuardrails } {
  const g: RunGuardrails = {};
  if (input.inputGuardrails?.length) g.input = input.inputGuardrails;
  if (input.outputGuardrails?.length) g.output = input.outputGuardrails;
  if (input.toolGuardrails?.length) g.tool = input.toolGuardrails;
  return Object.keys(g).length ? { guardrails: g } : {};
}

/** The agent a run starts as: its input's agent name, model settings, tool calling and output schema (those set). */
function currentAgent(input: AgentInput): CurrentAgent {
  const agent: CurrentAgent = {};
  if (input.agent !== undefined) agent.name = input.agent;
  if (input.modelSettings) agent.modelSettings = input.modelSettings;
  if (input.toolCalling) agent.toolCalling = input.toolCalling;
  if (input.output) agent.output = input.output;
  return agent;
}

/** Decides the next step. Pure: calling it twice gives the same answer. */
export function nextStep(state: RunState): NextStep {
  const { phase } = state;
  if (phase.kind === 'done') return { type: 'finish', status: phase.status, content: phase.content };
  // Guardrails first: the input before any model call, an answer before it ends the run, tool calls before approvals.
  const guard = nextGuardrailStep(state);
  if (guard) return guard;
  if (phase.kind === 'tools') {
    // The policies next: a forbidden call must never run, an asked one waits with the approvals.
    if (state.policies && !phase.policed) {
      const requests = policyRequests(state, phase.calls);
      if (requests.length > 0) return { type: 'check_policies', requests };
    }
    // Approvals come first: a rejected call must never run, and results go back to the LLM together anyway.
    const pending = pendingApprovals(phase.calls);
    return pending.length > 0 ? { type: 'await_approval', pending } : { type: 'run_tools', calls: phase.calls };
  }
  const next = nextModelStep(state);
  // A request that would pass maxPromptTokens: the oldest messages are summarised first.
  return next.type === 'call_model' ? (plannedCompaction(state) ?? next) : next;
}

/** The next step while the run waits for the model: a model call, or the end at a limit. */
function nextModelStep(state: RunState): NextStep {
  const { limits } = state;
  const toolNames = state.tools.map((t) => t.name);
  // A budget the next call would pass: stop, or one last call without tools to wrap up.
  if (limits.budget && wouldPassBudget(limits.budget, budgetSpent(state), state.lastCall, grownSinceLastCall(state))) {
    // Only the turn that reaches the budget wraps up: a later turn of the conversation finds it spent and ends.
    const spentBefore = state.spentBefore !== undefined && budgetExhausted(limits.budget, state.spentBefore);
    if (limits.onBudget === 'wrap_up' && state.iterations < limits.maxIterations && !spentBefore)
      return { type: 'call_model', iteration: state.iterations + 1, toolNames: [], final: true, wrapUp: true };
    return { type: 'finish', status: 'budget_exceeded', content: BUDGET_STOP_MESSAGE };
  }
  if (!iterationLimitReached(state.iterations, limits.maxIterations)) {
    return { type: 'call_model', iteration: state.iterations + 1, toolNames, final: false };
  }
  if (limits.onLimit === 'generate' && state.iterations === limits.maxIterations) {
    // LangChain's early_stopping_method="generate": one last pass, with no tools to call.
    return { type: 'call_model', iteration: state.iterations + 1, toolNames: [], final: true };
  }
  return { type: 'finish', status: 'max_iterations', content: LIMIT_STOP_MESSAGE };
}

/** Tokens (roughly) of the messages after the last assistant message: what the next prompt adds to the last. */
function grownSinceLastCall(state: RunState): number {
  if (!state.lastCall) return 0;
  let i = state.messages.length;
  while (i > 0 && state.messages[i - 1].role !== 'assistant') i--;
  return estimateTokens(state.messages.slice(i));
}

/** The estimate of the messages a model call sent, against which the provider's count calibrates. */
function sentTokens(state: RunState): number {
  const view = contextView(state.messages, contextRange(state));
  return estimateTokens(view, densityOf(view));
}

/** Folds an LLM reply into the state: an answer ends the run, tool calls become the next step. */
export function applyModelReply(
  state: RunState,
  step: Extract<NextStep, { type: 'call_model' }>,
  reply: ModelReply,
): RunState {
  const iterations = state.iterations + 1;
  const usage = addUsage(state.usage, usageOfReply(reply.usage, reply.model));
  const models = reply.model ? { models: [...(state.models ?? []), reply.model] } : {};
  // Memory by tokens: the messages sent keep the tokens the activity counted (absent in older runs).
  if (reply.counted?.length) state = { ...state, messages: withCounts(state.messages, reply.counted) };
  // Only with maxPromptTokens, so states of other runs keep their shape: the provider's count calibrates the estimates.
  if (state.limits.maxPromptTokens !== undefined && reply.usage.promptTokens > 0)
    Object.assign(models, {
      lastPrompt: { tokens: reply.usage.promptTokens, estimated: sentTokens(state) },
    });
  // Only under a budget, so states of runs without one keep their shape.
  if (state.limits.budget)
    Object.assign(models, {
      lastCall: {
        tokens: reply.usage.totalTokens,
        ...(reply.usage.costUsd !== undefined ? { costUsd: reply.usage.costUsd } : {}),
      },
    });
  const toolCalls = step.final ? [] : withUniqueIds(reply.toolCalls, iterations, state.messages);
  const assistant: ChatMessage =
    toolCalls.length > 0
      ? { role: 'assistant', content: reply.content, tool_calls: toolCalls }
      : { role: 'assistant', content: reply.content ?? '' };
  // Reasoning goes back to its provider with the rest of the conversation (absent in older runs).
  if (reply.reasoning?.length) assistant.reasoning = reply.reasoning;
  const messages = [...state.messages, assistant];
  let phase: RunPhase;
  if (step.final && step.wrapUp)
    phase = { kind: 'done', status: 'budget_exceeded', content: reply.content || BUDGET_STOP_MESSAGE };
  else if (step.final) phase = { kind: 'done', status: 'max_iterations', content: reply.content || LIMIT_STOP_MESSAGE };
  else if (toolCalls.length === 0 && reply.outputError !== undefined) {
    // Structured output that does not parse or validate: the LLM gets the exact error and tries
    // again, which costs an iteration like any other model call.
    return {
      ...state,
      iterations,
      usage,
      ...models,
      messages: [...messages, { role: 'user', content: outputCorrection(reply.outputError) }],
      phase: { kind: 'model' },
    };
  } else if (toolCalls.length === 0 && state.guardrails?.output?.length) {
    // Output guardrails check the answer before the run ends with it.
    phase = {
      kind: 'answered',
      content: reply.content ?? '',
      ...(reply.output !== undefined ? { output: reply.output } : {}),
    };
  } else if (toolCalls.length === 0) {
    const done = {
      ...state,
      iterations,
      usage,
      ...models,
      messages,
      phase: { kind: 'done', status: 'completed', content: reply.content ?? '' } as RunPhase,
    };
    return reply.output === undefined ? done : { ...done, output: reply.output };
  } else {
    const offered = reply.providedTools?.length ? [...state.tools, ...reply.providedTools] : state.tools;
    // A re-run: each recorded call answers at most one identical call.
    const pool = state.recorded ? [...state.recorded] : undefined;
    phase = { kind: 'tools', calls: toolCalls.map((call) => planToolCall(call, offered, state, pool)) };
    if (pool) Object.assign(models, { recorded: pool });
  }
  return { ...state, iterations, usage, ...models, messages, phase };
}

/**
 * Folds the outcomes of the planned tool calls (same order) into the state: tool messages in call
 * order with matching `tool_call_id`s, executions for the result, and the immediate-return rule.
 */
export function applyToolOutcomes(state: RunState, outcomes: ToolOutcome[]): RunState {
  if (state.phase.kind !== 'tools') throw new Error('applyToolOutcomes: no tool calls are pending');
  const calls = state.phase.calls;
  if (outcomes.length !== calls.length)
    throw new Error(`applyToolOutcomes: expected ${calls.length} outcomes, got ${outcomes.length}`);
  const executions = calls.map((c, i): ToolExecution => {
    const o = outcomes[i];
    const execution: ToolExecution = {
      id: c.call.id,
      name: c.call.function.name,
      arguments: c.arguments,
      result: o.result,
      error: o.error,
      immediate: c.immediate,
    };
    if (o.value !== undefined) execution.value = o.value;
    if (o.recorded) execution.resultInHistory = true;
    if (o.childWorkflowId) execution.childWorkflowId = o.childWorkflowId;
    if (o.images?.length) execution.images = o.images;
    if (o.attempts !== undefined && o.attempts > 1) {
      execution.attempts = o.attempts;
      if (o.workerLosses) execution.workerLosses = o.workerLosses;
    }
    if (c.approval) execution.approval = c.approval.status === 'rejected' ? 'rejected' : 'approved';
    if (o.workspace) execution.workspace = o.workspace;
    return execution;
  });
  // A long output reaches the model as a bounded view; the execution keeps all of it.
  const max = maxToolResultTokens(state.limits);
  const pageable = state.tools.some((t) => t.builtin === READ_TOOL_OUTPUT);
  const toolMessages = executions.map((e, i): ChatMessage => {
    const content = toolResultView(e.result, max, e.id, pageable);
    // Whole JSON of the tool's value: clients read the value back (a view that was cut is text).
    const json = outcomes[i].json && content === e.result ? { json: true as const } : {};
    // The state the call committed goes with its result: a fork or rerun from here starts from it.
    const workspace = e.workspace ? { workspace: e.workspace.ref } : {};
    return e.images
      ? { role: 'tool', tool_call_id: e.id, content, images: e.images, ...json, ...workspace }
      : { role: 'tool', tool_call_id: e.id, content, ...json, ...workspace };
  });
  const phase: RunPhase = shouldReturnImmediately(calls, outcomes)
    ? { kind: 'done', status: 'immediate', content: null }
    : { kind: 'model' };
  const next: RunState = {
    ...state,
    messages: [...state.messages, ...toolMessages],
    toolExecutions: [...state.toolExecutions, ...executions],
    phase,
  };
  // The workflow runs a step's workspace calls one after another, so the last commit holds them all.
  const committed = executions.filter((e) => e.workspace).pop()?.workspace;
  if (committed && next.workspace) next.workspace = { ...next.workspace, ref: committed.ref };
  // Agents called as tools: their tokens count toward this run's.
  const childUsage = outcomes.filter((o) => o.usage);
  return childUsage.length ? { ...next, usage: childUsage.reduce((u, o) => addUsage(u, o.usage!), state.usage) } : next;
}

/**
 * Ends the run early: its `maxExecutionTime` ran out, or a client cancelled the turn. Tool calls
 * still pending get a result saying so, because a conversation goes on after this, and the LLM
 * API rejects an assistant message whose tool calls have no results.
 */
export function applyInterruption(state: RunState, status: 'time_limit' | 'cancelled', partial?: string): RunState {
  const text =
    status === 'time_limit'
      ? 'the run reached its time limit before this tool call finished'
      : 'the user cancelled this turn before this tool call finished';
  const pending = state.phase.kind === 'tools' ? state.phase.calls : [];
  const toolMessages = pending.map((c): ChatMessage => ({
    role: 'tool',
    tool_call_id: c.call.id,
    content: toolErrorText(text),
  }));
  const content = status === 'time_limit' ? LIMIT_STOP_MESSAGE : null;
  // A model call stopped mid-answer: what it had written stays, marked, so the transcript shows what the person saw.
  const stopped: ChatMessage[] = partial ? [{ role: 'assistant', content: partial, stopped: true }] : [];
  return {
    ...state,
    messages: [...state.messages, ...toolMessages, ...stopped],
    phase: { kind: 'done', status, content: partial || content },
  };
}

/** The message that sends an invalid structured answer back to the LLM. */
export function outputCorrection(error: string): string {
  return `Your answer is not valid: ${error}\nReply again with only the JSON value that matches the required schema, nothing else.`;
}

function planToolCall(
  call: ToolCall,
  tools: ToolInfo[],
  state: RunState,
  recorded?: NonNullable<RunState['recorded']>,
): PlannedToolCall {
  const parsed = parseToolArguments(call.function.arguments);
  const args = parsed.ok ? parsed.value : {};
  if (call.function.name === REACT_PARSE_ERROR_TOOL) {
    return {
      call,
      arguments: args,
      immediate: false,
      resolved: { result: String(args.observation ?? ''), error: true },
    };
  }
  const tool = tools.find((t) => t.name === call.function.name);
  if (!tool) {
    const available = tools.map((t) => t.name).join(', ') || 'none';
    return {
      call,
      arguments: args,
      immediate: false,
      resolved: {
        result: toolErrorText(`there is no tool named "${call.function.name}". Available tools: ${available}.`),
        error: true,
      },
    };
  }
  // The built-in reader of long outputs is answered here, from the run's own executions.
  if (tool.builtin === READ_TOOL_OUTPUT)
    return {
      call,
      arguments: args,
      immediate: false,
      resolved: readToolOutput(state.toolExecutions, args, maxToolResultTokens(state.limits)),
    };
  // A re-run: the recorded output of an identical call, without running the tool again. Not for
  // a call in the workspace: its recorded output would leave its changes out of the workspace, so
  // it runs again, from the state the re-run is in.
  const match = tool.workspace
    ? -1
    : (recorded?.findIndex((r) => r.name === tool.name && sameJson(r.arguments, args)) ?? -1);
  if (match >= 0) {
    const [r] = recorded!.splice(match, 1);
    return { call, arguments: args, immediate: tool.immediate, resolved: { result: r.result, error: r.error } };
  }
  const planned: PlannedToolCall = { call, arguments: args, immediate: tool.immediate, tool };
  const approval = approvalOf(tool);
  if (approval) planned.approval = approval;
  return planned;
}

/**
 * Some OpenAI-compatible servers omit tool-call ids or reuse them (`call_0` on every turn). A
 * `tool_call_id` must pair one call with one result, so missing or repeated ids are replaced by
 * ids derived from the iteration, which stay stable on replay.
 */
function withUniqueIds(calls: ToolCall[], iteration: number, history: ChatMessage[]): ToolCall[] {
  const seen = new Set<string>();
  for (const m of history) if (m.role === 'assistant') for (const c of m.tool_calls ?? []) seen.add(c.id);
  return calls.map((c, i) => {
    let id = c.id;
    if (!id || seen.has(id)) {
      id = `call_${iteration}_${i}`;
      // Conversations restart iterations every turn, so a derived id can already exist.
      for (let n = 2; seen.has(id); n++) id = `call_${iteration}_${i}_${n}`;
    }
    seen.add(id);
    return { id, type: 'function', function: { name: c.function.name, arguments: c.function.arguments ?? '' } };
  });
}

/** Whether two JSON values are the same, whatever the order of their keys. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}

/**
 * The run stops because its tenant's budget is spent (its model call was refused by the tenant's
 * ledger before it asked the model): status `budget_exceeded`, with the tenant's figures.
 */
export function stopForTenantBudget(state: RunState, report: TenantBudgetReport): RunState {
  return {
    ...state,
    tenantBudget: report,
    phase: { kind: 'done', status: 'budget_exceeded', content: TENANT_BUDGET_STOP_MESSAGE },
  };
}
