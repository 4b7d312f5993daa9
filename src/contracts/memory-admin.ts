import type { Fact, MemoryDeletion } from '../core/facts/fact';
import type { MemoryFilter } from '../core/facts/memory-scope';

/**
 * People's control of memory across conversations (`durable-agents memory`, the HTTP API's
 * `/memory` routes): what a client asks the workers, which hold the store. It goes through a
 * short workflow (`memoryAdminWorkflow`) on the agents' task queue: the embedded store is one
 * worker process's, and a deletion is then recorded in Temporal too (who, when, whose), beside
 * the store's own record.
 */

/** The workflow type of a memory request. */
export const MEMORY_ADMIN_WORKFLOW_TYPE = 'memoryAdminWorkflow';

/** The memo key of a memory admin workflow: its `op` and `filter`, so a purge finds the reads of a deleted user's facts. */
export const MEMORY_ADMIN_MEMO = 'memoryAdmin';

/** A request about memory, for whom `filter` selects. */
export type MemoryAdminRequest =
  | { op: 'list'; filter: MemoryFilter; limit?: number; after?: string }
  | { op: 'show'; filter: MemoryFilter; id: string }
  | {
      op: 'delete';
      filter: MemoryFilter;
      by: string;
      /**
       * Also remove the closed workflows that held copies of the facts, with the payloads they put
       * in the payload store (their histories cannot change; open ones take the facts out themselves).
       */
      purge?: boolean;
    }
  | { op: 'export'; filter: MemoryFilter };

/** A user's memory as exported: their facts, profiles and the deletions recorded for them. */
export interface MemoryExport {
  exportedAt: string;
  filter: MemoryFilter;
  facts: Fact[];
  profiles: Array<{ tenant?: string; user: string; agent?: string; profile: Record<string, unknown> }>;
  deletions: MemoryDeletion[];
}

/** The answer to a {@link MemoryAdminRequest}. */
export type MemoryAdminResult =
  | { op: 'list'; facts: Fact[]; next?: string }
  | { op: 'show'; fact?: Fact }
  | { op: 'delete'; deletion: MemoryDeletion }
  | { op: 'export'; export: MemoryExport };
