import type { Client } from '@temporalio/client';
import { troubleClause, workflowTaskTrouble } from '../../src/client/workflow-task-failure';

/** Why a workflow makes no progress, read from its latest workflow task attempts. */
function clientWith(attempt: number, events: object[]): Client {
  return {
    options: { namespace: 'default' },
    workflow: {
      getHandle: () => ({ describe: async () => ({ runId: 'r1', raw: { pendingWorkflowTask: { attempt } } }) }),
    },
    workflowService: { getWorkflowExecutionHistoryReverse: async () => ({ history: { events } }) },
  } as unknown as Client;
}

it('tells a killed worker (tasks that time out) from workers that fail the task, by the latest attempt', async () => {
  const failed = {
    workflowTaskFailedEventAttributes: { failure: { message: 'a payload is encrypted with key "k2"' } },
  };
  const timedOut = { workflowTaskTimedOutEventAttributes: { timeoutType: 1 } };
  // A worker killed after an earlier failure: the latest attempt timed out.
  const killed = await workflowTaskTrouble(clientWith(3, [timedOut, failed]), 'c1');
  expect(killed).toEqual({ kind: 'timing_out' });
  expect(troubleClause(killed!)).toBe(
    'its workflow tasks time out (the worker that ran it stopped or was killed, and no worker has taken them since)',
  );
  const failing = await workflowTaskTrouble(clientWith(3, [failed, timedOut]), 'c1');
  expect(troubleClause(failing!)).toBe('its workers fail its workflow tasks (a payload is encrypted with key "k2")');
  // One attempt is no trouble: a worker was replaced.
  expect(await workflowTaskTrouble(clientWith(1, [failed]), 'c1')).toBeUndefined();
});
