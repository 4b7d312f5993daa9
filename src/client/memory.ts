import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, type Client } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { factIdProblem, memoryFilterProblem } from '../core/facts/memory-scope';
import {
  MEMORY_ADMIN_MEMO,
  MEMORY_ADMIN_WORKFLOW_TYPE,
  type MemoryAdminRequest,
  type MemoryAdminResult,
} from '../contracts/memory-admin';
import { ClientError } from './client-error';
import { requireWorker } from './task-queue-workers';

/**
 * People's control of memory across conversations, for the CLI (`durable-agents memory`) and the
 * HTTP API (`/memory`): list, show, delete and export what the agents keep about a user. The
 * workers hold the store, so each request is a short workflow one of them runs (see
 * `memoryAdminWorkflow`); a deletion is recorded there and in the store.
 */
export async function administerMemory<R extends MemoryAdminRequest>(
  client: Client,
  request: R,
  options: { taskQueue: string },
): Promise<Extract<MemoryAdminResult, { op: R['op'] }>> {
  const problem =
    memoryFilterProblem(request.filter, request.op === 'show') ??
    (request.op === 'show' ? factIdProblem(request.id) : undefined);
  if (problem) throw new ClientError('invalid', problem);
  await requireWorker(client, options.taskQueue);
  const whose = [
    request.filter.tenant && `tenant ${request.filter.tenant}`,
    request.filter.user && `user ${request.filter.user}`,
  ]
    .filter(Boolean)
    .join(', ');
  try {
    return (await client.workflow.execute(MEMORY_ADMIN_WORKFLOW_TYPE, {
      taskQueue: options.taskQueue,
      workflowId: `memory-${request.op}-${randomUUID()}`,
      args: [request],
      workflowExecutionTimeout: '5m',
      // Which facts it reads: a purge of a user's memory removes the reads that returned them.
      memo: { [MEMORY_ADMIN_MEMO]: { op: request.op, filter: request.filter } },
      staticSummary: `memory ${request.op}${whose ? ` (${whose})` : ''}${request.op === 'delete' ? ` by ${request.by}` : ''}`,
    })) as Extract<MemoryAdminResult, { op: R['op'] }>;
  } catch (err) {
    // The activity's own words: a bad filter, a store that cannot be opened (and where it is).
    const cause =
      err instanceof WorkflowFailedError && err.cause instanceof ActivityFailure ? err.cause.cause : undefined;
    if (cause instanceof ApplicationFailure)
      throw new ClientError(cause.type === 'Memory.InvalidRequest' ? 'invalid' : 'unreachable', cause.message);
    throw err;
  }
}
