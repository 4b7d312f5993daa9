/**
 * `npm run bench:scale`: many open conversations over a few worker processes, as a team that puts
 * a long-lived conversation behind each of its customers has them: most idle, some sleeping on a
 * durable timer (`sleep`), some waiting for an event (`wait_for_event`) that arrives later, and a
 * steady trickle of turns (a lookup and an answer, the scripted model taking --model-delay-ms per
 * call). It reports what a worker fleet needs: turns/s, turn latency, failed turns, worker memory
 * per 1,000 cached conversations, the workflow cache's hit rate, the CPU of the workers, of the
 * server, of the bench itself and of the whole machine (other work on it skews every figure), and
 * the first resource to saturate. Its last line is one JSON object.
 *
 *   npm run bench:scale -- --conversations 1000 --workers 2     # the default
 *   npm run bench:scale -- --large                              # 10,000 conversations
 *
 * On the embedded dev server, or on TEMPORAL_ADDRESS when set. Not part of `npm test`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@temporalio/client';
import { connectClient } from '../src/connection/client-connection';
import { freePort, startDevServer, type DevServer } from '../src/connection/dev-server';
import { deliverEvent } from '../src/client/deliver-event';
import { queueMessage, sendMessage } from '../src/client/conversations';
import { installRuntimeLogging } from '../src/telemetry/logging';
import { startOpenAICompatibleServer, type ChatRequest } from '../src/testing/openai-compatible-server';
import { cacheFigures, childOf, cpuNow, growth, percentile, rssMb, type CacheFigures } from './scale-stats';

const ROOT = join(__dirname, '..');
const { values: flags } = parseArgs({
  options: {
    conversations: { type: 'string' },
    large: { type: 'boolean', default: false },
    workers: { type: 'string', default: '2' },
    'duration-s': { type: 'string', default: '60' },
    'turns-per-second': { type: 'string', default: '10' },
    'model-delay-ms': { type: 'string', default: '400' },
    cache: { type: 'string', default: '0' },
    'open-concurrency': { type: 'string', default: '40' },
  },
});
const CONVERSATIONS = Number(flags.conversations ?? (flags.large ? 10_000 : 1_000));
const WORKERS = Number(flags.workers);
const DURATION_S = Number(flags['duration-s']);
const RATE = Number(flags['turns-per-second']);
const DELAY_MS = Number(flags['model-delay-ms']);
const CACHE = Number(flags.cache);
const OPEN_CONCURRENCY = Number(flags['open-concurrency']);
for (const [name, value] of Object.entries({ CONVERSATIONS, WORKERS, DURATION_S, RATE, DELAY_MS, OPEN_CONCURRENCY }))
  if (!(Number.isFinite(value) && value > 0)) throw new Error(`bench:scale: ${name} must be a positive number`);

/** Conversation i's kind: one in ten sleeps on a timer, one in ten waits for an event, the rest idle between turns. */
const kindOf = (i: number): 'sleeper' | 'waiter' | 'idle' =>
  i % 10 === 0 ? 'sleeper' : i % 10 === 1 ? 'waiter' : 'idle';
const OPTIONS = { tools: ['lookup', 'sleep', 'wait_for_event'], system: 'You are a support agent.' };

/** The scripted model: a realistic delay, then a lookup, a wait or an answer by what the customer said. */
async function model(req: ChatRequest) {
  await new Promise((r) => setTimeout(r, DELAY_MS * (0.75 + Math.random() / 2)));
  const last = req.messages[req.messages.length - 1];
  if (last.role === 'tool') return { content: 'Your order has shipped.' };
  const said = String(last.content);
  if (said.startsWith('sleep'))
    return { toolCalls: [{ name: 'sleep', arguments: { duration: '2h', reason: 'follow up later' } }] };
  if (said.startsWith('wait'))
    return { toolCalls: [{ name: 'wait_for_event', arguments: { name: 'go', timeout: '2h' } }] };
  if (said.startsWith('order')) return { toolCalls: [{ name: 'lookup', arguments: { order: said.slice(6) } }] };
  return { content: 'Hello! How can I help?' };
}

interface Worker {
  process: ChildProcess;
  metricsPort: number;
}

async function startWorker(env: NodeJS.ProcessEnv): Promise<Worker> {
  const metricsPort = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/scale-worker.ts'], {
    cwd: ROOT,
    env: { ...env, BENCH_METRICS_PORT: String(metricsPort) },
    // Its stdin is a pipe from us: the kernel closes it whenever this process ends (a signal,
    // a crash, SIGKILL), and the worker exits then, so no worker outlives the bench.
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  for (const deadline = Date.now() + 120_000; !/scale worker ready/.test(out);) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`a scale worker did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { process: child, metricsPort };
}

/** Runs `task` over `items`, `limit` at a time. */
async function pool<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await task(items[next++]);
    }),
  );
}

const sumCache = (figures: CacheFigures[]): CacheFigures =>
  figures.reduce(
    (a, f) => ({
      hits: a.hits + f.hits,
      misses: a.misses + f.misses,
      size: a.size + f.size,
      forcedEvictions: a.forcedEvictions + f.forcedEvictions,
    }),
    { hits: 0, misses: 0, size: 0, forcedEvictions: 0 },
  );

async function main(): Promise<void> {
  installRuntimeLogging('ERROR');
  const external = process.env.TEMPORAL_ADDRESS;
  let server: DevServer | undefined;
  if (!external) server = await startDevServer({}, process.env);
  const address = external ?? server!.address;
  const serverPid = server?.pid !== undefined ? (childOf(server.pid) ?? server.pid) : undefined;
  const llm = await startOpenAICompatibleServer(model);
  const taskQueue = `scale-${randomUUID()}`;
  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: address,
    OPENAI_BASE_URL: llm.baseURL,
    TASK_QUEUE: taskQueue,
    BENCH_CACHE: String(CACHE),
  };
  const workers: Worker[] = [];
  const { connection, close } = await connectClient({ address });
  const client = new Client({ connection });
  let stopping = false;
  const stopAll = async () => {
    stopping = true;
    for (const w of workers) w.process.kill('SIGKILL');
    await close().catch(() => undefined);
    await llm.close().catch(() => undefined);
    await server?.stop().catch(() => undefined);
  };
  // Ctrl-C, `timeout`'s SIGTERM and a closed terminal stop everything we started (SIGKILL of the
  // bench is covered too: the workers and the dev server's guardian watch their stdin).
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.once(signal, () => void stopAll().then(() => process.exit(130)));
  try {
    for (let i = 0; i < WORKERS; i++) workers.push(await startWorker(env));
    const pids = workers.map((w) => w.process.pid!);
    const rss = () => pids.reduce((a, pid) => a + rssMb(pid), 0);
    process.stderr.write(`${WORKERS} workers up (${rss().toFixed(0)} MB); opening ${CONVERSATIONS} conversations...\n`);

    // Open every conversation: a first message each (idle ones wait for their answer; sleepers
    // and waiters are queued, and their turns go on to a timer or an event).
    const ids = Array.from({ length: CONVERSATIONS }, (_, i) => `scale-${i}-${randomUUID().slice(0, 8)}`);
    const start = { taskQueue, options: OPTIONS };
    let openMs = 0;
    let openFailures = 0;
    const open = async (from: number, to: number) => {
      const began = performance.now();
      await pool(
        ids.slice(from, to).map((id, i) => [id, from + i] as const),
        OPEN_CONCURRENCY,
        async ([id, i]) => {
          const kind = kindOf(i);
          try {
            if (kind === 'idle') await sendMessage(client, id, { message: 'hello' }, start);
            else await queueMessage(client, id, { message: kind === 'sleeper' ? 'sleep' : 'wait' }, start);
          } catch (err) {
            if (++openFailures <= 3) process.stderr.write(`open ${id}: ${(err as Error).message}\n`);
          }
        },
      );
      openMs += performance.now() - began;
    };
    const settle = () => new Promise((r) => setTimeout(r, Math.max(5_000, 3 * DELAY_MS)));
    // The first few warm the workers up (code loaded on first use, caches filled): memory per
    // conversation is measured from there.
    const warm = Math.min(CONVERSATIONS - 1, Math.max(20, Math.round(CONVERSATIONS / 20)));
    await open(0, warm);
    await settle();
    const warmRss = rss();
    const warmCached = sumCache(await Promise.all(workers.map((w) => cacheFigures(w.metricsPort)))).size;
    await open(warm, CONVERSATIONS);
    // The time spent opening, without the pauses for the memory readings.
    const openSeconds = openMs / 1000;
    await settle();
    const openRss = rss();
    // Conversations the workers held after opening (fewer than opened when the cache is smaller):
    // the memory is theirs; the uncached ones cost nothing until they speak.
    const cachedAfterOpen = sumCache(await Promise.all(workers.map((w) => cacheFigures(w.metricsPort)))).size;
    const measured = cachedAfterOpen > warmCached ? cachedAfterOpen - warmCached : CONVERSATIONS - warm;
    process.stderr.write(`opened in ${openSeconds.toFixed(0)} s; a steady ${RATE} turns/s for ${DURATION_S} s...\n`);

    // The steady trickle: turns to idle conversations not in a turn, and events to waiters.
    // Idle conversations not in a turn: each turn goes to one of them at random, so the rate is
    // the target's as long as any is free (skipped only when every one is busy).
    const free = ids.filter((_, i) => kindOf(i) === 'idle');
    const waiters = ids.filter((_, i) => kindOf(i) === 'waiter');
    const latencies: number[] = [];
    /** [sent at (ms into the run), latency]: for the latency's growth over the run. */
    const timeline: Array<[number, number]> = [];
    let failedTurns = 0;
    let skipped = 0;
    const events = { delivered: 0, failed: 0 };
    const failure = (what: string) => {
      // Turns cut short by Ctrl-C are not worth a line each.
      if (++failedTurns <= 3 && !stopping) process.stderr.write(`a turn failed: ${what}\n`);
    };
    const cacheBefore = sumCache(await Promise.all(workers.map((w) => cacheFigures(w.metricsPort))));
    const cpuBefore = cpuNow(pids, serverPid);
    const began = performance.now();
    const turns: Promise<void>[] = [];
    for (let n = 0; performance.now() - began < DURATION_S * 1000; n++) {
      const due = began + (n * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      // One event a second to a waiter: its turn ends when the event arrives.
      if (n % Math.max(1, Math.round(RATE)) === 0 && waiters.length > 0)
        void deliverEvent(client, waiters.pop()!, 'go', { ok: true }).then(
          () => void events.delivered++,
          () => void events.failed++,
        );
      if (free.length === 0) {
        skipped++;
        continue;
      }
      const pick = Math.floor(Math.random() * free.length);
      const id = free[pick];
      free[pick] = free[free.length - 1];
      free.pop();
      const sent = performance.now();
      turns.push(
        sendMessage(client, id, { message: `order A-${n}` }, start)
          .then((r) => {
            if (r.status !== 'completed') return failure(`${id} ended ${r.status}`);
            latencies.push(performance.now() - sent);
            timeline.push([sent - began, performance.now() - sent]);
          })
          .catch((err: Error) => failure(`${id}: ${err.message}`))
          .finally(() => free.push(id)),
      );
    }
    await Promise.all(turns);
    const wall = (performance.now() - began) / 1000;
    const cpuAfter = cpuNow(pids, serverPid);
    const cacheAfter = sumCache(await Promise.all(workers.map((w) => cacheFigures(w.metricsPort))));
    const cores = cpus().length;
    const workerCpuPercent = ((cpuAfter.workers - cpuBefore.workers) / 1000 / wall) * 100;
    const serverCpuPercent = serverPid ? ((cpuAfter.server - cpuBefore.server) / 1000 / wall) * 100 : NaN;
    // The bench itself (the scripted model's HTTP server and the client) shares the cores too.
    const driverCpuPercent = ((cpuAfter.driver - cpuBefore.driver) / 1000 / wall) * 100;
    const machineCpuPercent = ((cpuAfter.machine - cpuBefore.machine) / 1000 / wall) * 100;
    const lookups = cacheAfter.hits - cacheBefore.hits + (cacheAfter.misses - cacheBefore.misses);
    const cacheHitRate = lookups > 0 ? (cacheAfter.hits - cacheBefore.hits) / lookups : NaN;
    const evictions = cacheAfter.forcedEvictions - cacheBefore.forcedEvictions;
    const turnsPerSecond = latencies.length / wall;
    const sentPerSecond = turns.length / wall;
    const latencyGrowth = growth(timeline, DURATION_S * 1000);
    const figures = {
      conversations: CONVERSATIONS,
      workers: WORKERS,
      turnsPerSecond: round(turnsPerSecond, 2),
      targetTurnsPerSecond: RATE,
      p50Ms: Math.round(percentile(latencies, 50)),
      p95Ms: Math.round(percentile(latencies, 95)),
      p99Ms: Math.round(percentile(latencies, 99)),
      failedTurns,
      skippedTurns: skipped,
      openFailures,
      openSeconds: round(openSeconds, 1),
      workerRssMb: Math.round(openRss),
      workerRssMbPer1000: round(((openRss - warmRss) / measured) * 1000, 1),
      rssMeasuredOver: measured,
      cacheHitRate: round(cacheHitRate, 3),
      cachedWorkflows: cacheAfter.size,
      cacheEvictions: evictions,
      eventsDelivered: events.delivered,
      eventsFailed: events.failed,
      workerCpuPercent: round(workerCpuPercent, 0),
      serverCpuPercent: round(serverCpuPercent, 0),
      driverCpuPercent: round(driverCpuPercent, 0),
      machineCpuPercent: round(machineCpuPercent, 0),
      latencyGrowth: round(latencyGrowth, 2),
      cores,
      loadAverage: round(loadavg()[0], 2),
      modelDelayMs: DELAY_MS,
      saturated: saturation({
        workerCpuPercent,
        serverCpuPercent,
        driverCpuPercent,
        machineCpuPercent,
        latencyGrowth,
        cores,
        evictions,
        turnsPerSecond,
        sentPerSecond,
        p95: percentile(latencies, 95),
      }),
    };
    report(figures);
    console.log(JSON.stringify(figures));
  } finally {
    await stopAll();
  }
}

/** The first resource to run out, going by the figures (a judgement, said as one). */
function saturation(f: {
  workerCpuPercent: number;
  serverCpuPercent: number;
  driverCpuPercent: number;
  machineCpuPercent: number;
  latencyGrowth: number;
  cores: number;
  evictions: number;
  turnsPerSecond: number;
  sentPerSecond: number;
  p95: number;
}): string {
  const capacity = f.cores * 100;
  // All of it: on one machine the bench's own CPU is CPU the server and the workers do not get.
  const used = f.workerCpuPercent + (Number.isNaN(f.serverCpuPercent) ? 0 : f.serverCpuPercent) + f.driverCpuPercent;
  if (f.evictions > 0)
    return 'workflow cache: conversations were evicted and rebuilt from history (raise maxCachedWorkflows)';
  if (used > 0.8 * capacity)
    return f.serverCpuPercent > f.workerCpuPercent
      ? `CPU, by the Temporal server (${f.serverCpuPercent.toFixed(0)}% of ${capacity}%)`
      : `CPU, by the workers (${f.workerCpuPercent.toFixed(0)}% of ${capacity}%)`;
  // The machine's cores were busy, but not with us: the figures are a busy machine's, not ours.
  if (f.machineCpuPercent > 0.8 * capacity)
    return `CPU, by other processes on this machine (${(f.machineCpuPercent - used).toFixed(0)}% of ${capacity}%; the figures are not this system's)`;
  if (f.turnsPerSecond < 0.9 * f.sentPerSecond) return 'turns: fewer completed than were sent (failures or a backlog)';
  if (f.latencyGrowth > 1.5)
    return `latency: the median grew ${f.latencyGrowth.toFixed(1)}x over the run (turns arrive faster than they finish)`;
  if (f.p95 > 4 * 2 * DELAY_MS) return 'latency: turns waited for workflow tasks (p95 over 4x the model time)';
  return `nothing at this load (CPU ${used.toFixed(0)}% of ${capacity}%)`;
}

function round(value: number, digits: number): number {
  return Number.isFinite(value) ? Number(value.toFixed(digits)) : value;
}

function report(f: Record<string, unknown>): void {
  const rows: Array<[string, unknown]> = [
    ['open conversations', `${f.conversations} over ${f.workers} workers (10% sleeping, 10% waiting for an event)`],
    ['opened in', `${f.openSeconds} s (${f.openFailures} failed)`],
    [
      'turns/s (target)',
      `${f.turnsPerSecond} (${f.targetTurnsPerSecond}); ${f.skippedTurns} skipped (conversation busy)`,
    ],
    [
      'turn latency p50 / p95 / p99',
      `${f.p50Ms} / ${f.p95Ms} / ${f.p99Ms} ms (2 model calls of ~${f.modelDelayMs} ms)`,
    ],
    ['failed turns', f.failedTurns],
    [
      'worker RSS',
      `${f.workerRssMb} MB; ${f.workerRssMbPer1000} MB per 1,000 cached conversations (over ${f.rssMeasuredOver}${Number(f.rssMeasuredOver) < 500 ? ': too few, noisy' : ''})`,
    ],
    ['workflow cache', `hit rate ${f.cacheHitRate}, ${f.cachedWorkflows} cached, ${f.cacheEvictions} evicted`],
    [
      'CPU',
      `workers ${f.workerCpuPercent}%, server ${f.serverCpuPercent}%, bench ${f.driverCpuPercent}%; machine ${f.machineCpuPercent}% (of ${Number(f.cores) * 100}%)`,
    ],
    ['events to waiters', `${f.eventsDelivered} delivered, ${f.eventsFailed} failed`],
    ['latency, last / first quarter', `${f.latencyGrowth}x (the median's growth over the run)`],
    ['saturated first', f.saturated],
  ];
  for (const [k, v] of rows) console.log(`${k.padEnd(30)} ${v}`);
}

main().then(
  // The SDK's runtime keeps the process alive; the bench is done.
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
