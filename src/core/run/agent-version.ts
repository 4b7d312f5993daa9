/**
 * An agent's version: a stable hash of its definition as the worker resolves it (instructions,
 * model and options, each tool's name, description and parameters), so "which prompt answered
 * this customer" has an answer. The same definition gives the same version on any worker and in
 * any process; a changed word of the instructions or a tool's schema gives another. Pure: a hash
 * of canonical JSON (object keys sorted), written out here because core code has no `node:crypto`.
 */

/** The version of an agent definition: `av-` and 16 hex digits. */
export function agentVersion(definition: unknown): string {
  return `av-${hash64(canonicalJson(definition))}`;
}

/** What a run's input (or a conversation's options) holds besides its definition: its message and how it runs. */
const NOT_DEFINITION = new Set([
  'message',
  'images',
  'rerun',
  'continueAsNewAfter',
  'stream',
  'carry',
  'carryVersion',
  'agent',
]);

/**
 * The version of a run or conversation without a named agent: its definition as given (the
 * instructions, model, options and tool lists of its input) with its tools as the worker resolved
 * them (`toolsVersion`: their names, descriptions and parameters), hashed as a named agent's is.
 */
export function unnamedAgentVersion(input: object, toolsVersion: string): string {
  const definition = Object.fromEntries(Object.entries(input).filter(([k]) => !NOT_DEFINITION.has(k)));
  return agentVersion({ definition, tools: toolsVersion });
}

/** JSON with object keys sorted at every depth, `undefined` left out (as JSON.stringify does). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

/** Two 32-bit FNV-1a hashes of the text (different offsets): 64 bits, as 16 hex digits. */
function hash64(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (a >>> 15);
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}
