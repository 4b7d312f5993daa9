import { proxyActivities } from '@temporalio/workflow';
import type { AgentActivities, ScheduledTurnInput, ScheduledTurnResult } from '../contracts/activity-interface';

const { sendScheduledMessage } = proxyActivities<AgentActivities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 10 },
});

/**
 * What a schedule that targets a conversation starts each time: it sends the message to the
 * conversation (see `sendScheduledMessage`) and ends; the turn runs in the conversation, with its
 * memory. Its result says whether the conversation was already open.
 */
export async function scheduledTurnWorkflow(input: ScheduledTurnInput): Promise<ScheduledTurnResult> {
  return sendScheduledMessage(input);
}
