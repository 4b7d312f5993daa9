import type { Client } from '@temporalio/client';
import { purgeClosed } from '../storage/workflow-purge';
import type { BlobStore } from '../storage/blob-store';
import { ClientError } from './client-error';
import { clientBlobStore } from './stored-images';
import { describeKind, explainFailure, lookupWorkflow } from './workflow-lookup';

/** What {@link deleteRun} removed. */
export interface RunDeletion {
  workflowId: string;
  kind: 'run' | 'conversation';
  /** Payloads removed from the payload store (large inputs and results, query answers). */
  payloads: number;
  /** Blobs of its workspace states removed (its manifests and file contents). */
  workspaceBlobs: number;
}

/**
 * Deletes a finished run or conversation with everything it left: its histories (each run it
 * continued through; Temporal removes a closed workflow shortly after), the payloads it put in the
 * payload store, and the states of its workspace. What it copied out stays where it went (facts
 * it remembered: `memory delete`; runs forked from it keep their own copies). An open one is
 * refused: cancel the run (or end the conversation) first, so nothing is deleted under a worker.
 */
export async function deleteRun(
  client: Client,
  workflowId: string,
  options: {
    /** Where its workspace states are (default: the client's blob store, as workers share it). */
    blobs?: BlobStore;
    /** Only this kind (`DELETE /runs/:id` deletes no conversation). */
    kind?: 'run' | 'conversation';
  } = {},
): Promise<RunDeletion> {
  let found;
  try {
    found = await lookupWorkflow(client, workflowId);
  } catch (err) {
    throw await explainFailure(client, workflowId, err, 'agent');
  }
  if (!found) throw new ClientError('not_found', `no run or conversation "${workflowId}"`, workflowId);
  if (found.kind === 'other')
    throw new ClientError(
      'wrong_kind',
      `"${workflowId}" is ${describeKind(found)}, not a run or conversation: delete it with Temporal (temporal workflow delete)`,
      workflowId,
    );
  if (options.kind && found.kind !== options.kind)
    throw new ClientError(
      'wrong_kind',
      `"${workflowId}" is ${describeKind(found)}, not a ${options.kind === 'run' ? 'one-shot run' : 'conversation'}`,
      workflowId,
    );
  if (found.running)
    throw new ClientError(
      'busy',
      found.kind === 'conversation'
        ? `the conversation "${workflowId}" is open: end it first (durable-agents end ${workflowId}), then delete it`
        : `the run "${workflowId}" is still running: cancel it first (durable-agents cancel ${workflowId}), then delete it`,
      workflowId,
    );
  const { payloads, workspaceBlobs } = await purgeClosed(
    client,
    [workflowId],
    client.options.loadedDataConverter.externalStorage,
    options.blobs ?? clientBlobStore(client),
  );
  return { workflowId, kind: found.kind, payloads, workspaceBlobs };
}
