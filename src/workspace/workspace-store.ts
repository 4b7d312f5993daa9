import type { BlobStore } from '../storage/blob-store';
import { workflowIndexKey } from '../storage/payload-removal';

/**
 * Where workspace states are kept: each workflow's (a run's, a conversation's, across its
 * continue-as-new runs) in a scope of the blob store of its own, so that deleting its data
 * deletes them (`durable-agents delete`, `memory delete --purge`: storage/workflow-purge.ts
 * removes the scope by the same key). Contents are shared by hash
 * within a workflow's scope, never across workflows: a state another workflow still uses can
 * never be deleted with this one's.
 *
 * A state's reference names its scope: `ws:<scope>:sha256:<hex>` (the manifest's reference
 * in that scope, whose files' contents are in the same scope). A fork or rerun starts from a copy
 * of its parent's state in its own scope, made as the client forks it (`copyState`), or, when
 * that client could not reach the store, on its first call in the workspace; so deleting the
 * parent takes nothing it needs. A store without
 * scopes (a `BlobStore` of the user's own that lacks `scope`), and states saved before scopes,
 * have plain `sha256:` references into the shared store.
 */

/** A workflow's scope: the SHA-256 of its namespace and id (safe in any path or key, and no id shown in it). */
export function workspaceScope(namespace: string, workflowId: string): string {
  return workflowIndexKey(namespace, workflowId);
}

const SCOPED = /^ws:([0-9a-f]{64}):(.+)$/;

/** The scope a state's reference is in (undefined: the shared store) and the manifest's reference there. */
export function parseStateRef(ref: string): { scope?: string; manifest: string } {
  const m = SCOPED.exec(ref);
  return m ? { scope: m[1], manifest: m[2] } : { manifest: ref };
}

/** The store that holds the state `ref` (its manifest and contents), and the manifest's reference in it. */
export function stateStore(blobs: BlobStore, ref: string): { store: BlobStore; manifest: string } {
  const { scope, manifest } = parseStateRef(ref);
  if (scope === undefined) return { store: blobs, manifest };
  if (!blobs.scope)
    throw new Error(
      `the workspace state ${ref} is in a scope of its run's, and the blob store at ${blobs.location} has none: read it with the store the worker saved it in`,
    );
  return { store: blobs.scope(scope), manifest };
}

/**
 * Where the workflow `scope` saves its states: its scope of `blobs` (the shared store when the
 * store has no scopes), and how a manifest's reference there is written as a state's.
 */
export function ownStore(blobs: BlobStore, scope: string): { store: BlobStore; stateRef(manifest: string): string } {
  if (!blobs.scope) return { store: blobs, stateRef: (manifest) => manifest };
  return { store: blobs.scope(scope), stateRef: (manifest) => `ws:${scope}:${manifest}` };
}

/** Whether the state `ref` is in the scope `scope` (one saved by that workflow, or its continued runs). */
export function inScope(blobs: BlobStore, ref: string | undefined, scope: string): boolean {
  if (ref === undefined) return true;
  const found = parseStateRef(ref).scope;
  return blobs.scope ? found === scope : found === undefined;
}
