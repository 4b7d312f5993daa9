import { randomBytes } from 'node:crypto';
import { WorkflowFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, TemporalFailure } from '@temporalio/common';
import { agentWorkflowId, runSummary, type AgentInput, type AgentResult, type TurnResult } from '../core';
import type { agentWorkflow } from '../workflows';
import { AGENT_WORKFLOW_TYPE } from '../workflows/definitions';

/** A run's outcome as clients report it: the workflow result, or `failed` with the reason (see {@link TurnResult}). */
export type RunOutcome = TurnResult;

/** Starts an agent run. The workflow id is readable (`agent-what-is-the-...-k3x9q2`) unless given. */
export async function startAgentRun(
  client: Client,
  input: AgentInput,
  options: { taskQueue: string; workflowId?: string },
): Promise<WorkflowHandle<typeof agentWorkflow>> {
  const workflowId = options.workflowId ?? agentWorkflowId(input.message, randomBytes(4).toString('hex').slice(0, 6));
  return client.workflow.start<typeof agentWorkflow>(AGENT_WORKFLOW_TYPE, {
    taskQueue: options.taskQueue,
    workflowId,
    args: [input],
    staticSummary: runSummary(input.message),
  });
}

/** Waits for a run and maps a failed workflow to `status: "failed"` with its partial result. */
export async function runOutcome(handle: WorkflowHandle<typeof agentWorkflow>): Promise<RunOutcome> {
  try {
    return await handle.result();
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) throw err;
    const failure = innermostApplicationFailure(err.cause);
    const partial = (failure?.details?.[0] ?? {}) as Partial<AgentResult>;
    return {
      workflowId: handle.workflowId,
      status: 'failed',
      content: null,
      toolExecutions: partial.toolExecutions ?? [],
      iterations: partial.iterations ?? 0,
      usage: partial.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      error: failure?.message ?? err.cause?.message ?? err.message,
      ...(failure?.type ? { errorType: failure.type } : {}),
    };
  }
}

function innermostApplicationFailure(err: unknown): ApplicationFailure | undefined {
  // The workflow's own failure carries the details; its causes say where it came from.
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof TemporalFailure && err.cause) return innermostApplicationFailure(err.cause);
  return undefined;
}
