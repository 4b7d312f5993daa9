import type { JsonSchema } from '../models/json-schema';

/**
 * Checks tool arguments against the common core of JSON Schema: `type`, `required`, `properties`,
 * `additionalProperties: false`, `enum` and `items`, recursively. It is not a full validator; it
 * catches the mistakes LLMs make (a missing field, a string for a number) and says where, so the
 * LLM can correct itself. Returns one line per problem.
 */
export function checkJsonArguments(schema: JsonSchema, value: unknown, path = ''): string[] {
  const where = path || '(arguments)';
  const types = schema.type === undefined ? [] : ([] as unknown[]).concat(schema.type);
  if (types.length > 0 && !types.some((t) => hasType(value, t)))
    return [`${where}: expected ${types.join(' or ')}, got ${describe(value)}`];
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    return [`${where}: must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`];
  }
  const problems: string[] = [];
  if (isObject(value)) {
    const properties = (isObject(schema.properties) ? schema.properties : {}) as Record<string, JsonSchema>;
    for (const name of Array.isArray(schema.required) ? (schema.required as string[]) : []) {
      if (value[name] === undefined) problems.push(`${join(path, name)}: required`);
    }
    for (const [name, v] of Object.entries(value)) {
      if (isObject(properties[name])) problems.push(...checkJsonArguments(properties[name], v, join(path, name)));
      else if (schema.additionalProperties === false) problems.push(`${join(path, name)}: unknown property`);
    }
  }
  if (Array.isArray(value) && isObject(schema.items))
    value.forEach((item, i) => problems.push(...checkJsonArguments(schema.items as JsonSchema, item, `${path}[${i}]`)));
  return problems;
}

function hasType(value: unknown, type: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    case 'null':
      return value === null;
    default:
      return true; // a type we do not check
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'number' && Number.isInteger(v) ? 'integer' : typeof v;
}

function join(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}
