import { createHash } from 'node:crypto';
import { WorkflowFailedError, type Client, type WorkflowStartOptions } from '@temporalio/client';
import { defineSearchAttributeKey, TimeoutFailure, TypedSearchAttributes } from '@temporalio/common';
import type { AgentSummary } from '../contracts/activity-interface';
import { LIST_AGENTS_WORKFLOW_TYPE } from '../contracts/definitions';
import { ClientError } from './client-error';
import { requireWorker } from './task-queue-workers';

/**
 * Temporal's namespace division: workflows that carry one are left out of the default workflow
 * list (the Web UI's, `temporal workflow list`), as the server's own scheduler workflows are.
 * Listing agents is plumbing, not work anyone wants to see in that list.
 */
const NAMESPACE_DIVISION = defineSearchAttributeKey('TemporalNamespaceDivision', 'KEYWORD');
/** The division listing workflows are kept in: `TemporalNamespaceDivision = "durable-agents"` finds them. */
export const INTERNAL_DIVISION = 'durable-agents';

/**
 * The named agents the workers of a task queue serve, with their tools. Clients cannot reach
 * workers directly, so a short workflow asks one: kept out of the default workflow list, and one
 * per task queue at a time (concurrent listings share it). With no worker polling the queue it
 * fails at once with a `no_worker` ClientError; a worker that does not answer within `timeoutMs`
 * (default 30 s) gives an `unreachable` one.
 */
export async function listAgents(
  client: Client,
  options: { taskQueue: string; timeoutMs?: number },
): Promise<AgentSummary[]> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  await requireWorker(client, options.taskQueue);
  const start: WorkflowStartOptions<() => Promise<AgentSummary[]>> = {
    taskQueue: options.taskQueue,
    // Readable, and bounded in length whatever the queue's name.
    workflowId: `durable-agents-list-agents-${createHash('sha256').update(options.taskQueue).digest('hex').slice(0, 12)}`,
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowExecutionTimeout: timeoutMs,
    staticSummary: `list agents of task queue ${options.taskQueue}`,
    typedSearchAttributes: new TypedSearchAttributes([{ key: NAMESPACE_DIVISION, value: INTERNAL_DIVISION }]),
  };
  try {
    return await client.workflow.execute(LIST_AGENTS_WORKFLOW_TYPE, start).catch((err: unknown) => {
      // A server that does not let clients set the division (it is a system attribute) still lists.
      if (!/TemporalNamespaceDivision/.test(String((err as Error)?.message))) throw err;
      return client.workflow.execute(LIST_AGENTS_WORKFLOW_TYPE, { ...start, typedSearchAttributes: undefined });
    });
  } catch (err) {
    if (err instanceof WorkflowFailedError && err.cause instanceof TimeoutFailure) {
      throw new ClientError(
        'unreachable',
        `no worker on task queue "${options.taskQueue}" answered within ${Math.round(timeoutMs / 1000)} s`,
      );
    }
    throw err;
  }
}
