import { ApplicationFailure } from '@temporalio/common';
import type { WebhookDelivery } from '../contracts/activity-interface';

/** How long one delivery attempt may take. */
const ATTEMPT_MS = 30_000;

/**
 * The `deliverWebhook` activity: one POST of a notification to a webhook (an A2A task's push
 * notification). The workflow that schedules it retries it with backoff for hours, so a webhook
 * that is down for a while still gets it; an answer that will not change by asking again (a 4xx
 * other than 408 and 429) ends the delivery at once.
 */
export function createDeliverWebhook() {
  return async function deliverWebhook(input: WebhookDelivery): Promise<void> {
    let response: Response;
    try {
      response = await fetch(input.url, {
        method: 'POST',
        headers: { 'content-type': input.contentType, ...input.headers },
        body: input.body,
        signal: AbortSignal.timeout(ATTEMPT_MS),
      });
    } catch (err) {
      throw new Error(`the webhook ${input.url} could not be reached: ${(err as Error).message}`);
    }
    await response.body?.cancel().catch(() => undefined);
    if (response.ok) return;
    const problem = `the webhook ${input.url} answered ${response.status} ${response.statusText}`;
    if (response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429)
      throw ApplicationFailure.nonRetryable(problem, 'Webhook.Refused');
    throw new Error(problem);
  };
}
