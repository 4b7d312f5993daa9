import { parseToolArguments, toolErrorText, toolResultText, type ToolOutcome } from '../../core';
import type { ToolRegistry } from './registry';

/**
 * A tool call's arguments made ready to run: parsed, checked against the tool's schema. Mistakes
 * the LLM can fix (an unknown tool, bad JSON, a schema violation) come back as the outcome to send
 * to the LLM, never as exceptions.
 */
export function prepareToolCall(
  registry: ToolRegistry,
  name: string,
  rawArguments: string,
): { ok: true; args: Record<string, unknown> } | { ok: false; outcome: ToolOutcome } {
  if (!registry.has(name))
    return failed(`there is no tool named "${name}" on this worker. Available tools: ${registry.names().join(', ')}.`);
  const parsed = parseToolArguments(rawArguments);
  if (!parsed.ok) return failed(`${name}: ${parsed.error}`);
  const checked = registry.checkArguments(name, parsed.value);
  if (!checked.ok) return failed(`invalid arguments for ${name}: ${checked.problems.join('; ')}`);
  return { ok: true, args: checked.value };
}

/** A tool's return value as the LLM sees it (`result`) and as JSON for the run result (`value`). */
export function toolOutcome(value: unknown): ToolOutcome {
  const outcome: ToolOutcome = { result: toolResultText(value), error: false };
  // A string is its own text: storing it again as `value` would double its history footprint.
  const json = typeof value === 'string' ? undefined : toJsonValue(value);
  if (json !== undefined) outcome.value = json;
  return outcome;
}

function failed(message: string): { ok: false; outcome: ToolOutcome } {
  return { ok: false, outcome: { result: toolErrorText(message), error: true } };
}

/** The value as plain JSON (what survives the trip through Temporal), or undefined. */
function toJsonValue(value: unknown): unknown {
  if (value === undefined) return undefined;
  try {
    const json = JSON.stringify(value);
    return json === undefined ? undefined : JSON.parse(json);
  } catch {
    return undefined;
  }
}
