import { createHash } from 'node:crypto';
import { StorageDriverClaim, type ExternalStorage, type Payload, type StorageDriver } from '@temporalio/common';
// Internal to the SDK, as in client/tool-results.ts: the one reader of its reference payloads.
import { decodeReferencePayload, isReferencePayload } from '@temporalio/common/lib/internal-non-workflow';

/**
 * Removing payloads from the payload store: what a purge of closed workflows needs (a deletion of
 * memory, `memory delete --purge`), which Temporal's External Storage has no call for. Our drivers
 * (files, S3) can; a driver of the user's own without `removePayloads` keeps its payloads.
 */
export interface PayloadRemover {
  /** Removes the payloads of `claims`; answers how many were there. */
  removePayloads(claims: readonly StorageDriverClaim[]): Promise<number>;
  /**
   * Removes every payload the workflow `workflowId` stored, whether its history refers to it or
   * not (a query's answer, stored when a client read the workflow, is in no history); answers how
   * many were there. Drivers keep an index of what each workflow stored for this. `keep`: the
   * claims (their {@link claimKey}) to leave, those its history still refers to.
   */
  removeWorkflowPayloads?(namespace: string, workflowId: string, keep?: ReadonlySet<string>): Promise<number>;
}

/** A claim as one string, whatever the order of its fields: how `keep` sets name claims. */
export function claimKey(claimData: Record<string, string>): string {
  return JSON.stringify(Object.entries(claimData).sort(([a], [b]) => a.localeCompare(b)));
}

/** The key of a workflow in a driver's index of what it stored: the SHA-256 of its namespace and id. */
export function workflowIndexKey(namespace: string, workflowId: string): string {
  return createHash('sha256').update(`${namespace}\n${workflowId}`).digest('hex');
}

/** Every payload the workflow stored, through each driver that keeps an index of them; answers how many were removed. */
export async function removeWorkflowPayloads(
  storage: ExternalStorage | undefined,
  namespace: string,
  workflowId: string,
  keep?: ReadonlySet<string>,
): Promise<number> {
  let removed = 0;
  for (const driver of storage?.drivers ?? []) {
    const remover = driver as StorageDriver & Partial<PayloadRemover>;
    if (remover.removeWorkflowPayloads) removed += await remover.removeWorkflowPayloads(namespace, workflowId, keep);
  }
  return removed;
}

/** A payload-store reference as a raw history holds it: the driver that stored it and its claim. */
export interface StoredPayloadRef {
  driverName: string;
  claimData: Record<string, string>;
}

/**
 * The payload-store references anywhere in `value` (a raw history's events, as the service
 * returns them, before any data converter): External Storage replaces a large payload by a small
 * reference payload, outermost (after the codec), so the claims are readable without keys.
 */
export function storedPayloadRefs(value: unknown): StoredPayloadRef[] {
  const refs: StoredPayloadRef[] = [];
  const seen = new Set<unknown>();
  const walk = (v: unknown, depth: number): void => {
    if (!v || typeof v !== 'object' || depth > 40 || seen.has(v) || ArrayBuffer.isView(v)) return;
    seen.add(v);
    if ('metadata' in v && isReferencePayload(v as Payload)) {
      const { driverName, claimData } = decodeReferencePayload(v as Payload);
      refs.push({ driverName, claimData });
      return;
    }
    for (const item of Array.isArray(v) ? v : Object.values(v)) walk(item, depth + 1);
  };
  walk(value, 0);
  return refs;
}

/**
 * Removes the payloads `refs` name from `storage`, each through the driver that stored it; answers
 * how many were removed and how many stayed (a driver that cannot remove, or one not configured).
 */
export async function removeStoredPayloads(
  storage: ExternalStorage | undefined,
  refs: readonly StoredPayloadRef[],
): Promise<{ removed: number; kept: number }> {
  let removed = 0;
  let kept = 0;
  const byDriver = new Map<string, StoredPayloadRef[]>();
  for (const ref of refs) byDriver.set(ref.driverName, [...(byDriver.get(ref.driverName) ?? []), ref]);
  for (const [name, group] of byDriver) {
    const driver = storage?.getDriver(name) as (StorageDriver & Partial<PayloadRemover>) | null | undefined;
    if (!driver?.removePayloads) {
      kept += group.length;
      continue;
    }
    const n = await driver.removePayloads(group.map((r) => new StorageDriverClaim(r.claimData)));
    removed += n;
    kept += group.length - n;
  }
  return { removed, kept };
}
