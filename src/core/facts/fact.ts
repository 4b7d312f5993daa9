import type { MemoryScope } from './memory-scope';

/**
 * Facts: what an agent knows about a user beyond one conversation (a preference, an account
 * detail, a decision), kept by the memory store and recalled into later runs. Pure: the shapes,
 * the checks, the ranking that merges full-text and vector hits, and the block the model reads.
 */

/** Where a fact came from: the run (and the tool call or turn) that learned it. */
export interface FactSource {
  workflowId: string;
  runId?: string;
  /** The `remember` call, or the turn whose extraction proposed it (`turn:<n>`). */
  ref?: string;
}

/** A fact as the store keeps it. */
export interface Fact extends MemoryScope {
  id: string;
  text: string;
  /** Structured detail beside the text (`{ "seat": "aisle" }`), plain JSON. */
  value?: unknown;
  /** How sure whoever stated it was, 0..1 (default 1: the user said so). */
  confidence: number;
  source?: FactSource;
  createdAt: string;
  updatedAt: string;
}

/** A deletion of memory as the store records it: who, when, whose and how much; never what. */
export interface MemoryDeletion {
  at: string;
  by: string;
  tenant?: string;
  user?: string;
  agent?: string;
  facts: number;
  profiles: number;
  /**
   * The workflows that held copies of the deleted facts: `told`, the open ones, which took them
   * out of their messages; `closed`, those whose histories (and payloads) still hold them, which
   * Temporal keeps until the namespace's retention ends or they are deleted.
   */
  copies?: {
    told: string[];
    closed: string[];
    /** With `--purge`: the closed ones removed (their runs, and the payloads they stored, `payloads`). */
    purged?: string[];
    payloads?: number;
  };
}

/** What a `remember` (or an extraction) asks the store to keep. */
export interface NewFact {
  text: string;
  value?: unknown;
  confidence?: number;
  source?: FactSource;
}

/** The longest fact kept (characters): facts are sentences, not documents. */
export const MAX_FACT_CHARS = 1_000;
/** The most facts a recall returns. */
export const MAX_RECALL_LIMIT = 50;
/** The facts a recall returns unless it asks for another number. */
export const DEFAULT_RECALL_LIMIT = 8;
/** The most characters of structured value a fact keeps (as JSON). */
export const MAX_FACT_VALUE_BYTES = 8 * 1024;

/** Why `fact` cannot be kept, or undefined. */
export function newFactProblem(fact: NewFact): string | undefined {
  if (typeof fact.text !== 'string' || !fact.text.trim()) return 'a fact needs its text ("text")';
  if (fact.text.length > MAX_FACT_CHARS)
    return `a fact is at most ${MAX_FACT_CHARS} characters (got ${fact.text.length}): keep one statement per fact`;
  if (
    fact.confidence !== undefined &&
    (typeof fact.confidence !== 'number' || !(fact.confidence >= 0 && fact.confidence <= 1))
  )
    return `"confidence" is a number from 0 to 1, got ${JSON.stringify(fact.confidence)}`;
  if (fact.value !== undefined && JSON.stringify(fact.value).length > MAX_FACT_VALUE_BYTES)
    return `a fact's "value" is at most ${MAX_FACT_VALUE_BYTES} bytes of JSON`;
  return undefined;
}

/**
 * One ranking from several (full text, vectors), by reciprocal rank fusion: each list adds
 * 1/(k + rank) to an id's score. RRF needs no calibration between a text rank and a cosine
 * distance, which is why hybrid search engines use it (k = 60, as in the original paper).
 */
export function fuseRankings(lists: readonly (readonly string[])[], limit: number, k = 60): string[] {
  const scores = new Map<string, number>();
  for (const list of lists) list.forEach((id, rank) => scores.set(id, (scores.get(id) ?? 0) + 1 / (k + rank + 1)));
  return [...scores]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, limit)
    .map(([id]) => id);
}

/** The most characters of recalled memory put before the model. */
export const MAX_RECALL_BLOCK_CHARS = 4_000;

/**
 * What the model reads of what was recalled for a turn: the user's profile and the facts, newest
 * statement first where they overlap, within {@link MAX_RECALL_BLOCK_CHARS}. Empty when there is
 * nothing to say (the turn's messages then go unchanged).
 */
export function recallBlock(facts: readonly Pick<Fact, 'id' | 'text' | 'updatedAt'>[], profile?: unknown): string {
  const lines: string[] = [];
  if (profile !== undefined && profile !== null && JSON.stringify(profile) !== '{}')
    lines.push(`Profile: ${JSON.stringify(profile)}`);
  for (const f of facts) lines.push(`- ${f.text} (${f.updatedAt.slice(0, 10)}, id ${f.id})`);
  if (!lines.length) return '';
  let block = `What you remember about this user from earlier conversations (use it when it helps; it may be out of date):\n`;
  for (const line of lines) {
    if (block.length + line.length + 1 > MAX_RECALL_BLOCK_CHARS) break;
    block += `${line}\n`;
  }
  return block.trimEnd();
}
