import { z } from 'zod';
import { exampleToolRegistry } from '../../scripts/demo-agents';
import { defineTool, isStrictCompatible, parametersJsonSchema, ToolRegistry } from '../../src/tools';
import { toolContext } from '../helpers/test-tools';

describe('tool JSON schemas', () => {
  it('carries descriptions, optional params, nested objects, enums and arrays', () => {
    const schema = parametersJsonSchema(
      z.object({
        city: z.string().describe('City name'),
        unit: z.enum(['c', 'f']).optional(),
        days: z.array(z.number().int()),
        where: z.object({ lat: z.number(), lon: z.number() }),
      }),
    );
    expect(schema).toEqual({
      type: 'object',
      properties: {
        city: { type: 'string', description: 'City name' },
        unit: { type: 'string', enum: ['c', 'f'] },
        days: { type: 'array', items: { type: 'integer' } },
        where: {
          type: 'object',
          properties: { lat: { type: 'number' }, lon: { type: 'number' } },
          required: ['lat', 'lon'],
          additionalProperties: false,
        },
      },
      required: ['city', 'days', 'where'],
      additionalProperties: false,
    });
    expect(isStrictCompatible(schema)).toBe(false); // `unit` is optional
  });

  it('marks fully-required schemas strict in the OpenAI tool spec', () => {
    const [spec] = exampleToolRegistry().openAISpecs(['add']);
    expect(spec).toEqual({
      type: 'function',
      function: {
        name: 'add',
        description: 'Calculates the sum of two numbers',
        parameters: {
          type: 'object',
          properties: {
            a: { type: 'integer', description: 'First integer' },
            b: { type: 'integer', description: 'Second integer' },
          },
          required: ['a', 'b'],
          additionalProperties: false,
        },
        strict: true,
      },
    });
  });
});

describe('ToolRegistry', () => {
  const echo = defineTool({
    name: 'echo',
    description: 'Echoes',
    parameters: z.object({ s: z.string() }),
    execute: ({ s }) => s,
  });

  it('rejects duplicate names', () => {
    const registry = new ToolRegistry([echo]);
    expect(() => registry.register(echo)).toThrow('a tool named "echo" is already registered');
  });

  it('resolves scheduling info with defaults and per-tool settings', () => {
    const slow = defineTool({
      ...echo,
      name: 'slow',
      returnBehavior: 'immediate',
      timeout: '2m',
      retry: { maximumAttempts: 5, initialInterval: '3s' },
    });
    const registry = new ToolRegistry([echo, slow]);
    expect(registry.info('echo')).toEqual({
      name: 'echo',
      immediate: false,
      timeoutMs: 60_000,
      retry: { maximumAttempts: 3, initialIntervalMs: 1000 },
    });
    expect(registry.info('echo', { immediate: true }).immediate).toBe(true);
    expect(registry.info('echo', { needsApproval: true }).needsApproval).toBe(true);
    expect(registry.info('slow')).toEqual({
      name: 'slow',
      immediate: true,
      timeoutMs: 120_000,
      retry: { maximumAttempts: 5, initialIntervalMs: 3000 },
    });
    expect(registry.unknown(['echo', 'nope'])).toEqual(['nope']);
  });

  it('checks definitions up front', () => {
    expect(() => defineTool({ ...echo, name: 'has space' })).toThrow(/invalid tool name/);
    expect(() => defineTool({ ...echo, description: ' ' })).toThrow(/needs a description/);
    expect(() => defineTool({ ...echo, parameters: z.string() as never })).toThrow(/must be a zod object/);
  });
});

describe('built-in tools', () => {
  const ctx = toolContext({
    askPerson: () => {
      throw new Error('no person here');
    },
  });

  const run = (name: string, args: unknown) =>
    exampleToolRegistry()
      .get(name)!
      .execute(args as never, ctx);

  it('match the documents', async () => {
    expect(await run('stringLength', { s: 'hello' })).toBe(5);
    expect(await run('add', { a: 5, b: 5 })).toBe(10);
    expect(await run('sqrt', { x: 10 })).toBeCloseTo(3.1623, 4);
    expect(await run('sum', { a: 1.5, b: 2 })).toBe(3.5);
    expect(await run('squareRoot', { x: 475695037565 })).toBeCloseTo(689706.486532, 5);
    expect(await run('search_weather', { city: 'Beijing' })).toBe(30);
  });

  it('throw on a negative square root instead of returning NaN', async () => {
    await expect(async () => run('sqrt', { x: -1 })).rejects.toThrow(/negative/);
  });
});
