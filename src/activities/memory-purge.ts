import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { ExternalStorage } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { claimKey, removeStoredPayloads, removeWorkflowPayloads, storedPayloadRefs } from '../storage/payload-removal';
import type { MemoryFilter } from '../core/facts/memory-scope';
import { MEMORY_ADMIN_MEMO, MEMORY_ADMIN_WORKFLOW_TYPE } from '../contracts/memory-admin';

/**
 * `memory delete --purge`: the closed workflows that held copies of the deleted facts, removed
 * with everything they carried. Their histories cannot change (a workflow's history is its
 * record), so the copies in them go with them: the payloads they put in the payload store, then
 * each of their runs (Temporal's DeleteWorkflowExecution; a closed one is gone from the server
 * shortly after). Open workflows are never purged: they took the facts out of their state.
 */
export async function purgeClosed(
  client: Client,
  workflowIds: readonly string[],
  /** The worker's payload store (default: the client's). */
  storage: ExternalStorage | undefined = client.options.loadedDataConverter.externalStorage,
): Promise<{ purged: string[]; payloads: number }> {
  const namespace = client.options.namespace;
  const purged: string[] = [];
  let payloads = 0;
  for (const workflowId of workflowIds) {
    const runs = await closedRuns(client, workflowId);
    if (!runs) continue;
    for (const { runId, events } of runs) {
      payloads += (await removeStoredPayloads(storage, storedPayloadRefs(events))).removed;
      await client.workflowService.deleteWorkflowExecution({ namespace, workflowExecution: { workflowId, runId } });
    }
    // And what it stored that no history refers to: the answers of queries (a transcript read).
    payloads += await removeWorkflowPayloads(storage, namespace, workflowId);
    purged.push(workflowId);
  }
  return { purged, payloads };
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

async function rawEvents(client: Client, workflowId: string, runId: string): Promise<HistoryEvent[]> {
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

/**
 * The payloads open workflows stored that their histories do not refer to: the answers of their
 * queries (a transcript, a status), stored when a client read them while they still quoted the
 * deleted facts. Their histories' own payloads stay: an open workflow replays from them.
 */
export async function pruneQueryAnswers(
  client: Client,
  workflowIds: readonly string[],
  storage: ExternalStorage | undefined = client.options.loadedDataConverter.externalStorage,
): Promise<number> {
  const namespace = client.options.namespace;
  let removed = 0;
  for (const workflowId of workflowIds) {
    const keep = new Set<string>();
    try {
      let runId: string | undefined = (await client.workflow.getHandle(workflowId).describe()).runId;
      for (; runId;) {
        const events = await rawEvents(client, workflowId, runId);
        for (const ref of storedPayloadRefs(events)) keep.add(claimKey(ref.claimData));
        runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
      }
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) continue;
      throw err;
    }
    removed += await removeWorkflowPayloads(storage, namespace, workflowId, keep);
  }
  return removed;
}

/**
 * The closed memory reads (`memory list`, `show`, `export`, over the CLI or HTTP) that may have
 * returned the deleted facts: each is a short workflow whose result, in its history, lists them.
 * A purge removes them as it removes the runs that held copies. Found by their memo (the filter
 * they read), newest first.
 */
export async function purgeReads(
  client: Client,
  filter: MemoryFilter,
  storage: ExternalStorage | undefined = client.options.loadedDataConverter.externalStorage,
): Promise<{ purged: string[]; payloads: number }> {
  const reads: string[] = [];
  const query = `WorkflowType = '${MEMORY_ADMIN_WORKFLOW_TYPE}' AND ExecutionStatus != 'Running'`;
  for await (const w of client.workflow.list({ query })) {
    const read = w.memo?.[MEMORY_ADMIN_MEMO] as { op?: string; filter?: MemoryFilter } | undefined;
    if (!read?.filter || read.op === 'delete') continue;
    if (overlaps(filter, read.filter)) reads.push(w.workflowId);
  }
  return purgeClosed(client, reads, storage);
}

/** Whether a read with filter `read` may have returned facts that `deleted` selects. */
function overlaps(deleted: MemoryFilter, read: MemoryFilter): boolean {
  const meets = (a: string | undefined, b: string | undefined) => a === undefined || b === undefined || a === b;
  return meets(deleted.user, read.user) && meets(deleted.tenant, read.tenant) && meets(deleted.agent, read.agent);
}
