/**
 * Each model adapter's cost per call above a plain SDK call: the adapter (building the request
 * from the core's messages and tool specs, reading the reply back, classifying failures) against
 * the provider's own SDK sending the same request to the same scripted server, which answers at
 * once. Calls alternate one by one (ours, plain, ours, ...), so a drift in the machine's speed
 * weighs on both alike; the figure is the difference of the medians. Target: at most 2 ms.
 *
 * Run alone with `node --import tsx bench/adapter-overhead.ts`; `npm run bench` runs it last.
 */
import Anthropic from '@anthropic-ai/sdk';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { ChatMessage } from '../src/core/messages/chat-message';
import type { ChatModel, ToolSpec } from '../src/models/chat-model';
import { aiSdkCallOptions, createAiSdkChatModel } from '../src/models/ai-sdk/ai-sdk-model';
import type { AiSdkLanguageModel } from '../src/models/ai-sdk/ai-sdk-language-model';
import { createAnthropicChatModel, anthropicRequest } from '../src/models/anthropic/messages';
import { createOpenAIChatModel } from '../src/models/openai/chat-completions';
import { createOpenAIResponsesChatModel, responsesRequest } from '../src/models/openai/responses';
import type { ModelConfig } from '../src/models/model-config';
import { startOpenAICompatibleServer } from '../src/testing/openai-compatible-server';

const CALLS = Number(process.env.BENCH_ADAPTER_CALLS ?? 200);

/** A conversation of ten messages with two tool steps, and two tools: a typical step's request. */
const MESSAGES: ChatMessage[] = [
  { role: 'system', content: 'You are a careful assistant. Use the tools.' },
  { role: 'user', content: 'What is the sum of the lengths of "hello" and "world", and its root?' },
  ...[1, 2].flatMap((i): ChatMessage[] => [
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'add', arguments: '{"a":5,"b":5}' } }],
    },
    { role: 'tool', tool_call_id: `call_${i}`, content: 'x'.repeat(2048) },
  ]),
  { role: 'assistant', content: 'Nearly there.' },
  { role: 'user', content: 'Go on.' },
];
const TOOLS: ToolSpec[] = ['add', 'sqrt'].map((name) => ({
  name,
  description: `Calculates ${name}`,
  parameters: {
    type: 'object',
    properties: { a: { type: 'number' }, b: { type: 'number' } },
    required: ['a', 'b'],
    additionalProperties: false,
  },
  strict: true,
}));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Median ms per call of `ours` and of `plain`, taking turns call by call. */
async function compare(ours: () => Promise<unknown>, plain: () => Promise<unknown>) {
  for (let i = 0; i < 20; i++) await Promise.all([ours(), plain()]); // warm both paths
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    for (const [run, into] of i % 2
      ? ([
          [plain, b],
          [ours, a],
        ] as const)
      : ([
          [ours, a],
          [plain, b],
        ] as const)) {
      const started = performance.now();
      await run();
      into.push(performance.now() - started);
    }
  }
  return { ours: median(a), plain: median(b) };
}

/** Prints one line per adapter: its median per call, the plain SDK's, and the difference. */
export async function adapterOverhead(log: (line: string) => void = console.log): Promise<void> {
  const server = await startOpenAICompatibleServer(() => ({ content: 'Done: 3.162.' }));
  const root = server.baseURL.replace(/\/v1$/, '');
  const config: ModelConfig = {
    baseURL: server.baseURL,
    apiKey: 'bench',
    model: 'bench-model',
    requestTimeoutMs: 30_000,
    configured: true,
    anthropic: { apiKey: 'bench', baseURL: root },
  };
  const openai = new OpenAI({ apiKey: 'bench', baseURL: server.baseURL, maxRetries: 0 });
  const anthropic = new Anthropic({ apiKey: 'bench', baseURL: root, maxRetries: 0, openTelemetry: false });
  const generate = (model: ChatModel) => () => model.generate(MESSAGES, { tools: TOOLS });
  // The plain calls send requests built beforehand: what is measured above them is all the adapter's.
  const responses = responsesRequest('bench-model', MESSAGES, { tools: TOOLS });
  const messages = anthropicRequest('bench-model', MESSAGES, { tools: TOOLS });
  const rows: Array<[string, () => Promise<unknown>, () => Promise<unknown>]> = [
    [
      'openai (Chat Completions)',
      generate(createOpenAIChatModel(config)),
      () =>
        openai.chat.completions.create({
          model: 'bench-model',
          temperature: 0,
          messages: MESSAGES as OpenAI.Chat.ChatCompletionMessageParam[],
          tools: TOOLS.map((t) => ({
            type: 'function',
            function: { name: t.name, description: t.description, parameters: t.parameters, strict: true },
          })),
        }),
    ],
    ['openai-responses', generate(createOpenAIResponsesChatModel(config)), () => openai.responses.create(responses)],
    ['anthropic (Messages)', generate(createAnthropicChatModel(config)), () => anthropic.messages.create(messages)],
  ];
  const aiSdk = aiSdkProvider(server.baseURL);
  if (aiSdk) {
    const model = aiSdk('bench-model');
    const call = aiSdkCallOptions(MESSAGES, { tools: TOOLS });
    rows.push([
      'ai-sdk (openai-compatible)',
      generate(createAiSdkChatModel(model)),
      async () => model.doGenerate(call as never),
    ]);
  }
  log(`\nModel adapters: ms per call above a plain SDK call with the same request (median of ${CALLS}; target ≤ 2 ms)`);
  try {
    for (const [name, ours, plain] of rows) {
      const r = await compare(ours, plain);
      const over = r.ours - r.plain;
      log(
        `  ${name.padEnd(26)} adapter ${r.ours.toFixed(2)} ms, plain SDK ${r.plain.toFixed(2)} ms, overhead ${over.toFixed(2)} ms ${over <= 2 ? 'met' : 'NOT MET'}`,
      );
    }
  } finally {
    await server.close();
  }
}

/**
 * The bench's peer has an AI SDK provider package (`@ai-sdk/openai-compatible`): the library
 * itself depends on none. Undefined when the peer is not installed (`npm run bench` installs it).
 */
function aiSdkProvider(baseURL: string): ((model: string) => AiSdkLanguageModel) | undefined {
  try {
    const load = createRequire(join(__dirname, 'peer', 'package.json'));
    const { createOpenAICompatible } = load('@ai-sdk/openai-compatible') as {
      createOpenAICompatible: (o: { name: string; baseURL: string }) => (model: string) => AiSdkLanguageModel;
    };
    return createOpenAICompatible({ name: 'bench', baseURL });
  } catch {
    return undefined;
  }
}

if (require.main === module) {
  adapterOverhead().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
