import {
  CancellationScope,
  condition,
  isCancellation,
  proxyActivities,
  setHandler,
  sleep,
  upsertMemo,
} from '@temporalio/workflow';
import { isPatched } from './patches';
import type { AgentActivities } from '../contracts/activity-interface';
import {
  A2A_CONFIG_WINDOW_MS,
  a2aTaskPushQuery,
  a2aTaskPushSignal,
  a2aTaskQuery,
  a2aTaskSaveSignal,
  type A2APushTarget,
  type A2ATaskRecord,
} from '../contracts/definitions';

/** Push notifications: retried with backoff for a day, so a webhook down for hours still gets them. */
const { deliverWebhook } = proxyActivities<AgentActivities>({
  startToCloseTimeout: '45s',
  scheduleToCloseTimeout: '24h',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '5m' },
});

/** How long one wait for the task's turn lasts before the record asks again (a turn may wait days for a person). */
const TURN_WAIT_MS = 30 * 60_000;

/** The wait for the task's turn to end: heartbeating, so a lost worker's wait is taken up elsewhere within a minute. */
const { awaitA2aTaskEnd } = proxyActivities<AgentActivities>({
  startToCloseTimeout: TURN_WAIT_MS + 60_000,
  heartbeatTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

/** The media type of A2A's messages, push notifications included. */
const A2A_CONTENT_TYPE = 'application/a2a+json';

/** The conversation turn a saved task runs as (the A2A server records it in the task's metadata). */
function turnOf(task: unknown): { contextId: string; workflowId?: string; turn: number; taskId: string } | undefined {
  const t = task as
    { id?: unknown; contextId?: unknown; metadata?: { turn?: unknown; workflowId?: unknown } } | undefined;
  const turn = t?.metadata?.turn;
  if (typeof turn !== 'number' || typeof t?.contextId !== 'string' || typeof t.id !== 'string') return undefined;
  // The conversation's workflow id, where it differs from the contextId (a tenant's id space).
  const workflowId = t.metadata?.workflowId;
  return {
    contextId: t.contextId,
    turn,
    taskId: t.id,
    ...(typeof workflowId === 'string' && workflowId !== t.contextId ? { workflowId } : {}),
  };
}

/**
 * One A2A task's record: the A2A server saves the task here (a signal with start), reads it with a
 * query, and the workflow ends with the task once it is final, so a finished task is read from the
 * workflow's result. A task lives as long as its record, across restarts of the A2A server; the
 * work itself runs in the conversation the task belongs to. With push notification configs, each
 * change of the task's state goes to every webhook by the `deliverWebhook` activity, and the
 * record ends only once the final state was delivered (or given up on, after a day).
 *
 * Once final, the record stays open for {@link A2A_CONFIG_WINDOW_MS}, keeping the push configs a
 * client sets, reads or deletes on the ended task.
 *
 * Once the task is saved with its turn, the record also waits for that turn to end by itself
 * (`awaitA2aTaskEnd`): when the A2A server that ran the task dies mid-task, the task still reaches
 * its final state, and its webhooks hear of it, without any server or client asking.
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
  const save = (next: A2ATaskRecord) => {
    // A save after the final one changes nothing: a finished task stays as it finished.
    if (record.final) return;
    record = next;
    // What ListTasks filters and sorts by, readable from the workflow list without a query per task.
    const status = (record.task as { status?: { state?: unknown; timestamp?: unknown } } | undefined)?.status;
    if (isPatched('a2a-task-memo') && status)
      upsertMemo({
        ...(typeof status.state === 'string' ? { state: status.state } : {}),
        ...(typeof status.timestamp === 'string' ? { updated: status.timestamp } : {}),
      });
    notify();
  };
  setHandler(a2aTaskSaveSignal, save);
  setHandler(a2aTaskPushSignal, ({ set, remove }) => {
    if (set) pushes.set(set.id, set);
    if (remove === '*') pushes.clear();
    else if (remove) pushes.delete(remove);
  });
  setHandler(a2aTaskQuery, () => record.task);
  setHandler(a2aTaskPushQuery, () => [...pushes.values()].map((p) => p.config));
  const watch = new CancellationScope();
  const watching = watch
    .run(async () => {
      // Until the task is saved with its turn (a record started by a push config has none yet).
      await condition(() => record.final || turnOf(record.task) !== undefined);
      if (record.final) return undefined;
      const { taskId, contextId, workflowId, turn } = turnOf(record.task)!;
      for (;;) {
        const end = await awaitA2aTaskEnd({
          taskId,
          contextId,
          turn,
          waitMs: TURN_WAIT_MS,
          ...(workflowId !== undefined ? { workflowId } : {}),
        });
        if (end) return end;
      }
    })
    .catch((err: unknown) => {
      if (!isCancellation(err)) throw err;
      return undefined;
    });
  // Saved out here, not in the watch's scope: the webhook deliveries it starts outlive the watch.
  void watching.then((end) => end && save({ task: { ...(record.task as object), ...end }, final: true }));
  await condition(() => record.final);
  watch.cancel();
  await watching;
  await Promise.all(deliveries);
  if (isPatched('a2a-task-keeps-configs')) await sleep(A2A_CONFIG_WINDOW_MS);
  return record.task;
}
