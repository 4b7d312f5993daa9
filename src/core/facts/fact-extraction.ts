import type { Fact, NewFact } from './fact';
import { MAX_FACT_CHARS } from './fact';

/**
 * Automatic extraction (`memory: { extract: true }`): after a turn, one model call reads what the
 * user said and what the agent answered, beside the facts already kept, and proposes changes.
 * Pure: the prompt and the reading of the reply. The reply is data the model wrote, so anything
 * malformed is dropped, never thrown: a turn never fails for its memory.
 */

/** What one extraction proposes. */
export interface FactChanges {
  add: NewFact[];
  /** A kept fact restated (a new address): its text replaced. */
  update: { id: string; text: string }[];
  /** Kept facts that are no longer true. */
  retire: string[];
  /** Working memory: the profile's fields that changed (when the agent keeps a profile). */
  profile?: Record<string, unknown>;
}

/** The instructions of an extraction call (its system message). */
export const EXTRACTION_INSTRUCTIONS = `You keep the long-term memory of an assistant about one user.
Read the exchange and the facts already kept. Propose only lasting facts about the user (preferences,
personal and account details, decisions, plans), never the conversation's small talk or the assistant's own words.
Answer with JSON only: {"add":[{"text":"...","confidence":0.9}],"update":[{"id":"...","text":"..."}],"retire":["id"]}
- add: new facts, one short third-person statement each ("Lives in Lyon").
- update: a kept fact the user has changed (give its id and the new statement).
- retire: ids of kept facts the user said are no longer true, or asked you to forget.
Answer {"add":[],"update":[],"retire":[]} when nothing lasting was said.`;

/** The user message of an extraction call: the kept facts (and the profile, with its schema), then the exchange. */
export function extractionRequest(
  kept: readonly Pick<Fact, 'id' | 'text'>[],
  exchange: readonly { role: 'user' | 'assistant'; text: string }[],
  profile?: { schema: Record<string, unknown>; current?: Record<string, unknown> },
): string {
  const facts = kept.length ? kept.map((f) => `- [${f.id}] ${f.text}`).join('\n') : '(none)';
  const said = exchange.map((m) => `${m.role === 'user' ? 'User' : 'Assistant'}: ${m.text}`).join('\n');
  const working = profile
    ? `\n\nThe user's profile (JSON Schema ${JSON.stringify(profile.schema)}), now: ${JSON.stringify(profile.current ?? {})}\n` +
      'Also answer "profile": {the fields the exchange sets or changes, with their new values} ({} when none).'
    : '';
  return `Facts already kept:\n${facts}${working}\n\nExchange:\n${said}`;
}

/** The changes in an extraction reply; what is not there, or not well formed, is no change. */
export function parseFactChanges(reply: string, keptIds: ReadonlySet<string>): FactChanges {
  const none: FactChanges = { add: [], update: [], retire: [] };
  const json = /\{[\s\S]*\}/.exec(reply)?.[0];
  if (!json) return none;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return none;
  }
  if (!parsed || typeof parsed !== 'object') return none;
  const o = parsed as Record<string, unknown>;
  const text = (t: unknown) => (typeof t === 'string' && t.trim() ? t.trim().slice(0, MAX_FACT_CHARS) : undefined);
  const add: NewFact[] = [];
  for (const a of Array.isArray(o.add) ? o.add : []) {
    const t = text((a as { text?: unknown })?.text);
    if (!t) continue;
    const c = (a as { confidence?: unknown }).confidence;
    add.push({ text: t, ...(typeof c === 'number' && c >= 0 && c <= 1 ? { confidence: c } : {}) });
  }
  const update: FactChanges['update'] = [];
  for (const u of Array.isArray(o.update) ? o.update : []) {
    const id = (u as { id?: unknown })?.id;
    const t = text((u as { text?: unknown })?.text);
    if (typeof id === 'string' && keptIds.has(id) && t) update.push({ id, text: t });
  }
  const retire = (Array.isArray(o.retire) ? o.retire : []).filter(
    (id): id is string => typeof id === 'string' && keptIds.has(id),
  );
  const profile =
    o.profile && typeof o.profile === 'object' && !Array.isArray(o.profile) && Object.keys(o.profile).length
      ? (o.profile as Record<string, unknown>)
      : undefined;
  return { add, update, retire: [...new Set(retire)], ...(profile ? { profile } : {}) };
}
