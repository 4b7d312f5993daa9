import type { Client } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { temporal } from '@temporalio/proto';
import type { TextBatch } from '../core/events/agent-events';
import type { LivePiece } from '../core/events/live-text-merge';
import { textBatchSignal } from '../contracts/definitions';

/**
 * The text a model-call activity signalled, read from the Signal's event in the workflow's
 * history: the durable path's own live piece. A reader that long-polls the history (see
 * `event-stream.ts`) sees the Signal as soon as Temporal has stored it, a workflow task and a
 * query before the event log shows the same text. Merged like the live path's pieces (see
 * `LiveTextMerge`): shown once, in order, only after the log has started the call, and voided
 * with the attempt when the log says so. Without Redis between the processes (`AGENT_LIVE_URL`)
 * this is how a reader on another API replica gets each word sooner.
 *
 * Undefined for another Signal, a batch without text or position (an older activity), and a
 * payload this client cannot decode (the event log still carries the text).
 */
export async function signalledText(
  client: Client,
  workflowId: string,
  signalled: temporal.api.history.v1.IWorkflowExecutionSignaledEventAttributes,
): Promise<LivePiece | undefined> {
  if (signalled.signalName !== textBatchSignal.name) return undefined;
  let batch: TextBatch | undefined;
  try {
    batch = await decodeFromPayloadsAtIndex<TextBatch>(
      client.options.loadedDataConverter,
      0,
      signalled.input?.payloads,
      { type: 'workflow', namespace: client.options.namespace, workflowId },
    );
  } catch {
    return undefined;
  }
  if (!batch || typeof batch.text !== 'string' || batch.text === '' || !Number.isSafeInteger(batch.at))
    return undefined;
  if (!Number.isSafeInteger(batch.call) || !Number.isSafeInteger(batch.attempt)) return undefined;
  return { call: batch.call, attempt: batch.attempt, at: batch.at!, text: batch.text };
}
