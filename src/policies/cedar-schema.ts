import type { JsonSchema } from '../models/json-schema';

/**
 * The Cedar schema policies are checked against (docs/policies.md), built from the worker's own
 * tools, and the conversion of a request's JSON into Cedar's. Hand-written: the mapping from a
 * tool's JSON Schema to Cedar types is ours to define (`integer` → `Long`, `number` → `decimal`,
 * since Cedar has no floating point), and no package does it.
 */

/** A Cedar type in the JSON schema format (what the engine reads). */
export type CedarType =
  | { type: 'String' | 'Long' | 'Boolean'; required?: boolean }
  | { type: 'Extension'; name: 'decimal'; required?: boolean }
  | { type: 'Set'; element: CedarType; required?: boolean }
  | { type: 'Record'; attributes: Record<string, CedarType>; required?: boolean };

/** A tool as the schema needs it: its name and its parameters' JSON Schema. */
export interface SchemaTool {
  name: string;
  parameters: JsonSchema;
}

/** The schema, and what it could not type (an argument two tools give different types): said at start. */
export interface PolicySchema {
  json: Record<string, unknown>;
  /** The type of each argument name, as `context.args` holds it. */
  args: Record<string, CedarType>;
  warnings: string[];
}

/**
 * The schema of `Agent` (tenant, user), `Tool` and `Action::"callTool"`, whose context is the
 * call's arguments (every argument name any tool has, optional, typed from the tools' JSON
 * Schemas) and the run so far (each tool's calls and denials by name, tokens, cost, step).
 */
export function policySchema(tools: readonly SchemaTool[]): PolicySchema {
  const args: Record<string, CedarType> = {};
  const from: Record<string, string> = {};
  const conflicts = new Set<string>();
  const warnings: string[] = [];
  for (const tool of tools) {
    const properties = (tool.parameters as { properties?: Record<string, JsonSchema> }).properties ?? {};
    for (const [name, schema] of Object.entries(properties)) {
      const type = cedarType(schema);
      if (!type || conflicts.has(name)) continue;
      const seen = args[name];
      // Whole numbers in one tool, any number in another: a decimal in both (Cedar compares them then).
      if (seen && isNumeric(seen) && isNumeric(type)) {
        if (seen.type !== type.type) args[name] = optional({ type: 'Extension', name: 'decimal' });
        continue;
      }
      if (seen && JSON.stringify(seen) !== JSON.stringify(optional(type))) {
        conflicts.add(name);
        delete args[name];
        warnings.push(
          `the argument "${name}" has different types in the tools ${from[name]} and ${tool.name}: policies cannot name context.args.${name}`,
        );
        continue;
      }
      args[name] = optional(type);
      from[name] ??= tool.name;
    }
  }
  const counts = Object.fromEntries(tools.map((t) => [t.name, optional({ type: 'Long' })]));
  const who = { tenant: optional({ type: 'String' }), user: optional({ type: 'String' }) };
  // Every action reads the same context: the call's arguments and the run so far.
  const context = {
    type: 'Record',
    attributes: {
      args: { type: 'Record', attributes: args },
      run: {
        type: 'Record',
        attributes: {
          toolCalls: { type: 'Record', attributes: counts },
          denied: { type: 'Record', attributes: counts },
          tokens: { type: 'Long' },
          costUsd: optional({ type: 'Extension', name: 'decimal' }),
          step: { type: 'Long' },
        },
      },
      ...who,
    },
  };
  const appliesTo = (resourceTypes: string[]) => ({
    appliesTo: { principalTypes: ['Agent'], resourceTypes, context },
  });
  const json = {
    '': {
      entityTypes: { Agent: { shape: { type: 'Record', attributes: who } }, Tool: {}, Host: {} },
      actions: {
        callTool: appliesTo(['Tool']),
        runCommand: appliesTo(['Tool']),
        delegate: appliesTo(['Agent']),
        grantNetwork: appliesTo(['Host']),
      },
    },
  };
  return { json, args, warnings };
}

/** The Cedar type of a JSON Schema, or undefined when Cedar has none for it (a union, `null`, an open object). */
export function cedarType(schema: JsonSchema): CedarType | undefined {
  const s = schema as { type?: unknown; items?: JsonSchema; properties?: Record<string, JsonSchema>; enum?: unknown[] };
  const type = Array.isArray(s.type) ? undefined : s.type;
  if (type === 'string' || (type === undefined && s.enum?.every((v) => typeof v === 'string')))
    return { type: 'String' };
  if (type === 'boolean') return { type: 'Boolean' };
  if (type === 'integer') return { type: 'Long' };
  if (type === 'number') return { type: 'Extension', name: 'decimal' };
  if (type === 'array' && s.items) {
    const element = cedarType(s.items);
    return element ? { type: 'Set', element } : undefined;
  }
  if (type === 'object' && s.properties) {
    const attributes: Record<string, CedarType> = {};
    for (const [name, p] of Object.entries(s.properties)) {
      const t = cedarType(p);
      if (t) attributes[name] = optional(t);
    }
    return { type: 'Record', attributes };
  }
  return undefined;
}

function isNumeric(type: CedarType): boolean {
  return type.type === 'Long' || type.type === 'Extension';
}

function optional<T extends CedarType>(type: T): T {
  return { ...type, required: false };
}

/**
 * A JSON value as Cedar's JSON reads it, given the type the schema expects (undefined: any):
 * numbers that are not whole, or that the schema types `decimal`, become decimals (four places,
 * Cedar's precision); `null` is left out, as Cedar has none.
 */
export function cedarValue(value: unknown, type?: CedarType): unknown {
  if (typeof value === 'number') {
    const decimal = (type?.type === 'Extension' || !Number.isInteger(value)) && Number.isFinite(value);
    return decimal ? { __extn: { fn: 'decimal', arg: value.toFixed(4) } } : value;
  }
  if (Array.isArray(value))
    return value.filter((v) => v !== null).map((v) => cedarValue(v, type?.type === 'Set' ? type.element : undefined));
  if (value && typeof value === 'object') {
    const attributes = type?.type === 'Record' ? type.attributes : {};
    return cedarRecord(value as Record<string, unknown>, attributes);
  }
  return value;
}

/** A record's entries as Cedar reads them (see {@link cedarValue}), `null`s left out. */
export function cedarRecord(
  record: Record<string, unknown>,
  types: Record<string, CedarType>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) if (v !== null && v !== undefined) out[k] = cedarValue(v, types[k]);
  return out;
}
