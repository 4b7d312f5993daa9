/**
 * The durability tax at the screen: `POST /api/chat` of `durable-agents serve` (its worker in the
 * same process, as `serve` runs by default) beside a plain, non-durable AI SDK route
 * (`streamText` + `toUIMessageStreamResponse`, bench/peer/plain-route.js) on the same scripted
 * model, in one run, the two taking turns request by request. For a 1-step answer and a
 * tool-calling turn, with an instant model and with one that takes 300 ms to its first byte and
 * 100 ms between chunks: the time from the request to the `start` chunk, to the first text token
 * and to `finish`.
 *
 * Run alone: `node --import tsx bench/chat-latency.ts` (BENCH_CHAT_RUNS requests per case and
 * system, default 20); `npm run bench` runs it too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { freePort, startDevServer } from '../src/connection/dev-server';
import { startOpenAICompatibleServer, type ChatRequest } from '../src/testing/openai-compatible-server';

const ROOT = join(__dirname, '..');
const ANSWER = 'The quick brown fox jumps over the lazy dog, twice.';

/** One request's times, in ms from sending it. */
export interface ChatTimes {
  start: number;
  firstText: number;
  finish: number;
}

export type ChatCase =
  'answer, instant model' | 'tool turn, instant model' | 'answer, slow model' | 'tool turn, slow model';

export type ChatLatencies = Record<ChatCase, { ours: ChatTimes[]; plain: ChatTimes[] }>;

const CASES: Array<{ name: ChatCase; agent: 'chat' | 'tooler'; slow: boolean }> = [
  { name: 'answer, instant model', agent: 'chat', slow: false },
  { name: 'tool turn, instant model', agent: 'tooler', slow: false },
  { name: 'answer, slow model', agent: 'chat', slow: true },
  { name: 'tool turn, slow model', agent: 'tooler', slow: true },
];

/** The scripted model: `slow` in the message waits 300 ms to its first byte and 100 ms between words. */
async function answer(request: ChatRequest) {
  const messages = request.messages as Array<{ role: string; content?: unknown }>;
  const user = [...messages].reverse().find((m) => m.role === 'user');
  const text = typeof user?.content === 'string' ? user.content : JSON.stringify(user?.content ?? '');
  const slow = text.includes('slow');
  if (slow) await new Promise((r) => setTimeout(r, 300));
  const pace = slow ? { chunkDelayMs: 100 } : {};
  const toolDone = messages[messages.length - 1]?.role === 'tool';
  if (text.includes('look up') && !toolDone)
    return { toolCalls: [{ name: 'lookup', arguments: { word: 'fox' } }], ...pace };
  return { content: ANSWER, ...pace };
}

/** Runs the bench against a Temporal server at `temporalAddress`. */
export async function chatLatency(temporalAddress: string, runs: number): Promise<ChatLatencies> {
  const model = await startOpenAICompatibleServer(answer);
  const [oursPort, plainPort] = [await freePort(), await freePort()];
  const env = { ...process.env, OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'bench', AGENT_MODEL: 'bench' };
  const ours = spawnReady(
    process.execPath,
    [
      '--import',
      'tsx',
      join(ROOT, 'src/bin/durable-agents.ts'),
      'serve',
      '--port',
      String(oursPort),
      '--module',
      join(__dirname, 'chat-agents.ts'),
    ],
    { ...env, TEMPORAL_ADDRESS: temporalAddress, AGENT_TASK_QUEUE: `bench-chat-${randomUUID()}` },
    'HTTP API on',
  );
  const plain = spawnReady(
    process.execPath,
    [join(__dirname, 'peer', 'plain-route.js'), String(plainPort)],
    env,
    'plain route ready',
  );
  try {
    await Promise.all([ours.ready, plain.ready]);
    const out = Object.fromEntries(
      CASES.map((c) => [c.name, { ours: [] as ChatTimes[], plain: [] as ChatTimes[] }]),
    ) as ChatLatencies;
    // A warm-up of each, not counted: the first request of a process loads code.
    for (const c of CASES) {
      await timeChat(`http://127.0.0.1:${oursPort}`, c.agent, message(c));
      await timeChat(`http://127.0.0.1:${plainPort}`, c.agent, message(c));
    }
    for (let i = 0; i < runs; i++)
      for (const c of CASES) {
        const order = i % 2 === 0 ? (['ours', 'plain'] as const) : (['plain', 'ours'] as const);
        for (const system of order) {
          const port = system === 'ours' ? oursPort : plainPort;
          out[c.name][system].push(await timeChat(`http://127.0.0.1:${port}`, c.agent, message(c)));
        }
      }
    return out;
  } finally {
    ours.process.kill('SIGTERM');
    plain.process.kill('SIGTERM');
    await model.close();
  }
}

function message(c: (typeof CASES)[number]): string {
  return `${c.agent === 'tooler' ? 'look up fox' : 'say something'}${c.slow ? ', slow' : ''}`;
}

/** Sends one message to a chat route as `useChat` does and times its chunks. */
export async function timeChat(base: string, agent: string, text: string): Promise<ChatTimes> {
  const t0 = performance.now();
  const response = await fetch(`${base}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      id: `bench-chat-${randomUUID()}`,
      agent,
      trigger: 'submit-message',
      messages: [{ id: randomUUID(), role: 'user', parts: [{ type: 'text', text }] }],
    }),
  });
  if (!response.ok || !response.body)
    throw new Error(`POST ${base}/api/chat: ${response.status} ${await response.text()}`);
  const times: Partial<ChatTimes> = {};
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
    const now = performance.now() - t0;
    buffer += decoder.decode(bytes, { stream: true });
    for (let cut; (cut = buffer.indexOf('\n\n')) >= 0;) {
      const line = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      const chunk = JSON.parse(line.slice(6)) as { type: string };
      if (chunk.type === 'start') times.start ??= now;
      if (chunk.type === 'text-delta') times.firstText ??= now;
      if (chunk.type === 'finish') times.finish ??= now;
      if (chunk.type === 'error') throw new Error(`${base}: ${line}`);
    }
  }
  if (times.start === undefined || times.firstText === undefined || times.finish === undefined)
    throw new Error(`${base}: the stream lacked start, text or finish (${JSON.stringify(times)})`);
  return times as ChatTimes;
}

function spawnReady(command: string, args: string[], env: NodeJS.ProcessEnv, banner: string) {
  const child: ChildProcess = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const ready = new Promise<void>((resolve, reject) => {
    const seen = (data: Buffer) => {
      output += data.toString();
      if (output.includes(banner)) resolve();
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited (${code}): ${output}`)));
  });
  return { process: child, ready };
}

/** p50 and p95 of a list of figures. */
export function quantiles(values: number[]): { p50: number; p95: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { p50: at(0.5), p95: at(0.95) };
}

/** The table of the figures, with the ratios ours / plain. */
export function chatLatencyTable(figures: ChatLatencies): string {
  const rows = [
    '| case | figure | plain p50 | ours p50 | ratio | plain p95 | ours p95 |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const [name, { ours, plain }] of Object.entries(figures))
    for (const figure of ['start', 'firstText', 'finish'] as const) {
      const o = quantiles(ours.map((t) => t[figure]));
      const p = quantiles(plain.map((t) => t[figure]));
      rows.push(
        `| ${name} | ${figure} | ${p.p50.toFixed(0)} ms | ${o.p50.toFixed(0)} ms | ${(o.p50 / p.p50).toFixed(2)} | ${p.p95.toFixed(0)} ms | ${o.p95.toFixed(0)} ms |`,
      );
    }
  return rows.join('\n');
}

if (require.main === module) {
  void (async () => {
    const server = await startDevServer({ port: await freePort() }, process.env);
    try {
      const figures = await chatLatency(server.address, Number(process.env.BENCH_CHAT_RUNS ?? 20));
      console.log(chatLatencyTable(figures));
    } finally {
      await server.stop();
    }
  })().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
