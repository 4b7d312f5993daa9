import { randomBytes } from 'node:crypto';
import { WorkflowFailedError, type Client } from '@temporalio/client';
import { TimeoutFailure } from '@temporalio/common';
import type { AgentSummary } from '../agents/agent-registry';
import { LIST_AGENTS_WORKFLOW_TYPE } from '../workflows/definitions';
import { ClientError } from './client-error';

/**
 * The named agents the workers of a task queue serve, with their tools. A short workflow asks a
 * worker (clients cannot reach workers directly); with no worker on the queue it gives up after
 * `timeoutMs` (default 30 s) with a `ClientError` saying so.
 */
export async function listAgents(client: Client, options: { taskQueue: string; timeoutMs?: number }): Promise<AgentSummary[]> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  try {
    return await client.workflow.execute<() => Promise<AgentSummary[]>>(LIST_AGENTS_WORKFLOW_TYPE, {
      taskQueue: options.taskQueue,
      workflowId: `list-agents-${randomBytes(4).toString('hex')}`,
      workflowExecutionTimeout: timeoutMs,
      staticSummary: 'list agents',
    });
  } catch (err) {
    if (err instanceof WorkflowFailedError && err.cause instanceof TimeoutFailure) {
      throw new ClientError('unreachable', `no worker on task queue "${options.taskQueue}" answered within ${Math.round(timeoutMs / 1000)} s; start one (npm start)`);
    }
    throw err;
  }
}
