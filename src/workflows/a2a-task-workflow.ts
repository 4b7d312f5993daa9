import { condition, setHandler } from '@temporalio/workflow';
import { a2aTaskQuery, a2aTaskSaveSignal, type A2ATaskRecord } from '../common/definitions';

/**
 * One A2A task's record: the A2A server saves the task here (a signal with start), reads it with a
 * query, and the workflow ends with the task once it is final, so a finished task is read from the
 * workflow's result. A task lives as long as its record, across restarts of the A2A server; the
 * work itself runs in the conversation the task belongs to.
 */
export async function a2aTaskWorkflow(first?: A2ATaskRecord): Promise<unknown> {
  let record: A2ATaskRecord = first ?? { task: undefined, final: false };
  setHandler(a2aTaskSaveSignal, (next) => {
    // A save after the final one changes nothing: a finished task stays as it finished.
    if (!record.final) record = next;
  });
  setHandler(a2aTaskQuery, () => record.task);
  await condition(() => record.final);
  return record.task;
}
