import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  TimeoutFailure,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { AgentActivities } from '../activities';
import {
  applyModelReply,
  applyToolOutcomes,
  approvalProblem,
  decideApproval,
  expireApprovals,
  modelCallSummary,
  modelContextRange,
  nextStep,
  pendingApprovals,
  toolCallSummary,
  toolErrorText,
  type ModelSettings,
  type PendingApproval,
  type PlannedToolCall,
  type RunState,
  type ToolCallingMode,
  type ToolOutcome,
} from '../core';
import { decideApprovalUpdate, pendingApprovalsQuery } from './definitions';

/**
 * Model calls: LLMs can take minutes, and 429/5xx/connection failures are worth retrying with
 * back-off. The cap on attempts makes an unreachable server fail the run (with a clear error)
 * within a few minutes instead of retrying forever.
 */
const MODEL_CALL_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '5m',
  heartbeatTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 8 },
};
// Tool resolution is a registry lookup: a local activity keeps it to one marker in history.
export const { resolveTools } = proxyLocalActivities<AgentActivities>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 3 } });

// executeTool is always called with the tool's own options (timeout, retries) via executeWithOptions.
const { callModel, executeTool } = proxyActivities<AgentActivities>(MODEL_CALL_OPTIONS);

/** The run being driven; the loop replaces `state` after every step, handlers and queries read it. */
export interface RunRef {
  state: RunState;
}

/**
 * Drives one run of the agent loop to its end: asks the core for the next step and carries it
 * out (a model call, tool calls, waiting for approvals). Shared by one-shot runs and conversation
 * turns. Cancellation of the enclosing scope (time limit, a cancelled turn) propagates out.
 */
export async function runLoop(run: RunRef, ctx: { workflowId: string; runId: string; settings?: ModelSettings; toolCalling?: ToolCallingMode }): Promise<void> {
  for (let step = nextStep(run.state); step.type !== 'finish'; step = nextStep(run.state)) {
    if (step.type === 'call_model') {
      const range = modelContextRange(run.state.messages, run.state.memoryWindow);
      const reply = await callModel.executeWithOptions({ ...MODEL_CALL_OPTIONS, summary: modelCallSummary(step.iteration, step.final) }, [
        { workflowId: ctx.workflowId, runId: ctx.runId, ...range, toolNames: step.toolNames, settings: ctx.settings, toolCalling: ctx.toolCalling },
      ]);
      run.state = applyModelReply(run.state, step, reply);
    } else if (step.type === 'await_approval') {
      await awaitApprovals(run, step.pending);
    } else {
      run.state = applyToolOutcomes(run.state, await Promise.all(step.calls.map(runTool)));
    }
  }
}

/**
 * Waits, durably and without holding a worker, until every pending call is decided; the approval
 * timeout (a durable timer) rejects whatever is still pending.
 */
async function awaitApprovals(run: RunRef, pending: PendingApproval[]): Promise<void> {
  setCurrentDetails(approvalDetails(pending));
  try {
    const decided = () => pendingApprovals(callsOf(run.state)).length === 0;
    const timeoutMs = run.state.limits.approvalTimeoutMs;
    if (timeoutMs === undefined) await condition(decided);
    else if (!(await condition(decided, timeoutMs))) run.state = expireApprovals(run.state, `no decision within the approval timeout (${timeoutMs} ms)`);
  } finally {
    setCurrentDetails('');
  }
}

/** The Temporal UI's "current details": what a person is asked to decide, and how. */
function approvalDetails(pending: PendingApproval[]): string {
  const lines = pending.map((p) => `- \`${p.callId}\`: ${p.summary}`);
  return ['**Awaiting approval**', ...lines, '', 'Decide with `client.ts approve|reject <conversation> <callId>` or the `decideApproval` update.'].join('\n');
}

function callsOf(state: RunState): PlannedToolCall[] {
  return state.phase.kind === 'tools' ? state.phase.calls : [];
}

/**
 * Registers the approval Update and query on a run that may be absent (a conversation between
 * turns). The validator rejects unknown call ids before anything reaches history.
 */
export function handleApprovals(current: () => RunRef | undefined): void {
  setHandler(pendingApprovalsQuery, () => {
    const run = current();
    return run ? pendingApprovals(callsOf(run.state)) : [];
  });
  setHandler(
    decideApprovalUpdate,
    (decision) => {
      const run = current()!;
      run.state = decideApproval(run.state, decision);
      return { callId: decision.callId, approved: decision.approve, stillPending: pendingApprovals(callsOf(run.state)).length };
    },
    {
      validator: (decision) => {
        const problem = approvalProblem(current()?.state, decision);
        if (problem) throw new Error(problem);
      },
    },
  );
}

/** Runs one tool call; its failure becomes a message the LLM can read, never a workflow failure. */
async function runTool(planned: PlannedToolCall): Promise<ToolOutcome> {
  if (planned.resolved) return planned.resolved;
  const { tool, call } = planned;
  try {
    return await executeTool.executeWithOptions(
      {
        startToCloseTimeout: tool.timeoutMs,
        heartbeatTimeout: '30s',
        retry: { maximumAttempts: tool.retry.maximumAttempts, initialInterval: tool.retry.initialIntervalMs, backoffCoefficient: 2 },
        summary: toolCallSummary(call.function.name, planned.arguments),
      },
      [{ name: call.function.name, toolCallId: call.id, arguments: call.function.arguments }],
    );
  } catch (err) {
    if (isCancellation(err)) throw err;
    return { result: toolErrorText(toolFailureMessage(err, tool.timeoutMs)), error: true };
  }
}

function toolFailureMessage(err: unknown, timeoutMs: number): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof TimeoutFailure) return `the tool did not finish within its ${timeoutMs} ms timeout`;
  return cause instanceof Error ? cause.message : String(cause);
}

/** Why a run could not go on: the original failure's type (e.g. `ModelCall.Auth`) and message. */
export function failureInfo(err: unknown): { error: string; errorType: string; cause?: Error } {
  const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
  return {
    errorType: cause instanceof ApplicationFailure && cause.type ? cause.type : 'Agent.Failed',
    error: cause instanceof Error ? cause.message : String(cause),
    cause: cause instanceof Error ? cause : undefined,
  };
}
