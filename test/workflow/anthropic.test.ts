import { z } from 'zod';
import { streamEvents } from '../../src/client/event-stream';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { defineAgent } from '../../src/agents/define-agent';
import { add, sqrt } from '../../scripts/demo-agents';
import { answer, call, startScriptedModel, toolResults } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/**
 * Claude through Anthropic's Messages API: the real `@anthropic-ai/sdk` against the scripted
 * server's `/v1/messages`, in real workflows. What must survive a durable run: thinking blocks
 * sent back unchanged with their signatures, tool results in the next user message, prompt-cache
 * breakpoints, cached tokens in `usage`, structured output, and failures classified.
 */
const temporal = useTestTemporal();

type Raw = {
  system?: Array<{ text: string; cache_control?: unknown }>;
  messages: Array<{ role: string; content: Array<Record<string, unknown>> }>;
  tools?: Array<{ name: string; cache_control?: unknown }>;
  thinking?: unknown;
  temperature?: number;
  max_tokens: number;
  stream?: boolean;
  output_config?: { format?: { type: string; schema: unknown } };
};

/** A worker whose default model is Claude, at the scripted server. */
async function claudeWorker(baseURL: string, agents: Parameters<typeof defineAgent>[0][] = []) {
  return createTestWorker(temporal(), {
    baseURL,
    agents: agents.map((a) => defineAgent(a)),
    model: {
      model: 'anthropic:claude-test',
      anthropic: { apiKey: 'test-key', baseURL: baseURL.replace(/\/v1$/, '') },
      prices: { 'claude-test': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 } },
    },
  });
}

it('runs a tool-calling agent with extended thinking: the thinking block goes back signed, with the tool result, and cached tokens are counted', async () => {
  const model = await startScriptedModel([
    {
      ...call(['add', { a: 2, b: 3 }, 'toolu_1'], ['sqrt', { x: 16 }, 'toolu_2']),
      reasoning: [
        { text: 'Two tools at once.', signature: 'c2lnbmF0dXJlLW9mLWNsYXVkZQ==' },
        { redacted: 'ZW5jcnlwdGVk' },
      ],
      usage: { cacheWriteTokens: 40, reasoningTokens: 12 },
    },
    (req) => ({
      ...answer(`2 + 3 = ${toolResults(req)[0]}, and the root of 16 is ${toolResults(req)[1]}.`),
      usage: { cachedPromptTokens: 40 },
    }),
  ]);
  const { worker, taskQueue } = await claudeWorker(model.baseURL, [
    {
      name: 'mathematician',
      instructions: 'You do arithmetic with the tools.',
      tools: [add, sqrt],
      thinking: { budgetTokens: 2048 },
    },
  ]);
  const outcome = await worker.runUntil(async () =>
    runOutcome(
      await startAgentRun(
        temporal().client,
        { agent: 'mathematician', message: 'Add 2 and 3; root of 16?' },
        { taskQueue },
      ),
    ),
  );
  expect(outcome).toMatchObject({ status: 'completed', content: '2 + 3 = 5, and the root of 16 is 4.', iterations: 2 });
  expect(outcome.toolExecutions.map((e) => [e.name, e.result])).toEqual([
    ['add', '5'],
    ['sqrt', '4'],
  ]);
  expect(outcome.usage).toMatchObject({ cachedPromptTokens: 40, cacheWriteTokens: 40, reasoningTokens: 12 });
  // Priced by the worker's table, and counted under the model that answered.
  expect(outcome.usage.costUsd).toBeGreaterThan(0);
  expect(outcome.usage.byModel).toEqual({
    'anthropic:claude-test': { ...outcome.usage, byModel: undefined },
  });

  const [first, second] = model.requests.map((r) => r.raw as Raw);
  expect(first).toMatchObject({
    model: 'claude-test',
    thinking: { type: 'enabled', budget_tokens: 2048 },
    stream: true,
  });
  expect(first.temperature).toBeUndefined(); // today's Messages API takes no sampling settings
  expect(first.max_tokens).toBeGreaterThan(2048);
  expect(first.system).toEqual([
    { type: 'text', text: 'You do arithmetic with the tools.', cache_control: { type: 'ephemeral' } },
  ]);
  expect(first.tools?.map((t) => [t.name, t.cache_control])).toEqual([
    ['add', undefined],
    ['sqrt', { type: 'ephemeral' }],
  ]);
  // The second request: the assistant's blocks as Claude wrote them, signature and redacted data
  // unchanged, then both results in one user message, the last block marked for the cache.
  expect(second.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
  expect(second.messages[1].content).toEqual([
    { type: 'thinking', thinking: 'Two tools at once.', signature: 'c2lnbmF0dXJlLW9mLWNsYXVkZQ==' },
    { type: 'redacted_thinking', data: 'ZW5jcnlwdGVk' },
    { type: 'tool_use', id: 'toolu_1', name: 'add', input: { a: 2, b: 3 } },
    { type: 'tool_use', id: 'toolu_2', name: 'sqrt', input: { x: 16 } },
  ]);
  expect(second.messages[2].content).toEqual([
    { type: 'tool_result', tool_use_id: 'toolu_1', content: '5' },
    { type: 'tool_result', tool_use_id: 'toolu_2', content: '4', cache_control: { type: 'ephemeral' } },
  ]);
});

it('asks for structured output with output_config.format and returns it parsed', async () => {
  const model = await startScriptedModel([answer('{"city":"Paris","celsius":18}')]);
  const { worker, taskQueue } = await claudeWorker(model.baseURL);
  const outcome = await worker.runUntil(async () =>
    runOutcome(
      await startAgentRun(
        temporal().client,
        { message: 'Weather in Paris?', tools: [], output: z.object({ city: z.string(), celsius: z.number() }) },
        { taskQueue },
      ),
    ),
  );
  expect(outcome).toMatchObject({ status: 'completed', output: { city: 'Paris', celsius: 18 } });
  const raw = model.requests[0].raw as Raw;
  expect(raw.output_config?.format).toMatchObject({
    type: 'json_schema',
    schema: expect.objectContaining({ type: 'object' }),
  });
});

it('retries an overloaded Claude (529) and fails at once on a bad key (401), naming ANTHROPIC_API_KEY', async () => {
  const overloaded = {
    http: { status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } },
  };
  const model = await startScriptedModel([answer('Fine now.')], { failFirst: { 0: [overloaded] } });
  const { worker, taskQueue } = await claudeWorker(model.baseURL);
  const ok = await worker.runUntil(async () =>
    runOutcome(await startAgentRun(temporal().client, { message: 'Hello', tools: [] }, { taskQueue })),
  );
  expect(ok).toMatchObject({ status: 'completed', content: 'Fine now.' });
  expect(model.attempts[0]).toBe(2);

  const unauthorized = {
    http: {
      status: 401,
      body: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } },
    },
  };
  const denied = await startScriptedModel([unauthorized]);
  const second = await claudeWorker(denied.baseURL);
  const failed = await second.worker.runUntil(async () =>
    runOutcome(
      await startAgentRun(temporal().client, { message: 'Hello', tools: [] }, { taskQueue: second.taskQueue }),
    ),
  );
  expect(failed).toMatchObject({ status: 'failed', errorType: 'ModelCall.Auth' });
  expect(failed.error).toMatch(/rejected the API key .*check ANTHROPIC_API_KEY/);
  expect(denied.requests).toHaveLength(1);
});

it('streams Claude’s text to subscribers as it is written', async () => {
  const text = Array.from({ length: 12 }, (_, i) => `word${i}`).join(' ');
  const model = await startScriptedModel([{ ...answer(text), chunkDelayMs: 40 }]);
  const { worker, taskQueue } = await claudeWorker(model.baseURL);
  const deltas = await worker.runUntil(async () => {
    const handle = await startAgentRun(temporal().client, { message: 'Talk', tools: [] }, { taskQueue });
    await runOutcome(handle);
    const seen: string[] = [];
    for await (const e of streamEvents(temporal().client, handle.workflowId, { after: -1 }))
      if (e.type === 'text_delta') seen.push(e.delta);
    return seen;
  });
  // Pieces arrived while the model wrote (batches), not only the whole answer at the end.
  expect(deltas.length).toBeGreaterThan(1);
  expect(deltas.join('')).toBe(text);
});
