import type { ConversationState } from './conversation-state';
import type { ChatMessage } from '../messages/chat-message';
import type { RunState } from '../state/run-state';
import { findFingerprints, fingerprint, type Fingerprint } from '../facts/fingerprints';

/**
 * A deletion of memory reaching the conversations that hold copies of the deleted facts: the
 * `remember` call that stated one, its result, a `recall` result that listed it, a summary that
 * quoted it. The store's copy is gone by then; these are the words a workflow still keeps and
 * would send to the model again. Pure: which messages change and how.
 */

/** The text that replaces a forgotten fact wherever a conversation quoted it. */
export const FORGOTTEN_TEXT = '[forgotten]';

/**
 * Facts deleted from memory, as a workflow holding copies of them is told (the `memoryForgotten`
 * signal): by fingerprint, never by text, since what a workflow is told stays in its history
 * (see `fingerprints.ts`). Make one with {@link forgottenFacts}.
 */
export interface MemoryForgotten {
  /** When the deletion was made (ISO 8601). */
  at: string;
  /** The seed the fingerprints are made with: random per deletion. */
  seed?: string;
  /**
   * Each deleted fact: the fingerprints of the forms it may be quoted in (as written, and
   * JSON-escaped as in a tool call's arguments), and `ref`, the `remember` call that stated it,
   * when this workflow made it. (`text`: the fact itself, as deletions before fingerprints told
   * it; read only so their histories replay.)
   */
  facts: Array<{ fingerprints?: Fingerprint[]; ref?: string; text?: string }>;
}

/** The seed of the fingerprints a `text` of a deletion recorded before them is searched with. */
const TEXT_SEED = 'text';

/**
 * What a workflow holding copies of deleted facts is told: their fingerprints under `seed` (draw
 * it at random for each deletion), never their text. Facts shorter than
 * {@link MIN_FORGOTTEN_CHARS} get none (only their `remember` call, by `ref`, is blanked).
 */
export function forgottenFacts(
  facts: ReadonlyArray<{ text: string; ref?: string }>,
  at: string,
  seed: string,
): MemoryForgotten {
  return {
    at,
    seed,
    facts: facts.map((f) => ({
      fingerprints: formsOf(f.text).map((form) => fingerprint(form, seed)),
      ...(f.ref ? { ref: f.ref } : {}),
    })),
  };
}

/** The forms a fact is searched in: as written, and JSON-escaped (in a tool call's or result's JSON). */
function formsOf(text: string): string[] {
  const trimmed = text.trim();
  if (trimmed.length < MIN_FORGOTTEN_CHARS) return [];
  return [...new Set([trimmed, JSON.stringify(trimmed).slice(1, -1)])];
}

/**
 * Facts shorter than this are not searched for in the messages: a two-word fact ("Likes tea")
 * would blank the same words wherever the conversation used them for something else.
 */
export const MIN_FORGOTTEN_CHARS = 12;

/** The note a marked summary ends with, so the model stops relying on what it said of the deleted facts. */
export function forgottenNote(at: string): string {
  return `\n\n(Some facts about the user that this summary drew on were deleted at their request on ${at.slice(0, 10)}; do not rely on what it says of them.)`;
}

/**
 * `messages` with every quotation of a forgotten fact replaced by {@link FORGOTTEN_TEXT}: in text,
 * in tool-call arguments (where the text is JSON-escaped) and in tool results. A summary message
 * (`summary: {from, to}`) that quoted one, or that covers a message that did, is marked
 * (`forgotten`) and ends with {@link forgottenNote}: a summary paraphrases, so words alone cannot
 * find every trace of a fact in it. `changed` is how many messages changed (0: `messages` itself).
 */
export function forgetQuotes(
  messages: readonly ChatMessage[],
  forgotten: MemoryForgotten,
  /** The index of `messages[0]` in the numbering of summaries' `from` and `to` (the run's messages). */
  base = 0,
): { messages: readonly ChatMessage[]; changed: number } {
  const texts = searchOf(forgotten);
  const refs = new Set(forgotten.facts.flatMap((f) => (f.ref ? [f.ref] : [])));
  const quoted = new Set<number>();
  const counts = new Map<number, number>();
  const next = messages.map((message, i) => {
    const { message: redacted, hits } = redact(message, texts, refs);
    if (hits === 0) return message;
    quoted.add(i);
    counts.set(i, hits);
    return uncounted(redacted);
  });
  for (let i = 0; i < next.length; i++) {
    const message = next[i];
    if (message.role !== 'system' || !message.summary) continue;
    let covered = counts.get(i) ?? 0;
    for (const j of quoted)
      if (j + base >= message.summary.from && j + base < message.summary.to) covered += counts.get(j)!;
    if (covered === 0) continue;
    const prior = message.forgotten;
    next[i] = {
      ...uncounted(message),
      content: prior ? message.content : message.content + forgottenNote(forgotten.at),
      forgotten: { at: forgotten.at, facts: (prior?.facts ?? 0) + covered },
    };
    quoted.add(i);
  }
  if (quoted.size === 0) return { messages, changed: 0 };
  return { messages: next, changed: quoted.size };
}

/**
 * `value` (plain JSON: a run's tool results, its events, its recalled block) with every
 * quotation of a forgotten fact replaced, in every string however deep; the same object where
 * nothing changed. `hits`: how many quotations it had.
 */
export function forgetInValue<T>(value: T, forgotten: MemoryForgotten): { value: T; hits: number } {
  const texts = searchOf(forgotten);
  let hits = 0;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      const out = replaceQuotes(v, texts);
      hits += out.hits;
      return out.text;
    }
    if (Array.isArray(v)) {
      const items = v.map(walk);
      return items.some((item, i) => item !== v[i]) ? items : v;
    }
    if (v && typeof v === 'object') {
      let changed = false;
      const entries = Object.entries(v).map(([k, item]) => {
        const next = walk(item);
        if (next !== item) changed = true;
        return [k, next] as const;
      });
      return changed ? Object.fromEntries(entries) : v;
    }
    return v;
  };
  const out = walk(value) as T;
  return { value: hits ? out : value, hits };
}

/** What is searched for: the facts' fingerprints, and the seed they are made with. */
interface Search {
  seed: string;
  prints: Fingerprint[];
}

/** The search a deletion asks for (a deletion recorded before fingerprints named its texts: they are fingerprinted here). */
function searchOf(forgotten: MemoryForgotten): Search {
  const prints: Fingerprint[] = [];
  const seed = forgotten.seed ?? TEXT_SEED;
  for (const f of forgotten.facts) {
    if (f.fingerprints) prints.push(...f.fingerprints);
    else if (f.text !== undefined) for (const form of formsOf(f.text)) prints.push(fingerprint(form, seed));
  }
  return { seed, prints };
}

/** `s` with each quotation the search finds replaced by {@link FORGOTTEN_TEXT}, and how many there were. */
function replaceQuotes(s: string, search: Search): { text: string; hits: number } {
  const found = findFingerprints(s, search.prints, search.seed);
  if (found.length === 0) return { text: s, hits: 0 };
  let out = '';
  let at = 0;
  for (const [start, end] of found) {
    out += s.slice(at, start) + FORGOTTEN_TEXT;
    at = end;
  }
  return { text: out + s.slice(at), hits: found.length };
}

function withoutMessages(state: RunState): Omit<RunState, 'messages'> {
  const { messages: _messages, ...rest } = state;
  return rest;
}

/** A changed message without its token count (which was of the old text: the next model call counts it again). */
function uncounted<M extends ChatMessage>(message: M): M {
  const { tokens: _tokens, ...rest } = message;
  return rest as M;
}

/** One message with the quotations of `texts` (and the `remember` calls `refs`) replaced, and how many it had. */
function redact(message: ChatMessage, texts: Search, refs: ReadonlySet<string>) {
  let hits = 0;
  const replace = (s: string): string => {
    const out = replaceQuotes(s, texts);
    hits += out.hits;
    return out.text;
  };
  switch (message.role) {
    case 'assistant': {
      const content = message.content === null ? null : replace(message.content);
      const calls = message.tool_calls?.map((call) => {
        const args = replace(call.function.arguments);
        if (args === call.function.arguments && !refs.has(call.id)) return call;
        if (refs.has(call.id) && args === call.function.arguments) hits++;
        // A `remember` call whose text is shorter than the search threshold still stated the fact.
        const stated = refs.has(call.id) ? JSON.stringify({ text: FORGOTTEN_TEXT }) : args;
        return { ...call, function: { ...call.function, arguments: stated } };
      });
      if (hits === 0) return { message, hits };
      return { message: { ...message, content, ...(calls ? { tool_calls: calls } : {}) }, hits };
    }
    case 'tool': {
      const content = refs.has(message.tool_call_id) ? JSON.stringify({ forgotten: true }) : replace(message.content);
      if (content === message.content) return { message, hits };
      if (hits === 0) hits = 1;
      return { message: { ...message, content }, hits };
    }
    default: {
      const content = replace(message.content);
      return hits === 0 ? { message, hits } : { message: { ...message, content } as ChatMessage, hits };
    }
  }
}

/**
 * A one-shot run with the forgotten facts' quotations replaced (see {@link forgetQuotes}), as a
 * new version of its messages (`revision`: the worker's message cache takes them whole, since
 * earlier ones changed). `changed` 0: the state itself.
 */
export function forgetInRun(state: RunState, forgotten: MemoryForgotten): { state: RunState; changed: number } {
  // After continue-as-new, summaries number messages as the first run did (see `carriedRunState`).
  const { messages, changed } = forgetQuotes(state.messages, forgotten, state.messagesBefore ?? 0);
  // Beyond the messages: its tool results (shown in status and results), its recalled block.
  const other = forgetInValue(withoutMessages(state), forgotten);
  if (!changed && !other.hits) return { state, changed: 0 };
  const next: RunState = { ...other.value, messages: messages as ChatMessage[] };
  // A new version of the messages only when they changed: the worker's cache then takes them whole.
  if (changed) next.revision = (state.revision ?? 0) + 1;
  return { state: next, changed: changed + other.hits };
}

/**
 * A conversation with the forgotten facts' quotations replaced, in the messages it keeps between
 * turns, in the running turn's (`run`) and in the branches it holds whole. A new version of the
 * messages, never one used before in this run (as a fork makes: see `branches.ts`).
 */
export function forgetInConversation(
  conv: ConversationState,
  run: RunState | undefined,
  forgotten: MemoryForgotten,
): { conv: ConversationState; run?: RunState; changed: number } {
  const base = conv.options.system !== undefined ? 1 : 0;
  const kept = forgetQuotes(conv.messages, forgotten, base);
  let held = 0;
  const branches = conv.branches?.map((b) => {
    const out = forgetQuotes(b.messages, forgotten, base);
    held += out.changed;
    return out.changed ? { ...b, messages: out.messages as ChatMessage[] } : b;
  });
  const { messages: _messages, branches: _branches, ...rest } = conv;
  const other = forgetInValue(rest, forgotten);
  // The running turn is a run like any other; its new version is the conversation's.
  const running = run ? forgetInRun(run, forgotten) : undefined;
  const changed = kept.changed + held + other.hits + (running?.changed ?? 0);
  if (!changed) return { conv, ...(run ? { run } : {}), changed: 0 };
  const revision = Math.max(conv.revision ?? 0, conv.revisionsMade ?? 0, run?.revision ?? 0) + 1;
  const next: ConversationState = {
    ...other.value,
    messages: kept.messages as ChatMessage[],
    ...(branches ? { branches } : {}),
    revision,
    revisionsMade: revision,
  };
  return running ? { conv: next, run: { ...running.state, revision }, changed } : { conv: next, changed };
}
