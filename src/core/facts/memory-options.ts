import { DEFAULT_RECALL_LIMIT, MAX_RECALL_LIMIT } from './fact';

/**
 * An agent's memory across conversations (`defineAgent({ memory })`): whose facts it shares,
 * whether each turn starts with the facts that bear on it, and whether each turn ends with the
 * model proposing new ones. Plain JSON: it reaches the workflow with the agent.
 */
export interface AgentMemory {
  /**
   * `user` (default): the facts every agent of the tenant knows about the user. `agent`: this
   * agent's own facts about the user, which other agents do not see.
   */
  scope?: 'user' | 'agent';
  /**
   * Each turn starts with the facts that bear on the new message (and the profile), put after
   * the conversation so far, where they do not change the prompt's cached prefix. `true`: the
   * best {@link DEFAULT_RECALL_LIMIT}; `{ limit }`: that many.
   */
  recall?: boolean | { limit?: number };
  /**
   * Each turn ends with a model call that reads it and proposes facts to keep, update or retire.
   * `{ model }`: a cheaper model for it than the run's.
   */
  extract?: boolean | { model?: string };
  /**
   * Working memory: a structured profile of the user (JSON Schema of an object; `defineAgent`
   * takes a zod object), beside the facts. Recall shows it whole; extraction fills and updates it
   * (the changed fields, checked against the schema).
   */
  profile?: Record<string, unknown>;
}

/** An agent's memory settings, with defaults: what the workflow acts on. */
export interface MemoryPlan {
  scope: 'user' | 'agent';
  /** Facts recalled at the start of a turn; 0: none. */
  recall: number;
  extract: false | { model?: string };
  /** The profile's JSON Schema, when the agent keeps one. */
  profile?: Record<string, unknown>;
}

/** The plan of `memory`, or undefined when the agent keeps no memory across conversations. */
export function memoryPlan(memory: AgentMemory | undefined): MemoryPlan | undefined {
  if (!memory || (!memory.recall && !memory.extract)) return undefined;
  const recall =
    memory.recall === true
      ? DEFAULT_RECALL_LIMIT
      : memory.recall
        ? Math.min(MAX_RECALL_LIMIT, memory.recall.limit ?? DEFAULT_RECALL_LIMIT)
        : 0;
  const extract = memory.extract === true ? {} : memory.extract ? memory.extract : false;
  return { scope: memory.scope ?? 'user', recall, extract, ...(memory.profile ? { profile: memory.profile } : {}) };
}

/** Why `memory` is not an agent's memory setting, or undefined. */
export function agentMemoryProblem(memory: unknown): string | undefined {
  if (memory === undefined) return undefined;
  if (!memory || typeof memory !== 'object') return '"memory" must be an object: { scope, recall, extract }';
  const m = memory as Record<string, unknown>;
  const unknown = Object.keys(m).filter((k) => !['scope', 'recall', 'extract', 'profile'].includes(k));
  if (unknown.length)
    return `"memory" has unknown settings: ${unknown.join(', ')} (it takes scope, recall, extract, profile)`;
  if (m.profile !== undefined && (!m.profile || typeof m.profile !== 'object' || Array.isArray(m.profile)))
    return '"memory.profile" must be the schema of an object (a zod object in defineAgent)';
  if (m.scope !== undefined && m.scope !== 'user' && m.scope !== 'agent')
    return `"memory.scope" is "user" or "agent", got ${JSON.stringify(m.scope)}`;
  if (m.recall !== undefined && typeof m.recall !== 'boolean') {
    const limit = (m.recall as { limit?: unknown })?.limit;
    if (
      typeof m.recall !== 'object' ||
      (limit !== undefined &&
        (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_RECALL_LIMIT))
    )
      return `"memory.recall" is true or { limit } with a limit from 1 to ${MAX_RECALL_LIMIT}`;
  }
  if (m.extract !== undefined && typeof m.extract !== 'boolean') {
    const model = (m.extract as { model?: unknown })?.model;
    if (typeof m.extract !== 'object' || (model !== undefined && (typeof model !== 'string' || !model)))
      return '"memory.extract" is true or { model } with a model name';
  }
  return undefined;
}
