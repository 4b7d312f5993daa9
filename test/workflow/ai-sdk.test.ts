import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { defineAgent } from '../../src/agents/define-agent';
import { add } from '../../scripts/demo-agents';
import { answer, startScriptedModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/**
 * Named models: an AI SDK provider's language model (here one written to the `@ai-sdk/provider`
 * v4 specification, as provider packages are) and an alias for a provider-prefixed name, each
 * picked by an agent's `model`.
 */
const temporal = useTestTemporal();

/** A v4 language model answering from a script; it records the options of every call. */
function scriptedLanguageModel(replies: Array<(call: LanguageModelV4CallOptions) => LanguageModelV4StreamPart[]>) {
  const calls: LanguageModelV4CallOptions[] = [];
  const usage = {
    inputTokens: { total: 30, noCache: 10, cacheRead: 20, cacheWrite: undefined },
    outputTokens: { total: 8, text: 5, reasoning: 3 },
  };
  const parts = (options: LanguageModelV4CallOptions) => {
    calls.push(options);
    return [
      ...replies[calls.length - 1](options),
      { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage } as LanguageModelV4StreamPart,
    ];
  };
  const model: LanguageModelV4 = {
    specificationVersion: 'v4',
    provider: 'scripted.chat',
    modelId: 'scripted-1',
    supportedUrls: {},
    async doGenerate(options) {
      const all = parts(options);
      return {
        content: all.flatMap((p): LanguageModelV4Content[] =>
          p.type === 'text-delta' ? [{ type: 'text', text: p.delta }] : p.type === 'tool-call' ? [p] : [],
        ),
        finishReason: { unified: 'stop', raw: 'stop' },
        usage,
        warnings: [],
      };
    },
    async doStream(options) {
      const all = parts(options);
      return { stream: new ReadableStream({ start: (c) => (all.forEach((p) => c.enqueue(p)), c.close()) }) };
    },
  };
  return { model, calls };
}

it('runs an agent on an AI SDK language model: tools, streamed text, reasoning with its provider metadata, usage', async () => {
  const signed = { scripted: { signature: 'sig-from-provider' } };
  const { model, calls } = scriptedLanguageModel([
    () => [
      { type: 'reasoning-start', id: 'r1' },
      { type: 'reasoning-delta', id: 'r1', delta: 'Add them.' },
      { type: 'reasoning-end', id: 'r1', providerMetadata: signed },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: '{"a":2,"b":40}' },
    ],
    () => [
      { type: 'text-start', id: 't1' },
      { type: 'text-delta', id: 't1', delta: 'The sum ' },
      { type: 'text-delta', id: 't1', delta: 'is 42.' },
      { type: 'text-end', id: 't1' },
    ],
  ]);
  const llm = await startScriptedModel([answer('unused')]);
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: llm.baseURL,
    models: { fast: model },
    agents: [defineAgent({ name: 'adder', instructions: 'Add.', tools: [add], model: 'fast' })],
  });
  const outcome = await worker.runUntil(async () =>
    runOutcome(await startAgentRun(temporal().client, { agent: 'adder', message: 'Add 2 and 40' }, { taskQueue })),
  );
  expect(outcome).toMatchObject({ status: 'completed', content: 'The sum is 42.', iterations: 2 });
  expect(outcome.toolExecutions.map((e) => [e.name, e.result])).toEqual([['add', '42']]);
  expect(outcome.usage).toMatchObject({ promptTokens: 60, cachedPromptTokens: 40, reasoningTokens: 6 });
  expect(llm.requests).toHaveLength(0); // the OpenAI endpoint was never asked
  expect(calls[0].tools).toEqual([expect.objectContaining({ type: 'function', name: 'add' })]);
  expect(calls[0].prompt[0]).toEqual({ role: 'system', content: 'Add.' });
  // The second call: the reasoning with its provider metadata, the call, and its result.
  expect(calls[1].prompt.slice(2)).toEqual([
    {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Add them.', providerOptions: signed },
        { type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: { a: 2, b: 40 } },
      ],
    },
    {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'add', output: { type: 'text', value: '42' } }],
    },
  ]);
});

it('lets an agent name a model the worker defines as a provider-prefixed name', async () => {
  const llm = await startScriptedModel([answer('Hello from Claude.')]);
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: llm.baseURL,
    model: { anthropic: { apiKey: 'k', baseURL: llm.baseURL.replace(/\/v1$/, '') } },
    models: { smart: 'anthropic:claude-test' },
    agents: [defineAgent({ name: 'greeter', instructions: 'Greet.', tools: [], model: 'smart' })],
  });
  const outcome = await worker.runUntil(async () =>
    runOutcome(await startAgentRun(temporal().client, { agent: 'greeter', message: 'Hi' }, { taskQueue })),
  );
  expect(outcome).toMatchObject({ status: 'completed', content: 'Hello from Claude.' });
  expect(llm.requests[0]).toMatchObject({ wire: 'anthropic', model: 'claude-test' });
});
