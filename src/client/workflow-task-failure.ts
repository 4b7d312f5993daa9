import type { Client } from '@temporalio/client';

/**
 * Why a workflow makes no progress, when its current workflow task has been tried more than once
 * (a single failure is often a worker that was replaced): its workers fail the task (`failing`,
 * with the message of the latest `WorkflowTaskFailed`: a worker that requires encryption refusing
 * what a client without keys sent, code that no longer replays), or no worker completes it
 * (`timing_out`: the worker that ran it stopped or was killed, and none has taken it since). Such
 * a workflow answers no query and takes no Update; clients say this instead of waiting in silence.
 */
export type WorkflowTaskTrouble = { kind: 'failing'; reason: string } | { kind: 'timing_out' };

/** The workflow's {@link WorkflowTaskTrouble}, or undefined when its workflow task is not stuck. */
export async function workflowTaskTrouble(
  client: Client,
  workflowId: string,
  runId?: string,
): Promise<WorkflowTaskTrouble | undefined> {
  const described = await client.workflow.getHandle(workflowId, runId).describe();
  if ((described.raw.pendingWorkflowTask?.attempt ?? 0) < 2) return undefined;
  const { history } = await client.workflowService.getWorkflowExecutionHistoryReverse({
    namespace: client.options.namespace,
    execution: { workflowId, runId: described.runId },
    maximumPageSize: 100,
  });
  // The latest attempt's end says which: it failed, or it timed out.
  const last = history?.events?.find(
    (e) => e.workflowTaskFailedEventAttributes || e.workflowTaskTimedOutEventAttributes,
  );
  if (!last) return undefined;
  if (last.workflowTaskTimedOutEventAttributes) return { kind: 'timing_out' };
  const failed = last.workflowTaskFailedEventAttributes?.failure;
  if (!failed) return undefined;
  // Encrypting workers encode failure messages: then there is no sentence to show here.
  const reason = failed.encodedAttributes
    ? 'the reason is encrypted: see the Temporal UI with the codec server'
    : (failed.message ?? 'no reason given');
  return { kind: 'failing', reason };
}

/** The trouble in words, as a clause: "its workers fail its workflow tasks (...)" or "its workflow tasks time out (...)". */
export function troubleClause(trouble: WorkflowTaskTrouble): string {
  return trouble.kind === 'failing'
    ? `its workers fail its workflow tasks (${trouble.reason})`
    : 'its workflow tasks time out (the worker that ran it stopped or was killed, and no worker has taken them since)';
}

/** The reason its workers fail its workflow tasks, when they do (see {@link workflowTaskTrouble}). */
export async function failingWorkflowTask(
  client: Client,
  workflowId: string,
  runId?: string,
): Promise<string | undefined> {
  const trouble = await workflowTaskTrouble(client, workflowId, runId);
  return trouble?.kind === 'failing' ? trouble.reason : undefined;
}
