import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { ExternalStorage } from '@temporalio/common';
import { claimKey, removeWorkflowPayloads, storedPayloadRefs } from '../storage/payload-removal';
import { purgeClosed, rawEvents } from '../storage/workflow-purge';
import type { MemoryFilter } from '../core/facts/memory-scope';
import type { Fact } from '../core/facts/fact';
import { MEMORY_ADMIN_MEMO, MEMORY_ADMIN_WORKFLOW_TYPE } from '../contracts/memory-admin';

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
): Promise<{ purged: string[]; payloads: number; workspaceBlobs: number }> {
  const reads: string[] = [];
  const query = `WorkflowType = '${MEMORY_ADMIN_WORKFLOW_TYPE}' AND ExecutionStatus != 'Running'`;
  for await (const w of client.workflow.list({ query })) {
    const read = w.memo?.[MEMORY_ADMIN_MEMO] as { op?: string; filter?: MemoryFilter } | undefined;
    if (!read?.filter || read.op === 'delete') continue;
    if (!overlaps(filter, read.filter)) continue;
    // A fact read by its id names no user to go by: what it showed does.
    if (read.op === 'show' && !(await showed(client, w.workflowId, filter))) continue;
    reads.push(w.workflowId);
  }
  return purgeClosed(client, reads, storage);
}

/**
 * Whether a `show` read returned a fact `deleted` selects: its result says whose it was. One it
 * cannot read (gone, or undecodable here) is taken to have, as a read by a filter is.
 */
async function showed(client: Client, workflowId: string, deleted: MemoryFilter): Promise<boolean> {
  try {
    const result = (await client.workflow.getHandle(workflowId).result()) as { fact?: Fact } | undefined;
    return result?.fact !== undefined && overlaps(deleted, result.fact);
  } catch {
    return true;
  }
}

/** Whether a read with filter `read` may have returned facts that `deleted` selects. */
function overlaps(deleted: MemoryFilter, read: MemoryFilter): boolean {
  const meets = (a: string | undefined, b: string | undefined) => a === undefined || b === undefined || a === b;
  return meets(deleted.user, read.user) && meets(deleted.tenant, read.tenant) && meets(deleted.agent, read.agent);
}
