import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { AgentActivities } from '../common/activity-interface';
import {
  a2aTaskPushQuery,
  a2aTaskPushSignal,
  a2aTaskQuery,
  a2aTaskSaveSignal,
  type A2APushTarget,
  type A2ATaskRecord,
} from '../common/definitions';

/** Push notifications: retried with backoff for a day, so a webhook down for hours still gets them. */
const { deliverWebhook } = proxyActivities<AgentActivities>({
  startToCloseTimeout: '45s',
  scheduleToCloseTimeout: '24h',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '5m' },
});

/** The media type of A2A's messages, push notifications included. */
const A2A_CONTENT_TYPE = 'application/a2a+json';

/**
 * One A2A task's record: the A2A server saves the task here (a signal with start), reads it with a
 * query, and the workflow ends with the task once it is final, so a finished task is read from the
 * workflow's result. A task lives as long as its record, across restarts of the A2A server; the
 * work itself runs in the conversation the task belongs to. With push notification configs, each
 * change of the task's state goes to every webhook by the `deliverWebhook` activity, and the
 * record ends only once the final state was delivered (or given up on, after a day).
 */
export async function a2aTaskWorkflow(first?: A2ATaskRecord): Promise<unknown> {
  let record: A2ATaskRecord = first ?? { task: undefined, final: false };
  const pushes = new Map<string, A2APushTarget>();
  const deliveries: Promise<unknown>[] = [];
  let told: string | undefined;
  const notify = () => {
    if (pushes.size === 0 || record.task === undefined) return;
    const state = JSON.stringify([(record.task as { status?: { state?: unknown } }).status?.state, record.final]);
    if (state === told) return;
    told = state;
    // A2A's push notification: the task, as a stream response.
    const body = JSON.stringify({ task: record.task });
    for (const target of pushes.values())
      deliveries.push(
        deliverWebhook({ url: target.url, headers: target.headers, contentType: A2A_CONTENT_TYPE, body }).catch(
          () => undefined, // given up on after its retries: the task is still readable with GetTask
        ),
      );
  };
  setHandler(a2aTaskSaveSignal, (next) => {
    // A save after the final one changes nothing: a finished task stays as it finished.
    if (record.final) return;
    record = next;
    notify();
  });
  setHandler(a2aTaskPushSignal, ({ set, remove }) => {
    if (set) pushes.set(set.id, set);
    if (remove === '*') pushes.clear();
    else if (remove) pushes.delete(remove);
  });
  setHandler(a2aTaskQuery, () => record.task);
  setHandler(a2aTaskPushQuery, () => [...pushes.values()].map((p) => p.config));
  await condition(() => record.final);
  await Promise.all(deliveries);
  return record.task;
}
