import type { Client } from '@temporalio/client';

/**
 * Why a workflow's workers keep failing its workflow tasks, when they do: the message of its
 * latest `WorkflowTaskFailed` event, once the task has failed more than once (a single failure is
 * often a worker that was replaced). Such a workflow makes no progress and answers no query;
 * clients waiting on it say this instead of waiting in silence (e.g. a worker that requires
 * encryption refusing what a client without keys sent, or code that no longer replays).
 */
export async function failingWorkflowTask(
  client: Client,
  workflowId: string,
  runId?: string,
): Promise<string | undefined> {
  const described = await client.workflow.getHandle(workflowId, runId).describe();
  if ((described.raw.pendingWorkflowTask?.attempt ?? 0) < 2) return undefined;
  const { history } = await client.workflowService.getWorkflowExecutionHistoryReverse({
    namespace: client.options.namespace,
    execution: { workflowId, runId: described.runId },
    maximumPageSize: 100,
  });
  const failed = history?.events?.find((e) => e.workflowTaskFailedEventAttributes)?.workflowTaskFailedEventAttributes
    ?.failure;
  if (!failed) return undefined;
  // Encrypting workers encode failure messages: then there is no sentence to show here.
  return failed.encodedAttributes
    ? 'its workers fail its workflow tasks (the reason is encrypted: see the Temporal UI with the codec server)'
    : (failed.message ?? undefined);
}
