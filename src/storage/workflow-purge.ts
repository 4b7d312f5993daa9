import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { ExternalStorage } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import type { BlobStore } from './blob-store';
import { removeStoredPayloads, removeWorkflowPayloads, storedPayloadRefs, workflowIndexKey } from './payload-removal';

/**
 * Closed workflows removed with everything they carried: what `durable-agents delete` does to one
 * run, and `memory delete --purge` to those that held copies of the deleted facts. Their histories cannot change (a workflow's history is its
 * record), so the copies in them go with them: the payloads they put in the payload store, then
 * each of their runs (Temporal's DeleteWorkflowExecution; a closed one is gone from the server
 * shortly after), then the states of their workspaces. Open workflows are never purged: they
 * took the facts out of their state.
 */
export async function purgeClosed(
  client: Client,
  workflowIds: readonly string[],
  /** The worker's payload store (default: the client's). */
  storage: ExternalStorage | undefined = client.options.loadedDataConverter.externalStorage,
  /** The worker's blob store, where the workflows' workspace states are (none: they stay). */
  blobs?: BlobStore,
): Promise<{ purged: string[]; payloads: number; workspaceBlobs: number }> {
  const namespace = client.options.namespace;
  const purged: string[] = [];
  let payloads = 0;
  let workspaceBlobs = 0;
  for (const workflowId of workflowIds) {
    const runs = await closedRuns(client, workflowId);
    if (!runs) continue;
    for (const { runId, events } of runs) {
      payloads += (await removeStoredPayloads(storage, storedPayloadRefs(events))).removed;
      await client.workflowService.deleteWorkflowExecution({ namespace, workflowExecution: { workflowId, runId } });
    }
    // And what it stored that no history refers to: the answers of queries (a transcript read).
    payloads += await removeWorkflowPayloads(storage, namespace, workflowId);
    // And the states of its workspace: the scope of the blob store named by the same key (see
    // src/workspace/workspace-store.ts).
    if (blobs?.removeScope) workspaceBlobs += await blobs.removeScope(workflowIndexKey(namespace, workflowId));
    purged.push(workflowId);
  }
  return { purged, payloads, workspaceBlobs };
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/**
 * The runs of a closed workflow, newest first, back through continue-as-new, with their raw
 * events (no data converter: the payload-store references as stored); undefined when it is open
 * (a purge never touches a running workflow) or already gone.
 */
async function closedRuns(
  client: Client,
  workflowId: string,
): Promise<Array<{ runId: string; events: HistoryEvent[] }> | undefined> {
  let latest: string | undefined;
  try {
    const described = await client.workflow.getHandle(workflowId).describe();
    if (described.status.name === 'RUNNING') return undefined;
    latest = described.runId;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
  const runs: Array<{ runId: string; events: HistoryEvent[] }> = [];
  for (let runId: string | undefined = latest; runId;) {
    const events = await rawEvents(client, workflowId, runId);
    runs.push({ runId, events });
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  return runs;
}

/** A run's raw events (no data converter: payload-store references as stored). */
export async function rawEvents(client: Client, workflowId: string, runId: string): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId, runId },
      ...(nextPageToken ? { nextPageToken } : {}),
    });
    events.push(...(page.history?.events ?? []));
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return events;
}
