/**
 * The scripted server's embeddings (`POST /v1/embeddings`): deterministic vectors from a text's
 * words, so tests of hybrid recall get the same answer every time with no model. Each word
 * (lower-cased, its plural `s` dropped) adds to a few of 64 dimensions chosen by its hash: texts
 * that share words are near, texts that share none are far.
 */

/** Dimensions of a scripted embedding. */
export const SCRIPTED_EMBEDDING_DIMENSIONS = 64;

/** The scripted embedding of `text` (unit length; all zeros for a text without words). */
export function scriptedEmbedding(text: string): number[] {
  const v = new Array<number>(SCRIPTED_EMBEDDING_DIMENSIONS).fill(0);
  for (const raw of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    if (raw.length < 3) continue;
    const word = raw.length > 3 && raw.endsWith('s') ? raw.slice(0, -1) : raw;
    let h = 2166136261;
    for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 16777619) >>> 0;
    for (let k = 0; k < 3; k++) v[(h >>> (k * 8)) % SCRIPTED_EMBEDDING_DIMENSIONS] += k === 0 ? 1 : 0.5;
  }
  const norm = Math.hypot(...v);
  return norm ? v.map((x) => x / norm) : v;
}

/** The OpenAI embeddings answer for a request body (`input`: a string or strings). */
export function embeddingsAnswer(body: { input?: unknown; model?: string }): Record<string, unknown> | undefined {
  const inputs = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(inputs) || !inputs.every((i) => typeof i === 'string')) return undefined;
  return {
    object: 'list',
    model: body.model ?? 'scripted-embeddings',
    data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: scriptedEmbedding(text) })),
    usage: { prompt_tokens: inputs.join(' ').length, total_tokens: inputs.join(' ').length },
  };
}
