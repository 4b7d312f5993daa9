import { createAnthropic } from '@ai-sdk/anthropic';
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';
import { sendMessage } from '../../src/client/conversations';
import { streamEvents } from '../../src/client/event-stream';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { defineAgent } from '../../src/agents/define-agent';
import type { AgentEvent } from '../../src/core/events/agent-events';
import type { ModelConfig, NamedModels } from '../../src/models/model-config';
import { add, sqrt } from '../../scripts/demo-agents';
import { answer, call, startModel, startScriptedModel, toolResults } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/**
 * Every provider through the durable path: the same conversation on each adapter, in real
 * workflows. What the adapter contract (test/contract) checks call by call must hold across
 * activities, turns and the workflow's memory: parallel tool calls, reasoning sent back as the
 * provider wrote it in the next turn, text streamed to subscribers, usage counted and priced per
 * model. Provider-specific wire details are unit-tested beside each adapter's format.
 */
const temporal = useTestTemporal();

interface Provider {
  name: string;
  /** The worker's model settings for a scripted server at `baseURL`. */
  model: (baseURL: string) => Partial<ModelConfig>;
  models?: (baseURL: string) => NamedModels;
  /** The name runs give the model (usage is counted under it). */
  modelName: string;
  reasoning: boolean;
}

const anthropicAt = (baseURL: string) => ({ apiKey: 'test-key', baseURL: baseURL.replace(/\/v1$/, '') });
const PRICE = { input: 1, cachedInput: 0.1, output: 2 };

const PROVIDERS: Provider[] = [
  {
    name: 'OpenAI Chat Completions',
    model: () => ({ model: 'gpt-test', prices: { 'gpt-test': PRICE } }),
    modelName: 'gpt-test',
    reasoning: false,
  },
  {
    name: 'OpenAI Responses API',
    model: () => ({ model: 'openai-responses:gpt-test', prices: { 'gpt-test': PRICE } }),
    modelName: 'openai-responses:gpt-test',
    reasoning: true,
  },
  {
    name: 'Anthropic Messages API',
    model: (url) => ({ model: 'anthropic:claude-test', anthropic: anthropicAt(url), prices: { 'claude-test': PRICE } }),
    modelName: 'anthropic:claude-test',
    reasoning: true,
  },
  {
    name: 'AI SDK (@ai-sdk/anthropic)',
    model: () => ({ model: 'smart', prices: { 'claude-test': PRICE } }),
    models: (url) => ({ smart: createAnthropic({ baseURL: url, apiKey: 'test-key' })('claude-test') }),
    modelName: 'smart',
    reasoning: true,
  },
];

describe.each(PROVIDERS)('$name, through the workflow', (provider) => {
  it('runs a conversation: parallel tool calls, reasoning sent back next turn, text streamed, usage priced', async () => {
    const text = 'The sum is 5 and the root is 4.';
    const model = await startModel((req) => {
      const turn = req.messages.filter((m) => m.role === 'user').length;
      const results = toolResults(req);
      if (turn === 1 && results.length === 0)
        return {
          ...call(['add', { a: 2, b: 3 }, 'call_1'], ['sqrt', { x: 16 }, 'call_2']),
          ...(provider.reasoning ? { reasoning: [{ text: 'Two tools at once.', signature: 'sig-kept-1' }] } : {}),
          usage: { promptTokens: 50, completionTokens: 10 },
        };
      if (turn === 1) return { ...answer(text), chunks: text.split(/(?<= )/), chunkDelayMs: 20 };
      return answer('You are welcome.');
    });
    const { worker, taskQueue } = await createTestWorker(temporal(), {
      baseURL: model.baseURL,
      model: provider.model(model.baseURL),
      ...(provider.models ? { models: provider.models(model.baseURL) } : {}),
      agents: [defineAgent({ name: 'mathematician', instructions: 'Use the tools.', tools: [add, sqrt] })],
    });
    const id = `providers-${provider.modelName.replace(/\W/g, '-')}-${Date.now()}`;
    const events: AgentEvent[] = [];
    const [first, second] = await worker.runUntil(async () => {
      const start = { taskQueue, options: { agent: 'mathematician' } };
      const first = await sendMessage(temporal().client, id, { message: 'Add 2 and 3; root of 16?' }, start);
      for await (const e of streamEvents(temporal().client, id, { after: -1 })) {
        events.push(e);
        if (e.type === 'turn_completed') break;
      }
      const second = await sendMessage(temporal().client, id, { message: 'Thanks!' }, start);
      return [first, second];
    });
    expect(first).toMatchObject({ status: 'completed', content: text, iterations: 2 });
    expect(first.toolExecutions.map((e) => [e.name, e.result])).toEqual([
      ['add', '5'],
      ['sqrt', '4'],
    ]);
    expect(second).toMatchObject({ status: 'completed', content: 'You are welcome.' });
    // Streamed while the model wrote, in more than one piece.
    const deltas = events.filter((e) => e.type === 'text_delta').map((e) => (e as { delta: string }).delta);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(text);
    // Counted and priced under the name runs give the model.
    expect(first.usage.costUsd).toBeGreaterThan(0);
    expect(Object.keys(first.usage.byModel ?? {})).toEqual([provider.modelName]);
    // The next turn's request carries the reasoning as the provider wrote it.
    if (provider.reasoning) expect(JSON.stringify(model.requests.at(-1)!.raw)).toContain('sig-kept-1');
    // Its readable part is told to subscribers, once, for the call that gave it.
    expect(events.filter((e) => e.type === 'reasoning')).toEqual(
      provider.reasoning ? [expect.objectContaining({ call: 1, text: 'Two tools at once.' })] : [],
    );
  });
});

it('lets an agent name a model the worker defines as a provider-prefixed name', async () => {
  const llm = await startScriptedModel([answer('Hello from Claude.')]);
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: llm.baseURL,
    model: { anthropic: anthropicAt(llm.baseURL) },
    models: { smart: 'anthropic:claude-test' },
    agents: [defineAgent({ name: 'greeter', instructions: 'Greet.', tools: [], model: 'smart' })],
  });
  const outcome = await worker.runUntil(async () =>
    runOutcome(await startAgentRun(temporal().client, { agent: 'greeter', message: 'Hi' }, { taskQueue })),
  );
  expect(outcome).toMatchObject({ status: 'completed', content: 'Hello from Claude.' });
  expect(llm.requests[0]).toMatchObject({ wire: 'anthropic', model: 'claude-test' });
});

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

it('runs an agent on an AI SDK language model of the v4 specification: reasoning with its provider metadata, usage', async () => {
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
