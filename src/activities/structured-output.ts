import { z } from 'zod';
import type { JsonSchemaObject } from '../core/state/run-options';
import type { AgentRegistry } from '../agents/agent-registry';
import { outputJsonSchema } from '../models/json-schema';

/** The schema a model call's final answer must satisfy: zod to check it, JSON Schema to ask for it. */
export interface OutputSchema {
  zod: z.ZodType;
  json: JsonSchemaObject;
}

/**
 * Finds the output schema of a model call: the run's own (JSON Schema, turned into zod so both
 * kinds are checked the same way and errors read the same), else its agent's (zod).
 */
export class OutputSchemas {
  private readonly fromJson = new Map<string, OutputSchema>();

  constructor(private readonly agents: AgentRegistry) {}

  for(input: { agent?: string; output?: JsonSchemaObject }): OutputSchema | undefined {
    if (input.output) {
      const key = JSON.stringify(input.output);
      let schema = this.fromJson.get(key);
      if (!schema) {
        schema = { zod: z.fromJSONSchema(input.output as Parameters<typeof z.fromJSONSchema>[0]), json: input.output };
        if (this.fromJson.size > 100) this.fromJson.clear();
        this.fromJson.set(key, schema);
      }
      return schema;
    }
    const zod = this.agents.outputSchema(input.agent);
    return zod ? { zod, json: outputJsonSchema(zod) } : undefined;
  }
}

/**
 * Checks a final answer against the schema: the parsed value, or the exact reason it is not valid,
 * worded for the LLM to fix. A Markdown code fence around the JSON is tolerated.
 */
export function checkAnswer(
  schema: OutputSchema,
  content: string | null,
): { ok: true; value: unknown } | { ok: false; error: string } {
  const text = (content ?? '').trim();
  if (!text) return { ok: false, error: 'the answer is empty; it must be a JSON value' };
  const fenced = /^```(?:json)?\s*([\s\S]*?)\s*```$/i.exec(text);
  let value: unknown;
  try {
    value = JSON.parse(fenced ? fenced[1] : text);
  } catch (err) {
    return { ok: false, error: `the answer is not JSON (${(err as Error).message})` };
  }
  const checked = schema.zod.safeParse(value);
  if (checked.success) return { ok: true, value: checked.data };
  const problems = checked.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(the value)'}: ${i.message}`);
  return { ok: false, error: `the JSON does not match the schema: ${problems.join('; ')}` };
}
