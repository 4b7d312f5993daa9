import type { Fact, MemoryDeletion, NewFact } from '../core/facts/fact';
import type { MemoryFilter, MemoryScope } from '../core/facts/memory-scope';

/**
 * The memory store: facts about users, kept across conversations, and each user's profile. One
 * interface, two databases behind it (see sql-memory-store.ts): PGlite in a directory of the
 * project by default, PostgreSQL for a fleet (`AGENT_MEMORY_URL`).
 */
export interface MemoryStore {
  /**
   * Keeps a fact, once per `key`: a retried write (the same tool call after a crash) finds the
   * fact the first one stored and answers with it, instead of storing a second.
   */
  remember(scope: MemoryScope, fact: NewFact, key: string): Promise<Fact>;
  /** The facts of `scope` that bear on `query`, best first (full text, plus vectors when there is an embedder). */
  recall(scope: MemoryScope, query: string, limit: number): Promise<Fact[]>;
  /** Replaces a fact's text (an extraction's update); false when `scope` has no such fact. */
  update(scope: MemoryScope, id: string, text: string): Promise<boolean>;
  /** Drops facts of `scope` by id; answers the ids that were there. */
  forget(scope: MemoryScope, ids: readonly string[]): Promise<string[]>;
  /** Every fact `filter` selects, newest first (people's control: `memory list`, export). */
  list(filter: MemoryFilter, options?: { limit?: number; after?: string }): Promise<Fact[]>;
  /** One fact by id, if `filter` reaches it. */
  get(filter: MemoryFilter, id: string): Promise<Fact | undefined>;
  /**
   * The workflows that hold copies of the facts `filter` selects: the one each fact came from
   * (its `remember` call, or the turn an extraction read) and those a `recall` gave it to.
   */
  holders(filter: MemoryFilter): Promise<FactHolder[]>;
  /** Records that the facts `ids` were given to `workflowId` (a `recall` result it keeps). */
  noteCopies(ids: readonly string[], workflowId: string): Promise<void>;
  /**
   * Deletes everything `filter` selects (facts, their vectors, profiles) and records the
   * deletion (who, when, how much, which workflows held copies; never what). Retried writes of
   * deleted facts stay deleted.
   */
  delete(filter: MemoryFilter, by: string, copies?: MemoryDeletion['copies']): Promise<MemoryDeletion>;
  /** The deletions recorded for `filter` (its tenant and user), newest first. */
  deletions(filter: MemoryFilter): Promise<MemoryDeletion[]>;
  /** A user's profile (working memory), or undefined. */
  profile(scope: MemoryScope): Promise<Record<string, unknown> | undefined>;
  /** Replaces a user's profile. */
  setProfile(scope: MemoryScope, profile: Record<string, unknown>): Promise<void>;
  /** What the store is and can do, for `memory status` and worker notes. */
  describe(): Promise<MemoryStoreInfo>;
  close(): Promise<void>;
}

export type { MemoryDeletion } from '../core/facts/fact';

/** A workflow holding a copy of a fact: where the fact came from, or went to. */
export interface FactHolder {
  workflowId: string;
  text: string;
  /** The `remember` call that stated it, in that workflow. */
  ref?: string;
}

/** What a store is. */
export interface MemoryStoreInfo {
  kind: 'embedded' | 'postgres';
  /** The directory (embedded) or the server, without credentials. */
  where: string;
  /** Whether recall ranks by vectors too (pgvector is there and an embedder is configured). */
  vectors: boolean;
  facts: number;
}

/** Turns texts into vectors for recall (any provider's embeddings; see `embedderFor`). */
export interface Embedder {
  /** The model's name, stored with each vector: vectors of different models are never compared. */
  readonly model: string;
  embed(texts: string[]): Promise<number[][]>;
}

/** A process's memory store, opened at its first use (see `lazyMemoryStore`), and where it is, for messages. */
export interface MemoryAccess {
  store(): Promise<MemoryStore>;
  close(): Promise<void>;
  where: string;
  /** The embedded store's directory (PGlite: this process's only), when that is where memory is kept. */
  embeddedDir?: string;
}
