/** The outcome of reading a tool call's `arguments` string. */
export type ParsedArguments = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

/**
 * Reads the JSON arguments an LLM produced for a tool call. Models send `""` for tools without
 * parameters, so blank means `{}`; anything that is not a JSON object is an error the LLM can fix.
 */
export function parseToolArguments(raw: string | undefined | null): ParsedArguments {
  if (raw == null || raw.trim() === '') return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    return { ok: false, error: `the arguments are not valid JSON (${(err as Error).message}): ${truncate(raw, 200)}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, error: `the arguments must be a JSON object, got: ${truncate(raw, 200)}` };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/** Shortens `text` to at most `max` characters, marking the cut with an ellipsis. */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}
