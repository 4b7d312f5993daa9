import type { Client } from '@temporalio/client';
import { withOutageRetries, type OutageOptions } from './outages';
import { explainFailure, kindProblem, lookupWorkflow } from './workflow-lookup';

/**
 * Whether a conversation was open before a message to it, looked up while the message goes rather
 * than before it: a new chat's first message would otherwise wait a round trip to the server on
 * the way to its first token. The lookup can land after the message started the conversation (on
 * a loaded server, even after its first workflow tasks), so a young run counts as open only when
 * its history shows it was there before the message: it continued an earlier run
 * (continue-as-new), holds a queued message (a Signal), or accepted another message (an Update
 * whose id is not `messageId`). Otherwise it is the run this message started, or one a message
 * sent at the same moment started (which a lookup before sending could not have seen either).
 * `queueMessage` asks it before its Signal (no `messageId`), where the same holds.
 *
 * Throws, as a lookup before sending did, for an id of another kind of workflow (a one-shot
 * run's) and for a server that cannot say; with `outages`, it waits a server outage out first.
 */
export async function openedBefore(
  client: Client,
  conversationId: string,
  outages?: OutageOptions,
  messageId?: string,
): Promise<boolean> {
  let found;
  try {
    const lookup = () => lookupWorkflow(client, conversationId);
    found = await (outages ? withOutageRetries(lookup, outages) : lookup());
  } catch (err) {
    throw await explainFailure(client, conversationId, err, 'conversation');
  }
  if (!found) return false;
  const wrong = kindProblem(found, 'conversation');
  if (wrong) throw wrong;
  if (!found.running) return false;
  // A run this long was there before any message sent with this lookup: a first turn takes a
  // model call, and the lookup is answered in milliseconds.
  if (found.historyLength > YOUNG_HISTORY) return true;
  const { history } = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId: conversationId, runId: found.runId },
    maximumPageSize: YOUNG_HISTORY,
  });
  return (history?.events ?? []).some(
    (e) =>
      !!e.workflowExecutionSignaledEventAttributes ||
      !!e.workflowExecutionStartedEventAttributes?.continuedExecutionRunId ||
      (!!e.workflowExecutionUpdateAcceptedEventAttributes &&
        e.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest?.meta?.updateId !== messageId),
  );
}

/**
 * The most events a run that a message started a moment ago can have: started, its first
 * workflow tasks (failed or timed out ones too), the message accepted, its first model call
 * scheduled, started and under way. Read whole when that young (one small page).
 */
const YOUNG_HISTORY = 24;
