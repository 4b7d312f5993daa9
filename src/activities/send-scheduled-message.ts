import { Context } from '@temporalio/activity';
import { tenantStartOptions } from '../contracts/tenant-start';
import { WithStartWorkflowOperation, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { runSummary } from '../core/context/summaries';
import { CONVERSATION_WORKFLOW_TYPE, sendMessageUpdate } from '../contracts/definitions';
import type { ScheduledTurnInput, ScheduledTurnResult } from '../contracts/activity-interface';

/**
 * Builds the activity through which a schedule talks to a conversation: a schedule can only start
 * workflows, and a conversation is one long-lived workflow, so the short `scheduledTurnWorkflow`
 * it starts sends the message from here (Update-with-Start, as clients send messages). The update
 * id is the scheduled workflow run's: a retried attempt never sends it twice.
 */
export function createSendScheduledMessage(deps: { client?: Client }) {
  return async function sendScheduledMessage(input: ScheduledTurnInput): Promise<ScheduledTurnResult> {
    const ctx = Context.current();
    const client = deps.client ?? ctx.client;
    const { conversationId, turn } = input;
    const found = await client.workflow
      .getHandle(conversationId)
      .describe()
      .catch(() => undefined);
    const wasOpen = found?.status.name === 'RUNNING' && found.type === CONVERSATION_WORKFLOW_TYPE;
    // A tenant's schedule writes to its tenant's conversations only, whatever id it was given.
    const tenant = input.options?.tenant;
    const owner = found?.searchAttributes?.AgentTenant?.[0];
    if (tenant !== undefined && found !== undefined && owner !== tenant)
      throw ApplicationFailure.nonRetryable(
        `the conversation "${conversationId}" is not tenant "${tenant}"'s: a schedule of a tenant sends to its own conversations only`,
        'Schedule.MessageRefused',
      );
    try {
      await client.workflow.startUpdateWithStart(sendMessageUpdate, {
        args: [turn],
        // The firing's run, not only its id: two manual triggers in one second share a workflow id.
        updateId: `${ctx.info.workflowExecution?.workflowId ?? ctx.info.activityId}-${ctx.info.workflowExecution?.runId ?? ''}`,
        waitForStage: 'ACCEPTED',
        startWorkflowOperation: new WithStartWorkflowOperation(CONVERSATION_WORKFLOW_TYPE, {
          workflowId: conversationId,
          taskQueue: ctx.info.taskQueue,
          args: [input.options ?? {}],
          workflowIdConflictPolicy: 'USE_EXISTING',
          staticSummary: runSummary(turn.message),
          ...tenantStartOptions({ tenant: input.options?.tenant }),
        }),
      });
    } catch (err) {
      // The conversation refused the message (closing, unknown tools): retrying would not change that.
      if (err instanceof WorkflowUpdateFailedError)
        throw ApplicationFailure.nonRetryable(
          `the conversation "${conversationId}" refused the scheduled message: ${err.cause?.message ?? err.message}`,
          'Schedule.MessageRefused',
        );
      throw err;
    }
    return { conversationId, wasOpen };
  };
}
