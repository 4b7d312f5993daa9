import type { Client } from '@temporalio/client';
import { ClientError } from './client-error';
import { liveWorkers } from '../connection/task-queue';

export { LIVE_POLLER_WINDOW_MS, liveWorkers } from '../connection/task-queue';

/**
 * Throws a `no_worker` {@link ClientError} naming the task queue when no worker polls it: work
 * started there would wait for a worker that may never come. A worker that is just starting gets
 * `graceMs` (default 2 s) to begin polling. `hint` says how to pick another queue on the caller's
 * surface. A server that refuses to describe the queue (permissions) is not a reason to stop: the
 * check is then skipped.
 */
export async function requireWorker(
  client: Client,
  taskQueue: string,
  hint = '--task-queue or AGENT_TASK_QUEUE on the command line, the taskQueue option in code',
  graceMs = 2_000,
): Promise<void> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    let workers: string[];
    try {
      workers = await liveWorkers(client, taskQueue);
    } catch {
      return;
    }
    if (workers.length > 0) return;
    if (Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new ClientError(
    'no_worker',
    `no worker is polling task queue "${taskQueue}" (namespace "${client.options.namespace}"). Start your worker, or use the task queue it polls: ${hint}.`,
  );
}

/**
 * {@link requireWorker} for the task queue an existing workflow runs on: its queries and updates
 * are answered by a worker there, and without one they wait 30 s and fail with a bare "Failed to
 * query Workflow". A workflow that does not exist is left to the caller to report.
 */
export async function requireWorkerFor(client: Client, workflowId: string): Promise<void> {
  let taskQueue: string;
  try {
    taskQueue = (await client.workflow.getHandle(workflowId).describe()).taskQueue;
  } catch {
    return;
  }
  try {
    await requireWorker(client, taskQueue);
  } catch (err) {
    if (!(err instanceof ClientError)) throw err;
    throw new ClientError(
      'no_worker',
      `no worker is polling task queue "${taskQueue}", which "${workflowId}" runs on (namespace "${client.options.namespace}"): start a worker for it; a worker answers its status and takes decisions.`,
      workflowId,
    );
  }
}
