import { z } from 'zod';
import { divergence, messagesBefore, rerunResult, startRerun } from '../../src/client/rerun';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import type { ChatMessage } from '../../src/core/messages/chat-message';
import type { ChatRequest } from '../../src/testing/chat-request';
import { defineAgent } from '../../src/agents/define-agent';
import { defineTool } from '../../src/tools/define-tool';
import { answer, call, lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/** Re-running recorded runs with a change: recorded tool outputs stand in for identical calls. */
const temporal = useTestTemporal();

let lookups = 0;
const lookup = defineTool({
  name: 'lookup_order',
  description: 'Looks an order up',
  parameters: z.object({ id: z.string() }),
  execute: ({ id }) => {
    lookups += 1;
    return `${id}: shipped (lookup ${lookups})`;
  },
});
const support = defineAgent({ name: 'support', instructions: 'You help.', tools: [lookup] });

function model(req: ChatRequest) {
  const last = req.messages[req.messages.length - 1];
  if (last.role === 'tool')
    return answer(req.model === 'smarter' ? `Your order is on its way (${last.content}).` : `Status: ${last.content}`);
  return call(['lookup_order', { id: /A-\d+/.exec(lastOf(req, 'user'))?.[0] ?? 'A-0' }]);
}

it('re-runs with another model: the recorded tool output answers the identical call, and the answer diverges', async () => {
  const m = await startModel(model);
  const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: m.baseURL, agents: [support] });
  const client = temporal().client;
  await worker.runUntil(async () => {
    const original = await runOutcome(
      await startAgentRun(client, { agent: 'support', message: 'Where is A-7?' }, { taskQueue }),
    );
    expect(original).toMatchObject({ status: 'completed', content: 'Status: A-7: shipped (lookup 1)' });
    expect(lookups).toBe(1);

    const rerun = await startRerun(client, original.workflowId, { taskQueue, model: 'smarter' });
    const { outcome, diverged } = await rerunResult(client, rerun);
    expect(outcome).toMatchObject({
      status: 'completed',
      content: 'Your order is on its way (A-7: shipped (lookup 1)).',
    });
    expect(lookups).toBe(1); // no side effects: the recorded output
    expect(diverged).toEqual({
      step: 2,
      recorded: 'Status: A-7: shipped (lookup 1)',
      rerun: 'Your order is on its way (A-7: shipped (lookup 1)).',
    });
    expect(outcome.workflowId).toMatch(new RegExp(`^${original.workflowId}-rerun-`));

    // Live tools run again; the same model gives the same steps (but a new tool output).
    const live = await rerunResult(
      client,
      await startRerun(client, original.workflowId, { taskQueue, liveTools: true }),
    );
    expect(lookups).toBe(2);
    expect(live.diverged).toMatchObject({ step: 2, rerun: 'Status: A-7: shipped (lookup 2)' });

    // From step 2: the recorded call and its output are kept; only the last model call runs again.
    const requests = m.requests.length;
    const late = await rerunResult(client, await startRerun(client, original.workflowId, { taskQueue, fromStep: 2 }));
    expect(m.requests.length - requests).toBe(1);
    expect(late).toMatchObject({ outcome: { status: 'completed' }, diverged: null });

    await expect(startRerun(client, original.workflowId, { taskQueue, fromStep: 5 })).rejects.toThrow(
      /--from-step must be between 1 and 2: the run made 2 model calls/,
    );
  });
});

it('re-runs a run whose input went to the payload store (a message of 84 KB)', async () => {
  const m = await startModel(model);
  const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: m.baseURL, agents: [support] });
  const client = temporal().client;
  const message = `Where is A-9? ${'The full order log follows. '.repeat(3000)}`;
  await worker.runUntil(async () => {
    const original = await runOutcome(await startAgentRun(client, { agent: 'support', message }, { taskQueue }));
    const started = (await client.workflow.getHandle(original.workflowId).fetchHistory()).events?.[0];
    // The history holds a claim, not the 84 KB message: the rerun must fetch it back.
    expect(JSON.stringify(started).length).toBeLessThan(20_000);
    const { outcome } = await rerunResult(client, await startRerun(client, original.workflowId, { taskQueue }));
    expect(outcome).toMatchObject({ status: 'completed', content: expect.stringContaining('A-9: shipped') });
    expect(lastOf(m.requests[m.requests.length - 1], 'user')).toBe(message);
  });
});

it('cuts a transcript before a model call and finds the first step that differs', () => {
  const messages: ChatMessage[] = [
    { role: 'user', content: 'q' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c', type: 'function', function: { name: 't', arguments: '{"b":1,"a":2}' } }],
    },
    { role: 'tool', tool_call_id: 'c', content: 'r' },
    { role: 'assistant', content: 'done' },
  ];
  expect(messagesBefore(messages, 1)).toEqual([messages[0]]);
  expect(messagesBefore(messages, 2)).toEqual(messages.slice(0, 3));
  const reordered: ChatMessage[] = [
    messages[0],
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'x', type: 'function', function: { name: 't', arguments: '{"a":2,"b":1}' } }],
    },
    messages[2],
    { role: 'assistant', content: 'done' },
  ];
  expect(divergence(messages, reordered, 1)).toBeNull();
  expect(divergence(messages, [...reordered.slice(0, 3), { role: 'assistant', content: 'other' }], 1)).toEqual({
    step: 2,
    recorded: 'done',
    rerun: 'other',
  });
  expect(divergence(messages, reordered.slice(0, 3), 1)).toEqual({
    step: 2,
    recorded: 'done',
    rerun: '(no such step: the re-run had ended)',
  });
});
