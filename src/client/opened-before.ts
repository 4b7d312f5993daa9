import type { Client } from '@temporalio/client';
import { withOutageRetries, type OutageOptions } from './outages';
import { explainFailure, kindProblem, lookupWorkflow } from './workflow-lookup';

/**
 * Whether a conversation was open before a message to it, looked up while the message goes rather
 * than before it: a new chat's first message would otherwise wait a round trip to the server on
 * the way to its first token. The lookup can come after the message started the conversation, so
 * a run younger than its first workflow task counts as open only when it was there before the
 * message: it continued an earlier run (continue-as-new), or holds a queued message (a Signal).
 * Otherwise it is the run this message started, or one a message sent at the same moment started
 * (which a lookup before sending could not have seen either). `queueMessage` asks it before its
 * Signal, where the same holds.
 *
 * Throws, as a lookup before sending did, for an id of another kind of workflow (a one-shot
 * run's) and for a server that cannot say; with `outages`, it waits a server outage out first.
 */
export async function openedBefore(client: Client, conversationId: string, outages?: OutageOptions): Promise<boolean> {
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
  // Started, its first workflow task scheduled, perhaps started: nothing of it has run yet.
  if (found.historyLength > YOUNG_HISTORY) return true;
  const { history } = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId: conversationId, runId: found.runId },
    maximumPageSize: YOUNG_HISTORY,
  });
  const events = history?.events ?? [];
  return events.some(
    (e) =>
      !!e.workflowExecutionSignaledEventAttributes ||
      !!e.workflowExecutionStartedEventAttributes?.continuedExecutionRunId,
  );
}

/** The most events a run has before its first workflow task completes, with no Signal. */
const YOUNG_HISTORY = 3;
