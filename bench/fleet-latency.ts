/**
 * The production topology, timed at the screen: two API processes without workers (`serve
 * --no-worker`), two worker processes, Redis between them (`AGENT_LIVE_URL`), the engine keeping
 * its state on disk; beside a plain AI SDK route (bench/peer/plain-route.js) on the same scripted
 * model, in one run, the two taking turns. It times the first text token of a new and of an open
 * chat (instant model, and one that waits 300 ms before its first byte), each word from the model
 * server writing it to a client having it on the replica that took the POST and on the other
 * (following the same turn, as a second tab does), and the words again with Redis stopped (the
 * durable path alone).
 *
 * Run alone: `node --import tsx bench/fleet-latency.ts` (BENCH_FLEET_RUNS turns per case, default
 * 30); `npm run bench` runs it too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { freePort, startDevServer } from '../src/connection/dev-server';
import { startOpenAICompatibleServer, type ChatRequest } from '../src/testing/openai-compatible-server';
import { startRedis } from '../test/helpers/redis-server';
import { quantiles } from './chat-latency';

const ROOT = join(__dirname, '..');
const WORDS = Array.from({ length: 30 }, (_, i) => `word${i}`);
const ANSWER = WORDS.join(' ');
const PIECES = ANSWER.match(/\S+\s*/g)!;

/** A turn's times, in ms: its first text token from the request, and each word's trip per reader. */
interface TurnTimes {
  id: string;
  /** When it was posted and when the model was asked (epoch ms). */
  postedAt: number;
  askedAt: number;
  firstText: number;
  words: { posting: number[]; other: number[] };
}

/** The figures of {@link fleetLatency}. */
export interface FleetLatencies {
  firstToken: Record<
    'new chat, instant model' | 'new chat, 300 ms model' | 'open chat, instant model',
    {
      ours: number[];
      plain: number[];
    }
  >;
  /** Each word, model server to client, with the 300 ms model: live path, and durable path (Redis stopped). */
  words: Record<'live' | 'durable', { posting: number[]; other: number[] }>;
  /** The same for the plain route (one process, nothing between). */
  plainWords: number[];
  /** Where a new and an open chat's time goes before the model is asked (instant model; see {@link PHASES}). */
  phases: Record<'new chat' | 'open chat', Array<Record<Phase, number>>>;
}

/**
 * The steps between a chat's POST and its model request, from the workflow's history (the
 * engine's clock) and the model server's: each as ms after the POST.
 */
const PHASES = [
  'workflow task scheduled',
  'workflow task started',
  'message accepted',
  'workflow task completed',
  'model request',
] as const;
type Phase = (typeof PHASES)[number];

/** When the model wrote each piece of the answer being timed (one turn at a time). */
let written: number[] = [];
/** When the model was last asked (epoch ms). */
let askedAt = 0;

async function answer(request: ChatRequest) {
  askedAt = Date.now();
  const said = String([...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '');
  const slow = said.includes('slow');
  if (slow) await new Promise((r) => setTimeout(r, 300));
  return {
    content: ANSWER,
    ...(slow ? { chunkDelayMs: 20 } : {}),
    onPiece: () => written.push(performance.now()),
  };
}

/** Runs the bench; `runs` turns per case and system. */
export async function fleetLatency(runs: number): Promise<FleetLatencies> {
  const work = mkdtempSync(join(tmpdir(), 'bench-fleet-'));
  const server = await startDevServer(
    { dbFilename: join(work, 'temporal.db'), logFile: join(work, 'server.log') },
    process.env,
  );
  const redis = await startRedis();
  const model = await startOpenAICompatibleServer(answer);
  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: server.address,
    AGENT_TASK_QUEUE: `bench-fleet-${randomUUID()}`,
    OPENAI_BASE_URL: model.baseURL,
    OPENAI_API_KEY: 'bench',
    AGENT_MODEL: 'bench',
    AGENT_LIVE_URL: redis.url,
  };
  const cli = (args: string[], extra: Record<string, string> = {}) =>
    started(
      process.execPath,
      [
        '--import',
        'tsx',
        join(ROOT, 'src/bin/durable-agents.ts'),
        ...args,
        '--module',
        join(__dirname, 'chat-agents.ts'),
      ],
      { ...env, ...extra },
      /Press Ctrl\+C|HTTP API on/,
    );
  const [apiPorts, plainPort] = [[await freePort(), await freePort()], await freePort()];
  const processes = await Promise.all([
    cli(['worker']),
    cli(['worker']),
    ...apiPorts.map((port) => cli(['serve', '--no-worker', '--port', String(port)])),
    started(process.execPath, [join(__dirname, 'peer', 'plain-route.js'), String(plainPort)], env, /plain route ready/),
  ]);
  const [a, b] = apiPorts.map((port) => `http://127.0.0.1:${port}`);
  const say = (what: string) => process.stderr.write(`fleet: ${what}\n`);
  say('two workers, two API replicas and the plain route are up');
  const plain = `http://127.0.0.1:${plainPort}`;
  try {
    const out: FleetLatencies = {
      firstToken: {
        'new chat, instant model': { ours: [], plain: [] },
        'new chat, 300 ms model': { ours: [], plain: [] },
        'open chat, instant model': { ours: [], plain: [] },
      },
      words: { live: { posting: [], other: [] }, durable: { posting: [], other: [] } },
      plainWords: [],
      phases: { 'new chat': [], 'open chat': [] },
    };
    const connection = await Connection.connect({ address: server.address });
    const client = new Client({ connection });
    // Warm-up, not counted: each process's first request loads code, and both workers get work.
    for (let i = 0; i < 4; i++) await turn(i % 2 ? b : a, undefined, 'warm up', false);
    await turn(plain, undefined, 'warm up', false);
    const cases = [
      ['new chat, instant model', 'say something', false],
      ['new chat, 300 ms model', 'say something, slow', false],
      ['open chat, instant model', 'say something', true],
    ] as const;
    say('first tokens...');
    for (let i = 0; i < runs; i++)
      for (const [name, text, open] of cases) {
        const posting = i % 2 ? b : a;
        for (const system of i % 2 ? (['plain', 'ours'] as const) : (['ours', 'plain'] as const)) {
          const times = await turn(system === 'plain' ? plain : posting, undefined, text, open);
          out.firstToken[name][system].push(times.firstText);
          if (system === 'ours' && !text.includes('slow'))
            out.phases[open ? 'open chat' : 'new chat'].push(await phasesOf(client, times));
        }
      }
    const words = async (into: { posting: number[]; other: number[] }) => {
      for (let i = 0; i < runs; i++) {
        const [posting, other] = i % 2 ? [b, a] : [a, b];
        const times = await turn(posting, other, 'say something, slow', false);
        into.posting.push(...times.words.posting);
        into.other.push(...times.words.other);
        if (into === out.words.live)
          out.plainWords.push(...(await turn(plain, undefined, 'say something, slow', false)).words.posting);
      }
    };
    say('words, live...');
    await words(out.words.live);
    await connection.close();
    await redis.stop();
    say('words, Redis stopped...');
    await words(out.words.durable);
    return out;
  } catch (err) {
    say(`failed: ${(err as Error).stack ?? String(err)}`);
    throw err;
  } finally {
    for (const p of processes) p.kill('SIGKILL');
    await redis.stop();
    await model.close();
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * One turn posted as `useChat` does to `posting`, followed on `other` too when given (`GET
 * /api/chat/:id/stream?messageId=`, once the posting replica shows the turn). `open`: the chat had
 * a first exchange before (not timed). Words are timed for the readers that were connected when
 * the model wrote them.
 */
async function turn(posting: string, other: string | undefined, text: string, open: boolean): Promise<TurnTimes> {
  const id = `bench-fleet-${randomUUID()}`;
  const first = { id: randomUUID(), role: 'user', parts: [{ type: 'text', text: 'hello' }] };
  const before = open ? [first, { id: randomUUID(), role: 'assistant', parts: [{ type: 'text', text: ANSWER }] }] : [];
  if (open) await (await post(posting, id, [first])).text();
  written = [];
  const messageId = randomUUID();
  const postedAt = Date.now();
  const t0 = performance.now();
  const response = await post(posting, id, [
    ...before,
    { id: messageId, role: 'user', parts: [{ type: 'text', text }] },
  ]);
  let follower: Promise<Arrivals> | undefined;
  const mine = read(response, () => {
    if (other) follower ??= fetch(`${other}/api/chat/${id}/stream?messageId=${messageId}`).then((r) => read(r));
  });
  const posted = await within(mine, `${posting} did not finish the turn of ${id}`);
  const followed = follower ? await within(follower, `${other} did not finish following ${id}`) : undefined;
  if (posted.firstText === undefined) throw new Error(`${posting}: no text in the answer`);
  return {
    id,
    postedAt,
    askedAt,
    firstText: posted.firstText - t0,
    words: { posting: trips(posted), other: followed ? trips(followed) : [] },
  };
}

/** The phases of a turn's start (see {@link PHASES}) from its workflow's history. */
async function phasesOf(client: Client, times: TurnTimes): Promise<Record<Phase, number>> {
  const history = await client.workflow.getHandle(times.id).fetchHistory();
  const at = (e: { eventTime?: { seconds?: unknown; nanos?: number | null } | null }) =>
    Number(e.eventTime!.seconds) * 1000 + (e.eventTime!.nanos ?? 0) / 1e6 - times.postedAt;
  const events = history.events ?? [];
  // The workflow task that accepted the turn's message (the last Update or Signal): when it was
  // scheduled (a new chat: its workflow created), started (a worker took it) and completed (its
  // answer, which scheduled the model call, eagerly dispatched back).
  let accepted = events.length - 1;
  while (
    accepted > 0 &&
    !(
      events[accepted].workflowExecutionUpdateAcceptedEventAttributes ||
      events[accepted].workflowExecutionSignaledEventAttributes
    )
  )
    accepted--;
  const before = (from: number, test: (e: (typeof events)[number]) => unknown) => {
    for (let i = from; i >= 0; i--) if (test(events[i])) return i;
    return -1;
  };
  const started = before(accepted, (e) => e.workflowTaskStartedEventAttributes);
  const scheduled = before(started, (e) => e.workflowTaskScheduledEventAttributes);
  const completed = events.findIndex((e, i) => i > started && e.workflowTaskCompletedEventAttributes);
  const time = (i: number) => (i < 0 ? NaN : at(events[i]));
  return {
    'workflow task scheduled': time(scheduled),
    'workflow task started': time(started),
    'message accepted': time(accepted),
    'workflow task completed': time(completed),
    'model request': times.askedAt - times.postedAt,
  };
}

/** `promise`, or an error saying `what` after a minute (a turn takes a second or two). */
function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(what)), 20_000)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

function post(base: string, id: string, messages: unknown[]): Promise<Response> {
  return fetch(`${base}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id, agent: 'chat', trigger: 'submit-message', messages }),
  });
}

/** When a reader connected, got its first text, and each character of the answer. */
interface Arrivals {
  connected: number;
  firstText?: number;
  chars: number[];
}

/** Reads a UI message stream to its end; `onStart` once its `start` chunk came. */
async function read(response: Response, onStart?: () => void): Promise<Arrivals> {
  if (!response.ok || !response.body) throw new Error(`${response.url}: ${response.status} ${await response.text()}`);
  const out: Arrivals = { connected: performance.now(), chars: [] };
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
    const now = performance.now();
    buffer += decoder.decode(bytes, { stream: true });
    for (let cut; (cut = buffer.indexOf('\n\n')) >= 0;) {
      const line = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      if (!line.startsWith('data: {')) continue;
      const chunk = JSON.parse(line.slice(6)) as { type: string; delta?: string };
      if (chunk.type === 'start') onStart?.();
      if (chunk.type === 'text-delta') {
        out.firstText ??= now;
        for (let i = 0; i < (chunk.delta ?? '').length; i++) out.chars.push(now);
      }
      if (chunk.type === 'error') throw new Error(`${response.url}: ${line}`);
    }
  }
  return out;
}

/** Each word's trip, model server to this reader, for the words written once it was connected. */
function trips(arrivals: Arrivals): number[] {
  if (arrivals.chars.length !== ANSWER.length || written.length !== PIECES.length) return [];
  let end = 0;
  return PIECES.flatMap((piece, i) => {
    end += piece.length;
    return written[i] >= arrivals.connected ? [arrivals.chars[end - 1] - written[i]] : [];
  });
}

/** Starts a process; resolves once its output matches `ready`. */
async function started(command: string, args: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<ChildProcess> {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const seen = (data: Buffer) => ready.test((output += data.toString())) && resolve();
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited (${code}): ${output}`)));
  });
  // Once up, a process that stops before the bench does is news.
  child.once('exit', (code, signal) => {
    if (signal !== 'SIGKILL')
      process.stderr.write(
        `fleet: ${args.slice(2, 4).join(' ')} stopped (${code ?? signal}):\n${output.slice(-2000)}\n`,
      );
  });
  return child;
}

/** The figures as a table, with the targets of the live path. */
export function fleetLatencyTable(f: FleetLatencies): string {
  const ms = (v: number) => `${v.toFixed(0)} ms`;
  const lines = ['| figure | plain route | ours | target |', '| --- | --- | --- | --- |'];
  const limits = { 'new chat, instant model': 5, 'new chat, 300 ms model': 1.15, 'open chat, instant model': 5 };
  for (const [name, { ours, plain }] of Object.entries(f.firstToken)) {
    const [o, p] = [quantiles(ours), quantiles(plain)];
    const ratio = o.p50 / p.p50;
    const limit = limits[name as keyof typeof limits];
    lines.push(
      `| first text token, ${name}, p50 | ${ms(p.p50)} | ${ms(o.p50)} (${ratio.toFixed(2)}×) | ≤ ${limit}× ${ratio <= limit ? 'met' : 'NOT MET'} |`,
    );
  }
  const plainWords = quantiles(f.plainWords);
  for (const [path, readers] of Object.entries(f.words))
    for (const [reader, values] of Object.entries(readers)) {
      const q = quantiles(values);
      const [p50, p95] = path === 'live' ? [15, 60] : [60, Infinity];
      const met = q.p50 <= p50 && q.p95 <= p95 ? 'met' : 'NOT MET';
      const target = path === 'live' ? `≤ ${p50} / ${p95} ms` : `p50 ≤ ${p50} ms`;
      lines.push(
        `| each word, ${reader === 'posting' ? 'replica that took the POST' : 'the other replica'}, ${path === 'live' ? 'Redis up' : 'Redis stopped'}, p50 / p95 (${values.length} words) | ${ms(plainWords.p50)} / ${ms(plainWords.p95)} | ${ms(q.p50)} / ${ms(q.p95)} | ${target} ${met} |`,
      );
    }
  const phases = [
    '',
    '| ms after the POST, p50 | ' + PHASES.join(' | ') + ' |',
    '|---|' + PHASES.map(() => '---').join('|') + '|',
  ];
  for (const [kind, rows] of Object.entries(f.phases))
    phases.push(`| ${kind} | ${PHASES.map((p) => quantiles(rows.map((r) => r[p])).p50.toFixed(0)).join(' | ')} |`);
  return [...lines, ...phases].join('\n');
}

if (require.main === module) {
  fleetLatency(Number(process.env.BENCH_FLEET_RUNS ?? 30))
    .then((f) => console.log(fleetLatencyTable(f)))
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
