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
  /** With the slow model: for each word of the answer, from the model server writing it to the client having it. */
  words?: number[];
}

export type ChatCase =
  | 'answer, instant model'
  | 'next answer in an open chat, instant model'
  | 'tool turn, instant model'
  | 'answer, slow model'
  | 'tool turn, slow model';

export type ChatLatencies = Record<ChatCase, { ours: ChatTimes[]; plain: ChatTimes[] }> & {
  /** Ours only: from `POST /api/chat/:id/stop` mid-answer to its answer (the turn has ended, cancelled). */
  stopMs: number[];
  /** Ours only: from a message sent with `busy: "steer"` to the model request that contains it. */
  steerMs: number[];
};

const CASES: Array<{ name: ChatCase; agent: 'chat' | 'tooler'; slow: boolean; open?: boolean }> = [
  { name: 'answer, instant model', agent: 'chat', slow: false },
  // The second message of a chat: the conversation's workflow is open (and cached on its worker).
  { name: 'next answer in an open chat, instant model', agent: 'chat', slow: false, open: true },
  { name: 'tool turn, instant model', agent: 'tooler', slow: false },
  { name: 'answer, slow model', agent: 'chat', slow: true },
  { name: 'tool turn, slow model', agent: 'tooler', slow: true },
];

/** When the model wrote each word of the answer being timed (the requests come one at a time). */
let written: number[] = [];

/** When the model first got a request containing each `steer-<tag>` message. */
const steerSeen = new Map<string, number>();

/** The scripted model: `slow` in the message waits 300 ms to its first byte and 100 ms between words. */
async function answer(request: ChatRequest) {
  const messages = request.messages as Array<{ role: string; content?: unknown }>;
  for (const m of messages)
    if (typeof m.content === 'string' && m.content.startsWith('steer-') && !steerSeen.has(m.content))
      steerSeen.set(m.content, performance.now());
  const user = [...messages].reverse().find((m) => m.role === 'user');
  const text = typeof user?.content === 'string' ? user.content : JSON.stringify(user?.content ?? '');
  const slow = text.includes('slow');
  if (slow) await new Promise((r) => setTimeout(r, 300));
  // The slow model's words are timed as they are written (see `words`).
  const pace = slow ? { chunkDelayMs: 100, onPiece: () => written.push(performance.now()) } : {};
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
    const out = {
      ...Object.fromEntries(CASES.map((c) => [c.name, { ours: [] as ChatTimes[], plain: [] as ChatTimes[] }])),
      stopMs: [],
      steerMs: [],
    } as unknown as ChatLatencies;
    // A warm-up of each, not counted: the first request of a process loads code.
    for (const c of CASES) {
      await timeChat(`http://127.0.0.1:${oursPort}`, c.agent, message(c), c.open);
      await timeChat(`http://127.0.0.1:${plainPort}`, c.agent, message(c), c.open);
    }
    for (let i = 0; i < runs; i++)
      for (const c of CASES) {
        const order = i % 2 === 0 ? (['ours', 'plain'] as const) : (['plain', 'ours'] as const);
        for (const system of order) {
          const port = system === 'ours' ? oursPort : plainPort;
          out[c.name][system].push(await timeChat(`http://127.0.0.1:${port}`, c.agent, message(c), c.open));
        }
      }
    const base = `http://127.0.0.1:${oursPort}`;
    for (let i = 0; i < Math.min(runs, 10); i++) {
      out.stopMs.push(await timeStop(base));
      out.steerMs.push(await timeSteer(base));
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

/**
 * Sends one message to a chat route as `useChat` does and times its chunks. `open`: the chat had
 * a first exchange already (sent before, not timed), and `useChat` sends it with the new message.
 */
export async function timeChat(base: string, agent: string, text: string, open = false): Promise<ChatTimes> {
  const id = `bench-chat-${randomUUID()}`;
  const first = { id: randomUUID(), role: 'user', parts: [{ type: 'text', text: 'hello' }] };
  const before = open ? [first, { id: randomUUID(), role: 'assistant', parts: [{ type: 'text', text: ANSWER }] }] : [];
  if (open) await send(base, id, agent, [first]);
  written = [];
  const arrived: number[] = [];
  const t0 = performance.now();
  const response = await fetch(`${base}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      id,
      agent,
      trigger: 'submit-message',
      messages: [...before, { id: randomUUID(), role: 'user', parts: [{ type: 'text', text }] }],
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
      const chunk = JSON.parse(line.slice(6)) as { type: string; delta?: string };
      if (chunk.type === 'start') times.start ??= now;
      if (chunk.type === 'text-delta') times.firstText ??= now;
      if (chunk.type === 'text-delta') for (let i = 0; i < (chunk.delta ?? '').length; i++) arrived.push(now + t0);
      if (chunk.type === 'finish') times.finish ??= now;
      if (chunk.type === 'error') throw new Error(`${base}: ${line}`);
    }
  }
  if (times.start === undefined || times.firstText === undefined || times.finish === undefined)
    throw new Error(`${base}: the stream lacked start, text or finish (${JSON.stringify(times)})`);
  // Word i ends at the last character of the first i + 1 pieces the model wrote.
  const pieces = ANSWER.match(/\S+\s*|\s+/g)!;
  if (written.length === pieces.length && arrived.length === ANSWER.length) {
    let end = 0;
    times.words = pieces.map((piece, i) => arrived[(end += piece.length) - 1] - written[i]);
  }
  return times as ChatTimes;
}

/** Sends a message and reads its answer to the end. */
async function send(base: string, id: string, agent: string, messages: unknown[]): Promise<void> {
  const response = await fetch(`${base}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id, agent, trigger: 'submit-message', messages }),
  });
  await response.text();
}

/** Stops a slow answer after its first word: the time the stop route takes to answer (the turn has ended). */
async function timeStop(base: string): Promise<number> {
  const id = `bench-stop-${randomUUID()}`;
  const response = await fetch(`${base}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      id,
      agent: 'chat',
      messages: [{ id: randomUUID(), role: 'user', parts: [{ type: 'text', text: 'say something, slow' }] }],
    }),
  });
  const reader = response.body!.getReader();
  for (let seen = ''; !seen.includes('"text-delta"');) seen += new TextDecoder().decode((await reader.read()).value);
  const t0 = performance.now();
  const stopped = await fetch(`${base}/api/chat/${id}/stop`, { method: 'POST' });
  const ms = performance.now() - t0;
  if (stopped.status !== 200) throw new Error(`stop: ${stopped.status} ${await stopped.text()}`);
  await reader.cancel();
  return ms;
}

/** Steers a tool-calling turn during its first (slow) model call: the time until a model request has the message. */
async function timeSteer(base: string): Promise<number> {
  const id = `bench-steer-${randomUUID()}`;
  const tag = `steer-${randomUUID()}`;
  const post = (message: string, busy?: string) =>
    fetch(`${base}/conversations/${id}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'tooler', message, ...(busy ? { busy } : {}) }),
    });
  const turn = post('look up fox, slow');
  for (;;) {
    const status = await fetch(`${base}/conversations/${id}`);
    if (status.ok && ((await status.json()) as { state: string }).state === 'thinking') break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const t0 = performance.now();
  const steered = post(tag, 'steer');
  await Promise.all([turn, steered]);
  const seen = steerSeen.get(tag);
  if (seen === undefined) throw new Error('the steering message never reached the model');
  return seen - t0;
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
  for (const { name } of CASES)
    for (const figure of ['start', 'firstText', 'finish'] as const) {
      const { ours, plain } = figures[name];
      const o = quantiles(ours.map((t) => t[figure]));
      const p = quantiles(plain.map((t) => t[figure]));
      rows.push(
        `| ${name} | ${figure} | ${p.p50.toFixed(0)} ms | ${o.p50.toFixed(0)} ms | ${(o.p50 / p.p50).toFixed(2)} | ${p.p95.toFixed(0)} ms | ${o.p95.toFixed(0)} ms |`,
      );
    }
  for (const system of ['plain', 'ours'] as const) {
    const words = CASES.filter((c) => c.slow).flatMap((c) => figures[c.name][system].flatMap((t) => t.words ?? []));
    const w = quantiles(words);
    rows.push(
      '',
      `Each word, model server to client (${system}, slow model, ${words.length} words): p50 ${w.p50.toFixed(1)} ms, p95 ${w.p95.toFixed(1)} ms.`,
    );
  }
  const stop = quantiles(figures.stopMs);
  const steer = quantiles(figures.steerMs);
  rows.push(
    '',
    `Stop (\`POST /api/chat/:id/stop\` mid-answer until the turn has ended): p50 ${stop.p50.toFixed(0)} ms, p95 ${stop.p95.toFixed(0)} ms.`,
    `Steer (a message sent with \`busy: "steer"\` during a 300 ms model call until a model request has it): p50 ${steer.p50.toFixed(0)} ms, p95 ${steer.p95.toFixed(0)} ms.`,
  );
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
