import { delegationOf, grantedWorkspace } from '../core/policies/policies';
import { condition, isCancellation, ParentClosePolicy, sleep } from '@temporalio/workflow';
import { agentToolMessage, agentToolOutcome, agentToolWorkflowId } from '../core/tool-calls/agent-tools';
import { applyHandoff, chosenHandoff, handoffOutcome } from '../core/tool-calls/handoffs';
import { applyToolOutcomes } from '../core/run/agent-loop';
import {
  endWaiting,
  planWait,
  startWaiting,
  waitOutcome,
  waitSummary,
  type DeliveredEvent,
  SLEEP,
  WAIT_FOR_EVENT,
} from '../core/time/durable-waits';
import { runSummary, toolCallSummary } from '../core/context/summaries';
import { toolErrorText, EVENT_RESULT_TOKENS, toolResultView, type ToolOutcome } from '../core/messages/tool-results';
import type { AgentInput } from '../core/state/run-options';
import type { PlannedToolCall, RunState } from '../core/state/run-state';
import type { ResolvedAgent } from '../core/state/agents';
import {
  askPerson,
  pendingApprovals,
  personAnswer,
  setApprovalDeadline,
  settleQuestion,
} from '../core/tool-calls/approvals';
import { countModelAnswer } from '../core/tool-calls/tool-questions';
import type { ToolCallInput } from '../contracts/activity-interface';
import type { RunWorkspace } from '../core/state/workspace-types';
import { awaitApprovals } from './approvals';
import { modelCallOptions } from './model-steps';
import {
  executeTool,
  executeToolLocally,
  HEARTBEAT_TIMEOUT,
  sampleModel,
  resolveAgent,
  WORKER_LOSSES_PER_CALL,
} from './activity-proxies';
import { executeAgent } from './execute-agent';
import { failureInfo, toolFailureMessage } from './failure-info';
import type { RunContext, RunRef } from './run-context';

/**
 * Carries out a step's tool calls and returns the run's next state: announces them, runs each (a
 * tool activity, an agent's child run, a durable wait, or a handoff), announces each end, then
 * folds the outcomes in, and the handoff when one went ahead. Durable waits show in `run.state`
 * while they last (queries read it), so the outcomes are folded into the state as it is then.
 */
export function toolStep(
  run: RunRef,
  calls: PlannedToolCall[],
  ctx: RunContext,
  /** What agents called as tools may spend (what is left of the run's budget). */
  budget?: Pick<AgentInput, 'budget' | 'onBudget'>,
): Promise<RunState> {
  for (const c of calls) {
    const child = c.tool?.agent ? { childWorkflowId: childWorkflowIdOf(c, ctx) } : {};
    ctx.events.emit(ctx.turn, {
      type: 'tool_call_started',
      id: c.call.id,
      name: c.call.function.name,
      arguments: c.arguments,
      ...child,
    });
  }
  // At most one handoff per reply goes ahead: the first the LLM asked for.
  const handoffAt = chosenHandoff(calls);
  const chosen = handoffAt >= 0 ? calls[handoffAt].tool!.handoff : undefined;
  let target: ResolvedAgent | undefined;
  // Calls in the workspace run one after another, each from the state the one before committed.
  let workspace = run.state.workspace;
  let workspaceQueue: Promise<unknown> | undefined;
  const inWorkspace = (planned: PlannedToolCall): Promise<ToolOutcome> => {
    const mine = (workspaceQueue ?? Promise.resolve())
      .then(() => runTool(planned, run, ctx, budget, undefined, workspace))
      .then((outcome) => {
        if (outcome.workspace && workspace) workspace = { ...workspace, ref: outcome.workspace.ref };
        return outcome;
      });
    workspaceQueue = mine.catch(() => undefined);
    return mine;
  };
  const outcomeOf = (planned: PlannedToolCall, i: number): Promise<ToolOutcome> | ToolOutcome => {
    const handoff = planned.tool?.handoff;
    if (handoff === undefined && planned.tool?.workspace && workspace && !planned.resolved) return inWorkspace(planned);
    if (handoff === undefined) return runTool(planned, run, ctx, budget);
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
        // A preview: an output of megabytes stays in the run, not in every subscriber's event.
        const result = toolResultView(outcome.result, EVENT_RESULT_TOKENS, planned.call.id, false);
        ctx.events.emit(ctx.turn, {
          type: 'tool_call_finished',
          id: planned.call.id,
          name: planned.call.function.name,
          result,
          error: outcome.error,
          ...(outcome.json && result === outcome.result ? { json: true as const } : {}),
          ...(outcome.workspace ? { workspace: changedPaths(outcome.workspace) } : {}),
        });
        return outcome;
      },
      (err) => {
        // Cancelled (the turn, its time limit): subscribers see the call end.
        ctx.events.emit(ctx.turn, {
          type: 'tool_call_finished',
          id: planned.call.id,
          name: planned.call.function.name,
          result: 'cancelled',
          error: true,
        });
        throw err;
      },
    );
  const fold = (outcomes: ToolOutcome[]): RunState => {
    const next = applyToolOutcomes(run.state, outcomes);
    if (!target) return next;
    const from = next.agent.name;
    ctx.events.emit(ctx.turn, { type: 'handoff', ...(from ? { from } : {}), to: target.settings.name });
    return applyHandoff(next, target);
  };
  // Most replies call one tool, which needs no Promise.all (see runTool on what promises cost here).
  if (calls.length === 1) return finished(calls[0], 0).then((outcome) => fold([outcome]));
  return Promise.all(calls.map(finished)).then(fold);
}

/**
 * Runs one tool call; its failure becomes a message the LLM can read, never a workflow failure.
 *
 * Written with `then` rather than `async`/`await`, as is the one-call path of the loop: the SDK
 * records where every promise of workflow code was made (for the `__stack_trace` query, the Web
 * UI's stack trace), and that costs about 0.2 ms of the workflow task per promise on a small
 * machine. An async function and its await make two where `then` makes one; a tool step is down
 * from seven promises of ours to three (see bench/README.md).
 */
function runTool(
  planned: PlannedToolCall,
  run: RunRef,
  ctx: RunContext,
  budget?: Pick<AgentInput, 'budget' | 'onBudget'>,
  /** The call again after its tool asked a person: their answer. */
  answer?: ToolCallInput['answer'],
  /** A call in the workspace: the workspace, as the calls before it left it. */
  workspace?: RunWorkspace,
): Promise<ToolOutcome> | ToolOutcome {
  if (planned.resolved) return planned.resolved;
  if (planned.tool.builtin === SLEEP || planned.tool.builtin === WAIT_FOR_EVENT) return runWait(planned, run, ctx);
  if (planned.tool.agent !== undefined) return runAgentTool(planned, run, ctx, budget);
  const { tool, call } = planned;
  const retry = {
    maximumAttempts: tool.retry.maximumAttempts,
    initialInterval: tool.retry.initialIntervalMs,
    backoffCoefficient: 2,
  };
  const summary = toolCallSummary(call.function.name, planned.arguments);
  const input: ToolCallInput = {
    name: call.function.name,
    toolCallId: call.id,
    arguments: call.function.arguments,
    ...(answer ? { answer } : {}),
    ...(ctx.tenant !== undefined ? { tenant: ctx.tenant } : {}),
    ...(ctx.user !== undefined ? { user: ctx.user } : {}),
    ...(run.state.policies ? { delegatedBy: delegationOf(run.state, ctx) } : {}),
    ...(workspace ? { workspace: grantedWorkspace(workspace, planned) } : {}),
  };
  // A command may take the workspace's limit, and the state is restored before and saved after it.
  const timeoutMs = workspace
    ? Math.max(tool.timeoutMs, workspace.commandTimeoutMs + WORKSPACE_SAVE_MS)
    : tool.timeoutMs;
  // Temporal counts every attempt; the activity counts the tool's own failures and stops at the
  // tool's limit, so attempts whose worker was lost get an allowance of their own here.
  const withLosses = {
    ...retry,
    maximumAttempts: retry.maximumAttempts > 0 ? retry.maximumAttempts + WORKER_LOSSES_PER_CALL : 0,
  };
  const execution = tool.local
    ? executeToolLocally.executeWithOptions({ startToCloseTimeout: timeoutMs, retry, summary }, [input])
    : executeTool.executeWithOptions(
        {
          startToCloseTimeout: timeoutMs,
          heartbeatTimeout: HEARTBEAT_TIMEOUT,
          retry: withLosses,
          summary,
          ...(ctx.priority !== undefined ? { priority: { priorityKey: ctx.priority } } : {}),
        },
        [input],
      );
  return execution.then(
    ({ toolCallId: _, ...recorded }) =>
      recorded.asked
        ? (recorded.asked.sample
            ? askModelFor(planned, run, ctx, recorded.asked)
            : askPersonFor(planned, run, ctx, recorded.asked)
          ).then((answered) => runTool(planned, run, ctx, budget, answered, workspace))
        : { ...recorded, recorded: true }, // the activity's result is in history: the run's final result can leave it out
    (err) => {
      if (isCancellation(err)) throw err;
      return { result: toolErrorText(toolFailureMessage(err, timeoutMs, HEARTBEAT_TIMEOUT)), error: true };
    },
  );
}

/**
 * A tool asked a person (`ToolContext.askPerson`): the question waits in the run as an approval
 * of its call does (an `approval_requested` event with the question, the approval Update, the
 * approval timeout), and the answer goes back to the tool, with the progress it asked with.
 */
async function askPersonFor(
  planned: PlannedToolCall,
  run: RunRef,
  ctx: RunContext,
  asked: NonNullable<ToolOutcome['asked']>,
): Promise<NonNullable<ToolCallInput['answer']>> {
  const callId = planned.call.id;
  const calls = run.state.phase.kind === 'tools' ? run.state.phase.calls : [];
  const before = calls.find((c) => c.call.id === callId)?.approval;
  const question = asked.question ?? 'the tool asks for an answer';
  run.state = askPerson(run.state, callId, question);
  const timeoutMs = run.state.limits.approvalTimeoutMs;
  if (timeoutMs !== undefined)
    run.state = setApprovalDeadline(run.state, new Date(Date.now() + timeoutMs).toISOString());
  const pending = pendingApprovals(run.state.phase.kind === 'tools' ? run.state.phase.calls : []);
  const mine = pending.find((p) => p.callId === callId)!;
  if (asked.form)
    ctx.events.emit(ctx.turn, {
      type: 'mcp_elicitation',
      callId,
      tool: mine.name,
      server: asked.form.server,
      message: asked.form.message,
      ...(asked.form.requestedSchema ? { requestedSchema: asked.form.requestedSchema } : {}),
      ...(asked.form.url ? { url: asked.form.url } : {}),
    });
  ctx.events.emit(ctx.turn, {
    type: 'approval_requested',
    callId,
    tool: mine.name,
    arguments: mine.arguments,
    summary: mine.summary,
    question,
    ...(mine.deadline ? { deadline: mine.deadline } : {}),
  });
  await awaitApprovals(run, pending, ctx);
  const answer = personAnswer(run.state, callId) ?? { approved: false, text: 'no answer' };
  run.state = settleQuestion(run.state, callId, before);
  return { ...answer, ...(asked.progress !== undefined ? { progress: asked.progress } : {}) };
}

/**
 * A tool asked the run's model (`ToolContext.askModel`; an MCP server's sampling request): one
 * model call with the tool's own messages and the run's model settings, recorded as an activity,
 * its usage counted in the run's (and so in its budget). A call that fails for good is the
 * tool's declined answer, with the reason.
 */
async function askModelFor(
  planned: PlannedToolCall,
  run: RunRef,
  ctx: RunContext,
  asked: NonNullable<ToolOutcome['asked']>,
): Promise<NonNullable<ToolCallInput['answer']>> {
  const sample = asked.sample!;
  const progress = asked.progress !== undefined ? { progress: asked.progress } : {};
  const settings = run.state.agent.modelSettings;
  try {
    const reply = await sampleModel.executeWithOptions(
      modelCallOptions(run.state, `${planned.call.function.name} asks the model`, ctx.priority),
      [
        {
          messages: sample.messages,
          ...(sample.system ? { system: sample.system } : {}),
          ...(sample.maxTokens ? { maxTokens: sample.maxTokens } : {}),
          ...(settings ? { settings } : {}),
          ...(ctx.tenant !== undefined ? { tenant: ctx.tenant } : {}),
          ...(run.state.limits.modelCallTimeoutMs !== undefined
            ? { timeoutMs: run.state.limits.modelCallTimeoutMs }
            : {}),
        },
      ],
    );
    run.state = countModelAnswer(run.state, reply);
    return { approved: true, text: reply.text, ...(reply.model ? { model: reply.model } : {}), ...progress };
  } catch (err) {
    if (isCancellation(err)) throw err;
    return { approved: false, text: failureInfo(err).error, ...progress };
  }
}

/**
 * Runs a named agent as a child workflow for one tool call; its answer is the call's result, and
 * its failure a tool error (see `agentToolOutcome`). The child is cancelled with this run.
 */
async function runAgentTool(
  planned: PlannedToolCall,
  run: RunRef,
  ctx: RunContext,
  budget?: Pick<AgentInput, 'budget' | 'onBudget'>,
): Promise<ToolOutcome> {
  const agent = planned.tool!.agent!;
  const ask = agentToolMessage(agent, planned.arguments);
  if (!ask.ok) return ask.outcome;
  const workflowId = childWorkflowIdOf(planned, ctx);
  const result = await executeAgent({
    agent,
    message: ask.message,
    ...budget,
    ...(ctx.tenant !== undefined ? { tenant: ctx.tenant } : {}),
    ...(ctx.user !== undefined ? { user: ctx.user } : {}),
    // Under policies, the agent it calls works for it: this run's policies decide its calls too.
    ...(run.state.policies ? { delegatedBy: delegationOf(run.state, ctx) } : {}),
    workflowId,
    childOptions: {
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      staticSummary: `${agent}: ${runSummary(ask.message)}`,
    },
  });
  return agentToolOutcome(agent, workflowId, result);
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
  return agentToolWorkflowId(
    ctx.workflowId,
    planned.tool!.agent!,
    planned.call.id,
    ctx.conversation ? ctx.turn : undefined,
  );
}

/**
 * Carries out a durable wait the model asked for: `sleep` as a workflow timer (its reason the
 * timer's summary in the Temporal UI), `wait_for_event` as a condition on the run's event inbox,
 * with the timeout as its timer. No activity, no worker held; a restart resumes the wait. While it
 * lasts, `status` and `AgentStatus` say `waiting`, and the time limit's clock stops unless the run
 * counts waits.
 */
export async function runWait(planned: PlannedToolCall, run: RunRef, ctx: RunContext): Promise<ToolOutcome> {
  const planning = planWait(planned.call.function.name, planned.arguments, Date.now(), run.state.limits.maxWaitMs);
  if ('resolved' in planning) return planning.resolved;
  const { plan } = planning;
  const callId = planned.call.id;
  run.state = startWaiting(run.state, callId, plan);
  ctx.events.emit(ctx.turn, {
    type: 'wait_started',
    callId,
    kind: plan.kind,
    ...(plan.kind === 'event' ? { name: plan.name } : { reason: plan.reason }),
    until: plan.until,
  });
  const countsToward = run.state.limits.waitsCountTowardTimeLimit === true;
  if (!countsToward) ctx.timeLimit?.pause();
  let event: DeliveredEvent | undefined;
  let outcome: 'elapsed' | 'event' | 'timed_out' = 'elapsed';
  try {
    if (plan.kind === 'sleep') {
      if (plan.ms > 0) await sleep(plan.ms, { summary: waitSummary(plan) });
    } else {
      const inbox = ctx.inbox;
      const arrived = inbox
        ? await condition(() => inbox.has(plan.name), plan.timeoutMs, { summary: waitSummary(plan) })
        : false;
      event = arrived ? inbox?.take(plan.name) : undefined;
      outcome = event ? 'event' : 'timed_out';
    }
  } finally {
    if (!countsToward) ctx.timeLimit?.resume();
    run.state = endWaiting(run.state, callId);
  }
  ctx.events.emit(ctx.turn, { type: 'wait_ended', callId, kind: plan.kind, outcome });
  return waitOutcome(plan, event);
}

/** What a workspace call's activity may take beyond its command's limit: restoring the state before it and saving it after. */
const WORKSPACE_SAVE_MS = 60_000;

/** What a workspace commit changed, without its reference (subscribers see paths, not states). */
function changedPaths({ ref: _, ...paths }: NonNullable<ToolOutcome['workspace']>) {
  return paths;
}
