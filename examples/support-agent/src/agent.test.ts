// The support agent tested as a user tests theirs: `npm test` (node --test), with no model
// server and no Temporal server of their own. createTestEnvironment starts a dev server and a
// worker with the agent; scriptedModel plays the LLM and records what it was asked.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestEnvironment, scriptedModel, type TestEnvironment } from 'durable-agents/testing';
import { supportAgent, type SupportAnswer } from './agent';
import type { z } from 'zod';

const model = scriptedModel([
  // First call: look the order up with the custom tool.
  { toolCalls: [{ name: 'lookup_order', arguments: { orderNumber: 'A-1001' } }] },
  // Second call: answer from the tool's result, as JSON under the agent's output schema.
  (request) => {
    const order = JSON.parse(String(request.messages.at(-1)?.content));
    return {
      content: JSON.stringify({
        orderNumber: order.orderNumber,
        status: order.status,
        reply: `Your order ${order.orderNumber} has ${order.status}.`,
      }),
    };
  },
]);

let env: TestEnvironment;
before(async () => {
  env = await createTestEnvironment({ agents: [supportAgent], model });
});
after(async () => {
  await env?.close();
});

test('the support agent looks the order up and answers with structured output', async () => {
  const outcome = await env.run<z.infer<typeof SupportAnswer>>({ agent: 'support', message: 'Where is A-1001?' });
  assert.equal(outcome.status, 'completed');
  assert.deepEqual(outcome.output, {
    orderNumber: 'A-1001',
    status: 'shipped',
    reply: 'Your order A-1001 has shipped.',
  });
  // The custom tool ran in the worker, with the arguments the model gave.
  assert.equal(outcome.toolExecutions[0].name, 'lookup_order');
  assert.match(outcome.toolExecutions[0].result, /"eta":"2026-12-03"/);
  // What the model was offered and told.
  assert.deepEqual(
    model.requests[0].tools?.map((t) => t.function.name),
    ['lookup_order'],
  );
  assert.match(String(model.requests[0].messages[0].content), /friendly support agent/);
});

test('a lookup of an unknown order goes back to the model as an error it can act on', async () => {
  const failing = scriptedModel([
    { toolCalls: [{ name: 'lookup_order', arguments: { orderNumber: 'Z-9' } }] },
    (request) => ({ content: `Sorry: ${request.messages.at(-1)?.content}` }),
  ]);
  const other = await createTestEnvironment({ agents: [supportAgent], model: failing });
  try {
    const outcome = await other.run({ message: 'Where is Z-9?', tools: ['lookup_order'] });
    assert.equal(outcome.status, 'completed');
    assert.equal(outcome.toolExecutions[0].error, true);
    assert.match(outcome.content ?? '', /no order Z-9/);
  } finally {
    await other.close();
  }
});
