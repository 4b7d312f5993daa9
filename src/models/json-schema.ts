import { z } from 'zod';
import type { JsonSchemaObject } from '../core/state/run-options';

/**
 * JSON Schema from zod, for tool parameters and structured output: used by workers (what the LLM
 * is offered) and clients (a run's `output` schema) alike.
 */

/** A JSON Schema object as sent to the LLM. */
export type JsonSchema = Record<string, unknown>;

const SAFE_INT_BOUND = Number.MAX_SAFE_INTEGER;

/**
 * The JSON Schema for a tool's zod parameters. zod's own converter does the work; we drop what is
 * noise to an LLM (`$schema`, the safe-integer bounds zod adds to every `.int()`).
 */
export function parametersJsonSchema(parameters: z.ZodObject): JsonSchema {
  const schema = z.toJSONSchema(parameters, { unrepresentable: 'any' }) as JsonSchema;
  delete schema.$schema;
  return stripSafeIntBounds(schema) as JsonSchema;
}

function stripSafeIntBounds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(stripSafeIntBounds);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if ((k === 'minimum' && v === -SAFE_INT_BOUND) || (k === 'maximum' && v === SAFE_INT_BOUND)) continue;
    out[k] = stripSafeIntBounds(v);
  }
  return out;
}

const STRICT_UNSUPPORTED = new Set([
  'not',
  'if',
  'then',
  'else',
  'dependentRequired',
  'dependentSchemas',
  'patternProperties',
  'allOf',
]);

/**
 * Whether OpenAI's strict mode accepts the schema: every object closes `additionalProperties` and
 * requires all of its properties, and no unsupported keyword appears. Optional parameters make a
 * schema non-strict; we then send it without `strict` rather than rewrite the user's types.
 */
export function isStrictCompatible(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.every(isStrictCompatible);
  if (schema === null || typeof schema !== 'object') return true;
  const s = schema as Record<string, unknown>;
  if (Object.keys(s).some((k) => STRICT_UNSUPPORTED.has(k))) return false;
  if (s.type === 'object' || s.properties) {
    const props = Object.keys((s.properties as object) ?? {});
    const required = new Set((s.required as string[]) ?? []);
    if (s.additionalProperties !== false || props.some((p) => !required.has(p))) return false;
  }
  return Object.entries(s).every(([k, v]) => k === 'enum' || k === 'const' || k === 'default' || isStrictCompatible(v));
}

/** A zod schema as JSON Schema, for structured output: `response_format`, and runs that clients start with a zod `output`. */
export function outputJsonSchema(schema: z.ZodType): JsonSchemaObject {
  const json = z.toJSONSchema(schema) as JsonSchemaObject;
  delete json.$schema;
  return json;
}
