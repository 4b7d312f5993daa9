import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { DEFAULT_FLEET_TASK_QUEUE } from '../contracts/fleet-queue';

/** Task queue from `AGENT_TASK_QUEUE`, default `agents`. */
export function defaultTaskQueue(env: NodeJS.ProcessEnv): string {
  return env.AGENT_TASK_QUEUE || 'agents';
}

/**
 * How recently a worker must have polled to count as there. An idle worker's long poll is
 * renewed about once a minute; the server keeps stopped workers in the list for minutes more.
 */
export const LIVE_POLLER_WINDOW_MS = 2 * 60_000;

/** The identities of the workers that polled `taskQueue` for workflow tasks within {@link LIVE_POLLER_WINDOW_MS}. */
export async function liveWorkers(client: Client, taskQueue: string, now = Date.now()): Promise<string[]> {
  const { pollers } = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: taskQueue },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  return (pollers ?? [])
    .filter((p) => {
      const seconds = Number(p.lastAccessTime?.seconds ?? 0);
      return seconds === 0 || now - seconds * 1000 <= LIVE_POLLER_WINDOW_MS;
    })
    .map((p) => p.identity ?? '?');
}

/** The fleet's task queue (tenants' ledgers, rate governors) from `AGENT_FLEET_TASK_QUEUE`, default `durable-agents-fleet`. */
export function defaultFleetTaskQueue(env: NodeJS.ProcessEnv): string {
  return env.AGENT_FLEET_TASK_QUEUE?.trim() || DEFAULT_FLEET_TASK_QUEUE;
}
