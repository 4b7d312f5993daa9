import {
  condition,
  isCancellation,
  ParentClosePolicy,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { AgentActivities } from '../activities';
import {
  agentToolMessage,
  agentToolOutcome,
  agentToolWorkflowId,
  applyHandoff,
  chosenHandoff,
  handoffOutcome,
  runSummary,
  runSearchValues,
  type ResolvedAgent,
  applyModelReply,
  applyToolOutcomes,
  approvalProblem,
  decideApproval,
  expireApprovals,
  modelCallSummary,
  modelCallTimeoutMs,
  modelContextRange,
  nextStep,
  pendingApprovals,
  toolCallSummary,
  toolErrorText,
  type JsonSchemaObject,
  type ModelSettings,
  type PendingApproval,
  type PlannedToolCall,
  type RunState,
  type ToolCallingMode,
  type ToolOutcome,
  type EventLog,
  type ModelReply,
  type NextStep,
} from '../core';
import { decideApprovalUpdate, eventsQuery, pendingApprovalsQuery, textBatchSignal } from './definitions';
import { executeAgent } from './execute-agent';
import { failureInfo, toolFailureMessage } from './failure-info';
import type { SharedMessages } from './message-sink';
import type { SearchAttributes } from './search-attributes';

/**
 * How long an activity may go without a heartbeat before Temporal assumes its worker died and
 * retries it elsewhere. Model and tool calls heartbeat every 2 s (throttled to one per 2 s), so 8 s
 * allows for a missed beat while a crashed worker costs a call about 8 s plus the retry interval,
 * not the 30 s it used to. A tool must therefore not block the event loop for 8 s (use a worker
 * thread for heavy CPU work).
 */
const HEARTBEAT_TIMEOUT = '8s';

/**
 * Model calls: LLMs can take minutes, and 429/5xx/connection failures are worth retrying with
 * back-off. Two bounds end a call that cannot succeed: at most 8 attempts, and the run's
 * `modelCallTimeout` (default 5 minutes) of time spent waiting for the model, all attempts
 * together, which the activity counts (see `ModelTimeBudget`), so a hung LLM cannot hold a run
 * for 8 × the request timeout. Not a schedule-to-close timeout, which counts wall-clock time: an
 * outage of the Temporal server used it up, and every run in flight failed when the server came
 * back. Each attempt is bounded by its heartbeats (a lost worker) and start-to-close.
 */
function modelCallOptions(state: RunState, summary: string): ActivityOptions {
  return {
    startToCloseTimeout: Math.max(FIVE_MINUTES, modelCallTimeoutMs(state.limits)),
    heartbeatTimeout: HEARTBEAT_TIMEOUT,
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: MODEL_CALL_ATTEMPTS },
    summary,
  };
}

const FIVE_MINUTES = 5 * 60_000;

/** Attempts of one model call; clients show it in progress messages. */
export const MODEL_CALL_ATTEMPTS = 8;

// Tool and agent resolution are registry lookups: a local activity keeps each to one marker in history.
export const { resolveTools, resolveAgent } = proxyLocalActivities<AgentActivities>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 3 } });

// Both are always called with per-call options (a summary, the tool's timeout) via executeWithOptions.
const { callModel, executeTool } = proxyActivities<AgentActivities>({ startToCloseTimeout: '5m' });
// Tools declared `local: true`; also always called with per-call options.
const { executeTool: executeToolLocally } = proxyLocalActivities<AgentActivities>({ startToCloseTimeout: '1m' });

/** The run being driven; the loop replaces `state` after every step, handlers and queries read it. */
export interface RunRef {
  state: RunState;
}

/** What {@link runLoop} needs besides the run: where it runs, its settings, and where events go. */
export interface RunContext {
  workflowId: string;
  runId: string;
  settings?: ModelSettings;
  toolCalling?: ToolCallingMode;
  agent?: string;
  output?: JsonSchemaObject;
  shared: SharedMessages;
  /** The workflow's event stream, and the turn this run is (1 for a one-shot run). */
  events: EventLog;
  turn: number;
  /** Whether model calls stream their text as they write it (the run's `stream` option). */
  stream: boolean;
  /** A conversation (its agents called as tools get the turn in their workflow ids). */
  conversation?: boolean;
  /** The run's search attributes, upserted as its status changes. */
  searchAttributes?: SearchAttributes;
}

/**
 * Drives one run of the agent loop to its end: asks the core for the next step and carries it
 * out (a model call, tool calls, waiting for approvals). Shared by one-shot runs and conversation
 * turns. Cancellation of the enclosing scope (time limit, a cancelled turn) propagates out.
 */
export async function runLoop(run: RunRef, ctx: RunContext): Promise<void> {
  for (let step = nextStep(run.state); step.type !== 'finish'; step = nextStep(run.state)) {
    trackSearchAttributes(run.state, ctx, { step });
    if (step.type === 'call_model') {
      // The model call reads them from its worker's cache instead of querying the workflow.
      ctx.shared.share(run.state.messages, run.state.revision);
      // After a handoff, the agent handed to speaks: its model settings, tool calling and output schema.
      const current = run.state.agent;
      const toolCalling = current?.toolCalling ?? ctx.toolCalling;
      const agent = current?.name ?? ctx.agent;
      const range = modelContextRange(run.state.messages, run.state.memoryWindow);
      const call = ctx.events.startModelCall(ctx.turn, step.iteration);
      let reply: ModelReply;
      try {
        reply = await callModel.executeWithOptions(modelCallOptions(run.state, modelCallSummary(step.iteration, step.final)), [
          {
            workflowId: ctx.workflowId,
            runId: ctx.runId,
            ...range,
            toolNames: step.toolNames,
            settings: current ? current.modelSettings : ctx.settings,
            toolCalling,
            // Only when set, so model-call inputs of plain runs keep their recorded shape.
            ...(agent ? { agent } : {}),
            ...(ctx.output ? { output: ctx.output } : {}),
            ...(ctx.stream ? { stream: { call } } : {}),
            ...(run.state.revision ? { revision: run.state.revision } : {}),
            ...(run.state.limits.modelCallTimeoutMs !== undefined ? { timeoutMs: run.state.limits.modelCallTimeoutMs } : {}),
          },
        ]);
      } catch (err) {
        ctx.events.abandonModelCall(call);
        throw err;
      }
      ctx.events.finishModelCall(call, shownText(reply, toolCalling), reply.attempt);
      run.state = applyModelReply(run.state, step, reply);
    } else if (step.type === 'await_approval') {
      for (const p of step.pending) ctx.events.emit(ctx.turn, { type: 'approval_requested', callId: p.callId, tool: p.name, arguments: p.arguments, summary: p.summary });
      await awaitApprovals(run, step.pending, ctx);
    } else {
      for (const c of step.calls) {
        const child = c.tool?.agent ? { childWorkflowId: childWorkflowIdOf(c, ctx) } : {};
        ctx.events.emit(ctx.turn, { type: 'tool_call_started', id: c.call.id, name: c.call.function.name, arguments: c.arguments, ...child });
      }
      // At most one handoff per reply goes ahead: the first the LLM asked for.
      const handoffAt = chosenHandoff(step.calls);
      const chosen = handoffAt >= 0 ? step.calls[handoffAt].tool!.handoff : undefined;
      let target: ResolvedAgent | undefined;
      const outcomeOf = (planned: PlannedToolCall, i: number): Promise<ToolOutcome> | ToolOutcome => {
        const handoff = planned.tool?.handoff;
        if (handoff === undefined) return runTool(planned, ctx);
        if (i !== handoffAt) return handoffOutcome(handoff, chosen);
        return resolveHandoff(handoff).then((resolved) => {
          if ('failure' in resolved) return handoffOutcome(handoff, undefined, resolved.failure);
          target = resolved;
          return handoffOutcome(handoff, chosen);
        });
      };
      // Promise.resolve returns a promise as it is, so a tool call costs no extra promise here.
      const finished = (planned: PlannedToolCall, i: number): Promise<ToolOutcome> =>
        Promise.resolve(outcomeOf(planned, i)).then(
          (outcome) => {
            ctx.events.emit(ctx.turn, { type: 'tool_call_finished', id: planned.call.id, name: planned.call.function.name, result: outcome.result, error: outcome.error });
            return outcome;
          },
          (err) => {
            // Cancelled (the turn, its time limit): subscribers see the call end.
            ctx.events.emit(ctx.turn, { type: 'tool_call_finished', id: planned.call.id, name: planned.call.function.name, result: 'cancelled', error: true });
            throw err;
          },
        );
      // Most replies call one tool, which needs no Promise.all (see runTool on what promises cost here).
      const outcomes = step.calls.length === 1 ? [await finished(step.calls[0], 0)] : await Promise.all(step.calls.map(finished));
      run.state = applyToolOutcomes(run.state, outcomes);
      if (target) {
        const from = run.state.agent?.name ?? ctx.agent;
        run.state = applyHandoff(run.state, target);
        ctx.events.emit(ctx.turn, { type: 'handoff', ...(from ? { from } : {}), to: target.settings.name });
      }
    }
  }
}

/**
 * Upserts the run's search attributes as they are now (what changed, if anything). `status`
 * overrides the state's for runs that end by failing or being cancelled; `step` is the step the
 * run is about to take.
 */
export function trackSearchAttributes(
  state: RunState,
  ctx: Pick<RunContext, 'searchAttributes' | 'agent' | 'settings'>,
  options: { status?: 'failed' | 'cancelled'; step?: NextStep } = {},
): void {
  const attributes = ctx.searchAttributes;
  if (!attributes) return;
  const values = runSearchValues(state, { agent: ctx.agent, model: ctx.settings?.model, defaultModel: attributes.defaultModel });
  attributes.update(options.status ? { ...values, AgentStatus: options.status } : values, options.step);
}

/** The handoff target's settings and tools (a recorded local activity), or why it cannot be had. */
async function resolveHandoff(agent: string): Promise<ResolvedAgent | { failure: string }> {
  try {
    return await resolveAgent({ agent });
  } catch (err) {
    if (isCancellation(err)) throw err;
    return { failure: failureInfo(err).error };
  }
}

/** The workflow id of the child run an agent tool call starts. */
function childWorkflowIdOf(planned: PlannedToolCall, ctx: RunContext): string {
  return agentToolWorkflowId(ctx.workflowId, planned.tool!.agent!, planned.call.id, ctx.conversation ? ctx.turn : undefined);
}

/**
 * Runs a named agent as a child workflow for one tool call; its answer is the call's result, and
 * its failure a tool error (see `agentToolOutcome`). The child is cancelled with this run.
 */
async function runAgentTool(planned: PlannedToolCall, ctx: RunContext): Promise<ToolOutcome> {
  const agent = planned.tool!.agent!;
  const ask = agentToolMessage(agent, planned.arguments);
  if (!ask.ok) return ask.outcome;
  const workflowId = childWorkflowIdOf(planned, ctx);
  const result = await executeAgent({
    agent,
    message: ask.message,
    workflowId,
    childOptions: { parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL, staticSummary: `${agent}: ${runSummary(ask.message)}` },
  });
  return agentToolOutcome(agent, workflowId, result);
}

/** The text a reply shows a person: a ReAct step that calls a tool shows none (its text is the model's reasoning). */
function shownText(reply: ModelReply, toolCalling: ToolCallingMode | undefined): string {
  if (toolCalling === 'react' && reply.toolCalls.length > 0) return '';
  return reply.content ?? '';
}

/**
 * Waits, durably and without holding a worker, until every pending call is decided; the approval
 * timeout (a durable timer) rejects whatever is still pending.
 */
async function awaitApprovals(run: RunRef, pending: PendingApproval[], ctx: RunContext): Promise<void> {
  setCurrentDetails(approvalDetails(pending));
  try {
    const decided = () => pendingApprovals(callsOf(run.state)).length === 0;
    const timeoutMs = run.state.limits.approvalTimeoutMs;
    if (timeoutMs === undefined) await condition(decided);
    else if (!(await condition(decided, timeoutMs))) {
      const reason = `no decision within the approval timeout (${timeoutMs} ms)`;
      for (const p of pendingApprovals(callsOf(run.state))) ctx.events.emit(ctx.turn, { type: 'approval_decided', callId: p.callId, approved: false, reason });
      run.state = expireApprovals(run.state, reason);
    }
  } finally {
    setCurrentDetails('');
  }
}

/** The Temporal UI's "current details": what a person is asked to decide, and how. */
function approvalDetails(pending: PendingApproval[]): string {
  const lines = pending.map((p) => `- \`${p.callId}\`: ${p.summary}`);
  const id = workflowInfo().workflowId;
  return ['**Awaiting approval**', ...lines, '', `Decide with \`npx durable-agents approve|reject ${id} <callId>\`, the HTTP API (\`POST .../${id}/approvals/<callId>\`) or the \`decideApproval\` update.`].join('\n');
}

function callsOf(state: RunState): PlannedToolCall[] {
  return state.phase.kind === 'tools' ? state.phase.calls : [];
}

/**
 * Registers the `events` query and the text-batch signal of a workflow's event stream. The signal
 * cannot be refused; the log itself drops batches of calls and attempts that are over.
 */
export function handleEvents(events: EventLog): void {
  setHandler(eventsQuery, (request) => events.read(request));
  setHandler(textBatchSignal, (batch) => void events.applyTextBatch(batch));
}

/**
 * Registers the approval Update and query on a run that may be absent (a conversation between
 * turns); each decision is also an `approval_decided` event of the run's turn. The validator
 * rejects unknown call ids before anything reaches history.
 */
export function handleApprovals(current: () => { run: RunRef; turn: number } | undefined, events: EventLog): void {
  setHandler(pendingApprovalsQuery, () => {
    const active = current();
    return active ? pendingApprovals(callsOf(active.run.state)) : [];
  });
  setHandler(
    decideApprovalUpdate,
    (decision) => {
      const { run, turn } = current()!;
      run.state = decideApproval(run.state, decision);
      events.emit(turn, { type: 'approval_decided', callId: decision.callId, approved: decision.approve, ...(decision.reason ? { reason: decision.reason } : {}) });
      return { callId: decision.callId, approved: decision.approve, stillPending: pendingApprovals(callsOf(run.state)).length };
    },
    {
      validator: (decision) => {
        const problem = approvalProblem(current()?.run.state, decision);
        if (problem) throw new Error(problem);
      },
    },
  );
}

/**
 * Runs one tool call; its failure becomes a message the LLM can read, never a workflow failure.
 *
 * Written with `then` rather than `async`/`await`, as is the one-call path of the loop: the SDK
 * records where every promise of workflow code was made (for the `__stack_trace` query, the Web
 * UI's stack trace), and that costs about 0.2 ms of the workflow task per promise on a small
 * machine. An async function and its await make two where `then` makes one; a tool step is down
 * from seven promises of ours to three (see the Performance section of the README).
 */
function runTool(planned: PlannedToolCall, ctx: RunContext): Promise<ToolOutcome> | ToolOutcome {
  if (planned.resolved) return planned.resolved;
  if (planned.tool.agent !== undefined) return runAgentTool(planned, ctx);
  const { tool, call } = planned;
  const retry = { maximumAttempts: tool.retry.maximumAttempts, initialInterval: tool.retry.initialIntervalMs, backoffCoefficient: 2 };
  const summary = toolCallSummary(call.function.name, planned.arguments);
  const input = { name: call.function.name, toolCallId: call.id, arguments: call.function.arguments };
  // Temporal counts every attempt; the activity counts the tool's own failures and stops at the
  // tool's limit, so attempts whose worker was lost get an allowance of their own here.
  const withLosses = { ...retry, maximumAttempts: retry.maximumAttempts > 0 ? retry.maximumAttempts + WORKER_LOSSES_PER_CALL : 0 };
  const execution = tool.local
    ? executeToolLocally.executeWithOptions({ startToCloseTimeout: tool.timeoutMs, retry, summary }, [input])
    : executeTool.executeWithOptions({ startToCloseTimeout: tool.timeoutMs, heartbeatTimeout: HEARTBEAT_TIMEOUT, retry: withLosses, summary }, [input]);
  return execution.then(
    ({ toolCallId: _, ...recorded }) => ({ ...recorded, recorded: true }), // the activity's result is in history: the run's final result can leave it out
    (err) => {
      if (isCancellation(err)) throw err;
      return { result: toolErrorText(toolFailureMessage(err, tool.timeoutMs, HEARTBEAT_TIMEOUT)), error: true };
    },
  );
}

/**
 * Attempts of a tool call whose worker was lost (crashed, killed, cut off: its heartbeats
 * stopped), on top of the tool's own attempts, which count only its failures.
 */
export const WORKER_LOSSES_PER_CALL = 10;

