import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { freePort } from '../../src/connection/dev-server';
import { cleanEnv, eventually, startTs, type Started } from '../helpers/processes';
import { closeScriptedModels, lastOf, startModel } from '../helpers/scripted-model';
import { redisProblem, startRedis, type TestRedis } from '../helpers/redis-server';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';

/**
 * The live path across a fleet, as teams deploy it: two API processes without workers
 * (`serve` with AGENT_SERVE_WORKER=false), two worker processes, a real Redis between them
 * (AGENT_LIVE_URL), the test's Temporal server. A turn posted to one replica is read on both;
 * every word reaches each reader once, in order, while Redis carries the pieces (its channels
 * show the publishes and both replicas' subscriptions). Redis killed mid-answer: the answer
 * completes from the durable log, every word once; Redis back: live again without a restart;
 * Redis down when a worker starts: it says so, naming AGENT_LIVE_URL, and serves all the same.
 */
const skip = redisProblem();
if (skip) process.stderr.write(`\nlive-fleet.test: skipped: ${skip}\n`);
const describeWithRedis = skip ? describe.skip : describe;

const WORDS = 60;
const STORY = Array.from({ length: WORDS }, (_, i) => `w${i}`).join(' ');

describeWithRedis('the live path across API replicas and workers (AGENT_LIVE_URL, Redis)', () => {
  const processes: Started[] = [];
  let redis: TestRedis | undefined;
  /** The fleet's settings and its two replicas, once the first test started them. */
  let env: NodeJS.ProcessEnv;
  let replicas: string[] = [];
  let gate: { opened: Promise<void>; open(): void } = openGate();
  afterAll(async () => {
    for (const p of processes) p.kill('SIGKILL');
    await redis?.stop();
    await closeScriptedModels();
  });

  it('carries each word to readers on both replicas once, in order; survives Redis killed mid-answer, down at start, and back', async () => {
    // Each answer is written a word at a time ("slow" ones slowly enough to kill Redis in the
    // middle); after its fifth word it waits for the test (until both replicas show the turn).
    const model = await startModel((req: ChatRequest) => ({
      content: STORY,
      chunkDelayMs: lastOf(req, 'user').startsWith('slow') ? 120 : 25,
      beforePiece: (i: number) => (i === 5 ? gate.opened : undefined),
    }));
    redis = await startRedis({ start: false });
    env = cleanEnv({
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
      AGENT_TASK_QUEUE: `live-fleet-${randomUUID()}`,
      OPENAI_BASE_URL: model.baseURL,
      OPENAI_API_KEY: 'live',
      AGENT_LIVE_URL: redis.url,
    });
    // A worker that starts while Redis is down says so, and runs on the durable path.
    const early = await startTs(['worker.ts'], env, /Press Ctrl\+C/, 120_000);
    processes.push(early);
    expect(
      await eventually(() =>
        /live channel at AGENT_LIVE_URL=redis:\/\/127\.0\.0\.1:\d+\/? is unreachable/.test(early.errors()),
      ),
    ).toBe(true);
    await redis.restart();
    processes.push(await startTs(['worker.ts'], env, /Press Ctrl\+C/, 120_000));
    const ports = [await freePort(), await freePort()];
    for (const port of ports)
      processes.push(
        await startTs(
          ['serve.ts'],
          { ...env, PORT: String(port), AGENT_SERVE_WORKER: 'false' },
          /Press Ctrl\+C/,
          120_000,
        ),
      );
    const [a, b] = (replicas = ports.map((p) => `http://127.0.0.1:${p}`));

    // What Redis carries, seen by a subscriber of the test's own.
    const watcher = createClient({ url: redis.url });
    watcher.on('error', () => undefined);
    await watcher.connect();
    const published: string[] = [];
    await watcher.pSubscribe('durable-agents:live:*', (message, channel) => published.push(`${channel} ${message}`));

    const id = `live-${randomUUID()}`;
    /**
     * Sends a message with useChat's protocol on replica A, and follows the same turn on replica B
     * (`GET /api/chat/:id/stream?messageId=`, as a second tab does); what each showed.
     */
    const turn = async (message: string, during?: (shownOnA: () => string) => Promise<void>) => {
      gate = openGate();
      const messageId = `m-${randomUUID()}`;
      const posted = fetch(`${a}/api/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          id,
          messages: [{ id: messageId, role: 'user', parts: [{ type: 'text', text: message }] }],
        }),
      });
      const shown = { a: '', b: '' };
      const read = async (side: 'a' | 'b', response: Promise<Response>) => {
        const got = await response;
        if (!got.body) throw new Error(`replica ${side} answered ${got.status} without a stream`);
        const reader = got.body.getReader();
        for (let r = await reader.read(); !r.done; r = await reader.read())
          shown[side] += new TextDecoder().decode(r.value);
      };
      const readingA = read('a', posted);
      // Once the turn shows on A, B follows it too (a second tab), from its start.
      await eventually(() => deltasOf(shown.a).length > 0, 60_000);
      const readingB = read('b', fetch(`${b}/api/chat/${id}/stream?messageId=${messageId}`));
      // Both show the answer's start: the rest is written now.
      await eventually(() => deltasOf(shown.b).length > 0, 60_000);
      gate.open();
      const reading = Promise.all([readingA, readingB]);
      await during?.(() => shown.a);
      // A stream that never ends fails here, saying what each replica showed, not at the test's timeout.
      await within(
        reading,
        120_000,
        () => `turn "${message}" did not end: A showed ${tail(shown.a)}; B showed ${tail(shown.b)}`,
      );
      return { a: textOf(shown.a), b: textOf(shown.b), deltasOnB: deltasOf(shown.b).length };
    };

    // 1. Live: the workers publish the pieces as they come (what one turn of a worker's event loop
    // has is one message); each replica shows them as they come, about a delta a word, where the
    // durable log's deltas are batches of a tenth of a second: four words or so of the 55 written
    // after the gate, 14 deltas. (A loaded machine reads some words together: fewer than 55.)
    const first = await turn('one');
    expect([first.a, first.b]).toEqual([STORY, STORY]);
    expect(first.deltasOnB).toBeGreaterThanOrEqual(28);
    const pieces = published.filter(
      (m) => m.startsWith(`durable-agents:live:default:${id} `) && m.includes('"kind":"text"'),
    );
    expect(pieces.length).toBeGreaterThanOrEqual(28);

    // 2. Redis killed mid-answer: the answer completes through Temporal, every word once, on both.
    const second = await turn('slow two', async (shown) => {
      await eventually(() => textOf(shown()).split(' ').length >= 10, 60_000);
      await redis!.kill();
    });
    expect([second.a, second.b]).toEqual([STORY, STORY]);

    // 3. Redis back: live again, nothing restarted.
    await redis.restart();
    await watcher.close().catch(() => undefined);
    const again = createClient({ url: redis.url });
    again.on('error', () => undefined);
    await again.connect();
    const after: string[] = [];
    await again.pSubscribe('durable-agents:live:*', (message, channel) => after.push(`${channel} ${message}`));
    // The workers and replicas reconnect by themselves (each said it lost Redis, and says it is back).
    const count = (text: string, pattern: RegExp) => text.match(pattern)?.length ?? 0;
    const reconnected = await eventually(
      () => processes.every((p) => count(p.errors(), /is unreachable/g) === count(p.errors(), /is back\n/g)),
      30_000,
    );
    expect(reconnected ? 'reconnected' : processes.map((p) => p.errors()).join('\n----\n')).toBe('reconnected');
    const third = await turn('three');
    expect([third.a, third.b]).toEqual([STORY, STORY]);
    expect(third.deltasOnB).toBeGreaterThanOrEqual(28);
    expect(after.some((m) => m.startsWith(`durable-agents:live:default:${id} `) && m.includes('"kind":"text"'))).toBe(
      true,
    );
    await again.close();
  }, 300_000);

  it("the HTTP API's event streams are live on every replica, and one killed mid-answer is resumed on another by Last-Event-ID", async () => {
    const [a, b] = replicas;
    expect(a && b).toBeTruthy();
    const port = await freePort();
    const doomed = await startTs(
      ['serve.ts'],
      { ...env, PORT: String(port), AGENT_SERVE_WORKER: 'false' },
      /Press Ctrl\+C/,
      120_000,
    );
    processes.push(doomed);
    const c = `http://127.0.0.1:${port}`;
    const id = `live-sse-${randomUUID()}`;
    gate = openGate();
    // The turn, posted as a stream on A (POST /conversations/:id/messages, Accept: text/event-stream).
    const onA = sse(
      fetch(`${a}/conversations/${id}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ message: 'slow four' }),
      }),
    );
    await eventually(() => onA.deltas().length > 0, 60_000);
    // A page on C follows the conversation's events (GET /conversations/:id/events, as the chat page does).
    const onC = sse(fetch(`${c}/conversations/${id}/events`, { headers: { accept: 'text/event-stream' } }));
    await eventually(() => onC.deltas().length > 0, 60_000);
    gate.open();
    // C dies mid-answer; the page reconnects to B with the last id it got, as an EventSource does.
    await eventually(() => onC.text().split(' ').length >= 12, 60_000);
    doomed.kill('SIGKILL');
    await onC.done.catch(() => undefined);
    const last = onC.lastId();
    expect(last).toBeDefined();
    const onB = sse(
      fetch(`${b}/conversations/${id}/events`, { headers: { accept: 'text/event-stream', 'last-event-id': last! } }),
      (e) => e.type === 'turn_completed',
    );
    await within(
      Promise.all([onA.done, onB.done]),
      120_000,
      () => `the turn did not end: A showed ${tail(onA.text())}; B showed ${tail(onB.text())}`,
    );
    expect(onA.text()).toBe(STORY);
    expect(onC.text() + onB.text()).toBe(STORY);
    // Word by word on the replica that posted it, where the durable log alone gives a batch a tenth of a second.
    expect(onA.deltas().length).toBeGreaterThanOrEqual(40);
    expect(onB.events().filter((e) => e.type === 'turn_completed')).toHaveLength(1);
  }, 300_000);
});

/** `promise`, or a failure saying `what()` once `ms` have passed. */
async function within<T>(promise: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(what())), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The end of what a reader showed, for failure messages. */
const tail = (text: string) => JSON.stringify(text.slice(-300));

/** A Server-Sent Events reader of the HTTP API: its events, text, last id, and its end (`until` or the stream's). */
function sse(response: Promise<Response>, until?: (e: { type: string }) => boolean) {
  const events: Array<{ type: string; delta?: string }> = [];
  let lastId: string | undefined;
  const done = (async () => {
    const got = await response;
    if (!got.body) throw new Error(`answered ${got.status} without a stream`);
    const reader = got.body.getReader();
    let buffer = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      buffer += new TextDecoder().decode(r.value);
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const id = /^id: (.*)$/m.exec(block)?.[1];
        const data = /^data: (\{.*)$/m.exec(block)?.[1];
        if (!data || /^event: /m.test(block)) continue;
        const e = JSON.parse(data) as { type: string; delta?: string };
        events.push(e);
        if (id !== undefined) lastId = id;
        if (until?.(e)) return void reader.cancel().catch(() => undefined);
      }
    }
  })();
  const deltas = () => events.filter((e) => e.type === 'text_delta').map((e) => e.delta!);
  return { done, events: () => events, deltas, text: () => deltas().join(''), lastId: () => lastId };
}

/** A gate the scripted model waits at. */
function openGate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** The text deltas of a UI message stream (useChat's protocol), in order. */
function deltasOf(stream: string): string[] {
  return stream
    .split('\n')
    .filter((line) => line.startsWith('data: {'))
    .map((line) => JSON.parse(line.slice(6)) as { type: string; delta?: string })
    .filter((chunk) => chunk.type === 'text-delta')
    .map((chunk) => chunk.delta!);
}

/** The text a UI message stream showed. */
function textOf(stream: string): string {
  return deltasOf(stream).join('');
}
