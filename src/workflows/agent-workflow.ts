import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  TimeoutFailure,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { AgentActivities } from '../activities';
import {
  applyModelReply,
  applyTimeLimit,
  applyToolOutcomes,
  messagesPage,
  modelCallSummary,
  nextStep,
  runResult,
  runStatus,
  startRun,
  toolCallSummary,
  toolErrorText,
  validateAgentInput,
  type AgentInput,
  type AgentResult,
  type PlannedToolCall,
  type RunState,
  type ToolOutcome,
} from '../core';
import { messagesQuery, statusQuery } from './definitions';

// Tool resolution is a registry lookup: a local activity keeps it to one marker in history.
const { resolveTools } = proxyLocalActivities<AgentActivities>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 3 } });

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
// executeTool is always called with the tool's own options (timeout, retries) via executeWithOptions.
const { callModel, executeTool } = proxyActivities<AgentActivities>(MODEL_CALL_OPTIONS);

/**
 * One agent run: the LLM sees the conversation and the tools, asks for tool calls, they run as
 * activities, results go back, until the LLM answers or a limit ends the run. All decisions come
 * from the pure core (`src/core`); this function only carries them out.
 */
export async function agentWorkflow(input: AgentInput): Promise<AgentResult> {
  const problems = validateAgentInput(input);
  if (problems.length > 0) throw ApplicationFailure.nonRetryable(`invalid agent input: ${problems.join('; ')}`, 'Agent.InvalidInput');

  // Queries may arrive before the tools are resolved, so a state exists from the first line.
  let state: RunState = startRun(input, []);
  setHandler(statusQuery, () => runStatus(state));
  setHandler(messagesQuery, (range) => messagesPage(state.messages, range));

  const { workflowId, runId } = workflowInfo();
  const loop = async (): Promise<void> => {
    state = startRun(input, await resolveTools({ tools: input.tools, immediateTools: input.immediateTools }));
    for (let step = nextStep(state); step.type !== 'finish'; step = nextStep(state)) {
      if (step.type === 'call_model') {
        const reply = await callModel.executeWithOptions({ ...MODEL_CALL_OPTIONS, summary: modelCallSummary(step.iteration, step.final) }, [
          { workflowId, runId, messageCount: state.messages.length, toolNames: step.toolNames, settings: input.modelSettings },
        ]);
        state = applyModelReply(state, step, reply);
      } else {
        state = applyToolOutcomes(state, await Promise.all(step.calls.map(runTool)));
      }
    }
  };

  try {
    if (state.limits.maxExecutionTimeMs === undefined) await loop();
    else if (await timeLimited(loop, state.limits.maxExecutionTimeMs)) state = applyTimeLimit(state);
  } catch (err) {
    throw runFailure(err, state, workflowId);
  }
  return runResult(state, workflowId);
}

/**
 * Runs `body` under a durable timer. When the timer wins, the scope is cancelled, which cancels
 * in-flight activities; returns true in that case. The timer lives in history, so it fires on
 * time even if every worker was down in between.
 */
async function timeLimited(body: () => Promise<void>, ms: number): Promise<boolean> {
  const scope = new CancellationScope();
  let expired = false;
  void sleep(ms).then(() => {
    expired = true;
    scope.cancel();
  });
  try {
    await scope.run(body);
    return false;
  } catch (err) {
    if (expired && isCancellation(err)) return true;
    throw err;
  }
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

/**
 * A run that cannot go on (a non-retryable model error, retries exhausted) fails the workflow, so
 * the Temporal UI shows it failed. The failure keeps the original type (e.g. `ModelCall.Auth`)
 * and carries the partial result as details for clients.
 */
function runFailure(err: unknown, state: RunState, workflowId: string): unknown {
  if (isCancellation(err)) return err;
  const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
  const type = cause instanceof ApplicationFailure && cause.type ? cause.type : 'Agent.Failed';
  const message = cause instanceof Error ? cause.message : String(cause);
  const partial: Omit<AgentResult, 'status' | 'content'> = {
    workflowId,
    toolExecutions: state.toolExecutions,
    iterations: state.iterations,
    usage: state.usage,
  };
  return ApplicationFailure.create({ message, type, nonRetryable: true, details: [partial], cause: cause instanceof Error ? cause : undefined });
}
