/**
 * How much of each request the provider's prompt cache can serve: for a 200-turn conversation of
 * about 2,800 characters a message, the share of each request's tokens that repeats the previous
 * request's prefix, message for message (what OpenAI's automatic prefix cache and Anthropic's
 * breakpoints can reuse). Once with the message window (`memoryWindow: 20`, the old default) and
 * once with memory by tokens (`maxPromptTokens`, summaries in chunks). Target: at least 0.9 with
 * summaries. Tokens are the scripted server's count (JSON characters over four).
 *
 * Run alone with `node --import tsx bench/prompt-prefix.ts`; `npm run bench` runs it too.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openMemoryStore } from '../src/memory-store/open-memory-store';
import { sendMessage } from '../src/client/conversations';
import { connectTemporal } from '../src/connection/temporal-env';
import { clientSettings } from '../src/connection/settings';
import type { ConversationOptions } from '../src/core/conversation/conversation-state';
import { startOpenAICompatibleServer, type ChatRequest } from '../src/testing/openai-compatible-server';
import { createAgentWorker } from '../src/worker/create-agent-worker';
import { installRuntimeLogging } from '../src/telemetry/logging';

const TURNS = Number(process.env.BENCH_PREFIX_TURNS ?? 200);
const MAX_PROMPT_TOKENS = Number(process.env.BENCH_PREFIX_MAX_PROMPT_TOKENS ?? 32_000);

const isSummary = (req: ChatRequest) => String(req.messages[0]?.content).startsWith('Summarise the conversation');
/** The user of the conversation with automatic recall, and the facts kept about them beforehand. */
const RECALL_USER = 'bench-user';
const RECALL_FACTS = [
  'Takes notes on topic A',
  'Prefers short answers',
  'Lives in Lyon',
  'Writes in Latin',
  'Works nights',
];
const tokensOf = (messages: unknown[]) => Math.ceil(JSON.stringify(messages).length / 4);

/** The mean share of a request's tokens that its longest common message prefix with the previous request covers. */
export function prefixShare(requests: ChatRequest[]): number {
  let sum = 0;
  for (let i = 1; i < requests.length; i++) {
    const [before, now] = [requests[i - 1].messages, requests[i].messages];
    let same = 0;
    while (same < before.length && same < now.length && JSON.stringify(before[same]) === JSON.stringify(now[same]))
      same++;
    sum += tokensOf(now.slice(0, same)) / tokensOf(now);
  }
  return requests.length > 1 ? sum / (requests.length - 1) : 1;
}

/** Runs the conversation with `options` and returns its requests (summaries apart). */
async function conversation(options: ConversationOptions, memoryDir?: string) {
  const requests: ChatRequest[] = [];
  let summaries = 0;
  const model = await startOpenAICompatibleServer((req) => {
    if (isSummary(req)) {
      summaries++;
      return { content: 'The user wrote long notes on topic A; the assistant noted each.' };
    }
    requests.push(req);
    return { content: `Noted. ${'and understood '.repeat(20)}` };
  });
  const temporal = await connectTemporal(
    { port: 0, persistent: false },
    clientSettings({ ...process.env, TEMPORAL_ADDRESS: '' }),
  );
  const taskQueue = `prefix-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: temporal.nativeConnection,
    taskQueue,
    registry: [],
    model: { baseURL: model.baseURL, apiKey: 'local', model: 'echo', requestTimeoutMs: 10_000, configured: true },
    ...(memoryDir ? { memory: { dir: memoryDir } } : {}),
  });
  const id = `prefix-${randomUUID().slice(0, 8)}`;
  try {
    await worker.runUntil(async () => {
      for (let turn = 1; turn <= TURNS; turn++) {
        const message = `Note ${turn}: ${'lorem ipsum dolor sit amet '.repeat(104)}`;
        await sendMessage(
          temporal.client,
          id,
          { message },
          { taskQueue, options: { system: 'Take notes.', ...options } },
        );
      }
    });
  } finally {
    await temporal.close();
    await model.close();
  }
  return { requests, summaries };
}

/** Prints the prefix share with the message window and with summaries. */
export async function promptPrefix(): Promise<void> {
  installRuntimeLogging('ERROR');
  console.log('');
  console.log(
    `Prompt prefix: a ${TURNS}-turn conversation, about 2,800 characters a message: the share of each request's tokens that repeats the previous request's prefix`,
  );
  // Automatic recall: the user's facts (kept beforehand) sent after each turn's message.
  const memoryDir = mkdtempSync(join(tmpdir(), 'durable-agents-prefix-memory-'));
  const store = await openMemoryStore({ dir: memoryDir });
  for (const [i, text] of RECALL_FACTS.entries()) await store.remember({ user: RECALL_USER }, { text }, `seed-${i}`);
  await store.close();
  for (const [label, options] of [
    ['message window (memoryWindow 20)', { memoryWindow: 20 }],
    [`memory by tokens (maxPromptTokens ${MAX_PROMPT_TOKENS})`, { maxPromptTokens: MAX_PROMPT_TOKENS }],
    [
      'the same, with automatic recall',
      { maxPromptTokens: MAX_PROMPT_TOKENS, user: RECALL_USER, memory: { recall: true } },
    ],
  ] as const) {
    const { requests, summaries } = await conversation(options, 'memory' in options ? memoryDir : undefined);
    const largest = Math.max(...requests.map((r) => tokensOf(r.messages)));
    console.log(
      `  ${label.padEnd(40)} share ${prefixShare(requests).toFixed(2)}   largest request ${largest} tokens   summaries ${summaries}`,
    );
  }
  rmSync(memoryDir, { recursive: true, force: true });
  console.log('  (target with summaries, with or without automatic recall: at least 0.90)');
}

if (require.main === module)
  promptPrefix().catch((err) => {
    console.error(err);
    process.exit(1);
  });
