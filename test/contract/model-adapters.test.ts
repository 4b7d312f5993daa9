import { createAnthropic } from '@ai-sdk/anthropic';
import type { ChatMessage } from '../../src/core/messages/chat-message';
import type { ModelReply } from '../../src/core/messages/model-reply';
import type { ChatModel, ToolSpec } from '../../src/models/chat-model';
import { createChatModel } from '../../src/models/create-chat-model';
import type { ModelConfig } from '../../src/models/model-config';
import { isModelCallError } from '../../src/models/model-error';
import {
  startOpenAICompatibleServer,
  type ChatAnswer,
  type ChatRequest,
  type OpenAICompatibleServer,
} from '../../src/testing/openai-compatible-server';

/**
 * One contract, every adapter: the same cases run against each provider's adapter through its
 * real SDK (`openai` for Chat Completions and the Responses API, `@anthropic-ai/sdk`, and the AI
 * SDK's own `@ai-sdk/anthropic` behind the AI SDK adapter), talking HTTP to a scripted server that
 * speaks each wire format. What one adapter does, all do, in the seam's terms: text, tool calls
 * (parallel too), tool results matched to their calls, reasoning sent back as it came, images,
 * structured output, streamed text, usage, and failures as `ModelCallError`s.
 */

interface Adapter {
  name: string;
  /** The worker's model settings for a scripted server at `baseURL` (`.../v1`). */
  config: (baseURL: string) => ModelConfig;
  /** Whether the provider keeps its reasoning, to be sent back with the rest of the conversation. */
  reasoning: boolean;
  /** What a rejected key's message tells the user to fix. */
  key: RegExp;
}

const base = (baseURL: string, model: string): ModelConfig => ({
  baseURL,
  apiKey: 'contract-key',
  model,
  requestTimeoutMs: 10_000,
  configured: true,
  anthropic: { apiKey: 'contract-key', baseURL: baseURL.replace(/\/v1$/, '') },
});

const ADAPTERS: Adapter[] = [
  {
    name: 'OpenAI Chat Completions',
    config: (url) => base(url, 'gpt-contract'),
    reasoning: false,
    key: /check OPENAI_API_KEY/,
  },
  {
    name: 'OpenAI Responses API',
    config: (url) => base(url, 'openai-responses:gpt-contract'),
    reasoning: true,
    key: /check OPENAI_API_KEY/,
  },
  {
    name: 'Anthropic Messages API',
    config: (url) => base(url, 'anthropic:claude-contract'),
    reasoning: true,
    key: /check ANTHROPIC_API_KEY/,
  },
  {
    name: 'AI SDK (@ai-sdk/anthropic, specification v3)',
    config: (url) => ({
      ...base(url, 'smart'),
      models: { smart: createAnthropic({ baseURL: url, apiKey: 'contract-key' })('claude-contract') },
    }),
    reasoning: true,
    key: /check the API key of the anthropic\.messages provider/,
  },
];

const ADD: ToolSpec = {
  name: 'add',
  description: 'Adds two numbers',
  parameters: {
    type: 'object',
    properties: { a: { type: 'number' }, b: { type: 'number' } },
    required: ['a', 'b'],
    additionalProperties: false,
  },
};
const ONE_PIXEL =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const user = (content: string): ChatMessage => ({ role: 'user', content });

describe.each(ADAPTERS)('the $name adapter', (adapter) => {
  let server: OpenAICompatibleServer;
  let answers: ChatAnswer[];
  let model: ChatModel;
  beforeEach(async () => {
    answers = [];
    server = await startOpenAICompatibleServer(() => answers.shift() ?? { content: '(no answer scripted)' });
    model = createChatModel(adapter.config(server.baseURL));
  });
  afterEach(() => server.close());
  const last = (): ChatRequest => server.requests.at(-1)!;

  it('answers with text, its finish reason and usage', async () => {
    answers.push({ content: 'Hello there.', usage: { promptTokens: 12, completionTokens: 3, cachedPromptTokens: 4 } });
    const reply = await model.generate([user('Say hello.')]);
    expect(reply).toMatchObject({ content: 'Hello there.', toolCalls: [] });
    expect(reply.usage).toMatchObject({ promptTokens: 12, completionTokens: 3, totalTokens: 15 });
    expect(reply.usage.cachedPromptTokens).toBe(4);
    expect(last().messages.at(-1)).toMatchObject({ role: 'user', content: 'Say hello.' });
  });

  it('offers tools with their schema and reads a call with its arguments', async () => {
    answers.push({ toolCalls: [{ id: 'call_1', name: 'add', arguments: { a: 1, b: 2 } }] });
    const reply = await model.generate([user('Add 1 and 2.')], { tools: [ADD] });
    expect(reply.toolCalls).toHaveLength(1);
    expect(reply.toolCalls[0].function.name).toBe('add');
    expect(JSON.parse(reply.toolCalls[0].function.arguments)).toEqual({ a: 1, b: 2 });
    expect(reply.toolCalls[0].id).toBeTruthy();
    const offered = last().tools?.[0]?.function;
    expect(offered?.name).toBe('add');
    expect(offered?.parameters).toMatchObject({ properties: { a: { type: 'number' }, b: { type: 'number' } } });
  });

  it('reads calls in parallel, each with its own id, and sends their results back matched to them', async () => {
    answers.push({
      toolCalls: [
        { id: 'call_a', name: 'add', arguments: { a: 1, b: 2 } },
        { id: 'call_b', name: 'add', arguments: { a: 3, b: 4 } },
      ],
    });
    const first = await model.generate([user('Two sums.')], { tools: [ADD] });
    expect(first.toolCalls.map((c) => JSON.parse(c.function.arguments))).toEqual([
      { a: 1, b: 2 },
      { a: 3, b: 4 },
    ]);
    const [a, b] = first.toolCalls;
    expect(a.id).not.toBe(b.id);
    answers.push({ content: '3 and 7' });
    const second = await model.generate(
      [
        user('Two sums.'),
        assistantOf(first),
        { role: 'tool', tool_call_id: a.id, content: '3' },
        { role: 'tool', tool_call_id: b.id, content: '7' },
      ],
      { tools: [ADD] },
    );
    expect(second.content).toBe('3 and 7');
    const results = last().messages.filter((m) => m.role === 'tool');
    expect(results.map((m) => [m.tool_call_id, m.content])).toEqual([
      [a.id, '3'],
      [b.id, '7'],
    ]);
  });

  (adapter.reasoning ? it : it.skip)('sends reasoning back with the call it came with', async () => {
    answers.push({
      reasoning: [{ text: 'I should add.', signature: 'sig-contract-1' }],
      toolCalls: [{ id: 'call_r', name: 'add', arguments: { a: 2, b: 2 } }],
    });
    const first = await model.generate([user('Think, then add.')], { tools: [ADD] });
    expect(first.reasoning?.length).toBeGreaterThan(0);
    answers.push({ content: 'four' });
    await model.generate(
      [
        user('Think, then add.'),
        assistantOf(first),
        { role: 'tool', tool_call_id: first.toolCalls[0].id, content: '4' },
      ],
      { tools: [ADD] },
    );
    // The provider gets its own reasoning back, signature and all, or it refuses the conversation.
    expect(JSON.stringify(last().raw)).toContain('sig-contract-1');
  });

  it('sends a user’s images', async () => {
    answers.push({ content: 'A pixel.' });
    await model.generate([{ role: 'user', content: 'What is this?', images: [{ url: ONE_PIXEL }] }]);
    const sent = last().messages.find((m) => m.role === 'user');
    expect(sent?.images?.[0]).toMatch(/^data:image\/png;base64,iVBOR|iVBOR/);
  });

  it('asks for structured output under the schema and gets the JSON back', async () => {
    answers.push({ content: '{"city":"Paris","celsius":18}' });
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' }, celsius: { type: 'number' } },
      required: ['city', 'celsius'],
      additionalProperties: false,
    };
    const reply = await model.generate([user('Weather in Paris?')], { output: schema });
    expect(JSON.parse(reply.content ?? '')).toEqual({ city: 'Paris', celsius: 18 });
    // The schema went with the request, in the provider's own field.
    expect(JSON.stringify(last().raw ?? last())).toContain('celsius');
  });

  it('streams the text as it is written, and the reply holds all of it', async () => {
    answers.push({ content: 'one two three four', chunks: ['one ', 'two ', 'three ', 'four'] });
    const pieces: string[] = [];
    const reply = await model.generate([user('Count.')], { onText: (text) => pieces.push(text) });
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe('one two three four');
    expect(reply.content).toBe('one two three four');
  });

  it.each([
    [401, {}, 'auth', false],
    [400, {}, 'bad_request', false],
    [429, { 'retry-after': '2' }, 'rate_limited', true],
    [500, {}, 'server_error', true],
    [529, {}, 'overloaded', true],
  ] as const)('classifies HTTP %i as a ModelCallError', async (status, headers, kind, retryable) => {
    answers.push({ http: { status, headers, body: errorBody(status) } });
    const err = await model.generate([user('hi')]).catch((e: unknown) => e);
    expect(isModelCallError(err)).toBe(true);
    expect(err).toMatchObject({ kind, retryable });
    if (kind === 'rate_limited') expect((err as { retryAfterMs?: number }).retryAfterMs).toBe(2000);
    if (kind === 'auth') expect((err as Error).message).toMatch(adapter.key);
  });

  it('routes a model name once: the route names the provider and the provider’s model', () => {
    const route = model.route();
    expect(route.name).toBe(adapter.config(server.baseURL).model);
    expect(route.model).toMatch(/contract/);
    expect(route.provider).toMatch(/openai|anthropic/);
  });
});

/** The assistant message a reply becomes in the conversation (as the core writes it). */
function assistantOf(reply: ModelReply): ChatMessage {
  return {
    role: 'assistant',
    content: reply.content,
    ...(reply.toolCalls.length ? { tool_calls: reply.toolCalls } : {}),
    ...(reply.reasoning?.length ? { reasoning: reply.reasoning } : {}),
  } as ChatMessage;
}

/** An error body every provider's SDK reads: OpenAI's and Anthropic's shapes together. */
function errorBody(status: number) {
  return {
    type: 'error',
    error: { type: status === 401 ? 'authentication_error' : 'api_error', message: `HTTP ${status}` },
  };
}
