import { freePort } from '../../src/connection/dev-server';
import { z } from 'zod';
import { createTestEnvironment, scriptedModel, type TestEnvironment } from '../../src/testing';
import { defineAgent } from '../../src/agents/define-agent';
import { defineTool } from '../../src/tools/define-tool';

/**
 * The testing kit as a user's test uses it: `createTestEnvironment` starts its own dev server (the
 * Temporal CLI the embedded default finds) and a worker; `scriptedModel` answers every adapter.
 */
const lookups: string[] = [];
const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Looks an order up',
  parameters: z.object({ id: z.string() }),
  execute: ({ id }) => {
    lookups.push(id);
    return { id, status: 'shipped' };
  },
});
const support = defineAgent({ name: 'support', instructions: 'You help with orders.', tools: [lookupOrder] });

describe('a test environment of its own', () => {
  const model = scriptedModel([
    {
      toolCalls: [{ name: 'lookup_order', arguments: { id: 'A-1' } }],
      usage: { promptTokens: 100, completionTokens: 7 },
    },
    (request) => ({ content: `It is ${JSON.parse(String(request.messages.at(-1)?.content)).status}.` }),
  ]);
  let env: TestEnvironment;
  beforeAll(async () => {
    env = await createTestEnvironment({ agents: [support], model });
  }, 60_000);
  afterAll(async () => env?.close());

  it('runs an agent with its custom tool against the scripted model, recording the requests', async () => {
    const outcome = await env.run({ agent: 'support', message: 'Where is A-1?' });
    expect(outcome).toMatchObject({ status: 'completed', content: 'It is shipped.', iterations: 2 });
    expect(lookups).toContain('A-1');
    expect(outcome.usage.byModel?.scripted?.promptTokens).toBeGreaterThanOrEqual(100);
    expect(model.requests).toHaveLength(2);
    expect(model.requests[0].tools?.map((t) => t.function.name)).toEqual(['lookup_order']);
    expect(model.requests[0].messages[0]).toMatchObject({ role: 'system', content: 'You help with orders.' });
  });

  it('starts runs by handle too, in the same environment', async () => {
    const handle = await env.startRun({ agent: 'support', message: 'And A-1?' }, { workflowId: 'kit-second-run' });
    expect(handle.workflowId).toBe('kit-second-run');
    const { runOutcome } = await import('../../src/client/run-agent');
    expect(await runOutcome(handle)).toMatchObject({ status: 'completed', content: 'It is shipped.' });
    expect(lookups).toEqual(['A-1', 'A-1']);
  });
});

it('speaks the Anthropic wire format, runs conversations, and says when the script ran out', async () => {
  const model = scriptedModel([{ content: 'Hello from Claude.', delayMs: 50 }, { content: 'Still here.' }], {
    provider: 'anthropic',
    name: 'claude-test',
  });
  const env = await createTestEnvironment({ agents: [support], model });
  try {
    const first = await env.send('kit-conversation', 'Hi', { agent: 'support' });
    expect(first).toMatchObject({ status: 'completed', content: 'Hello from Claude.', turn: 1 });
    expect(model.requests[0].wire).toBe('anthropic');
    expect((await env.send('kit-conversation', 'Still there?')).content).toBe('Still here.');
    const out = await env.send('kit-conversation', 'And now?');
    expect(out.status).toBe('failed');
    expect(out.error).toMatch(/the scripted model has 2 steps and was asked for step 3: add a step, or a fallback/);
  } finally {
    await env.close();
  }
});

it('listens on the port it is given', async () => {
  const port = await freePort();
  const model = scriptedModel([{ content: 'hi' }], { port });
  await model.start();
  try {
    expect(model.config().baseURL).toBe(`http://127.0.0.1:${port}/v1`);
  } finally {
    await model.close();
  }
});
