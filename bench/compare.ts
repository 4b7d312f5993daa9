/**
 * `npm run bench`: durable-agents next to @temporalio/ai-sdk (with the AI SDK `ai` 7 and
 * `@ai-sdk/openai-compatible` 3, in bench/peer), on one dev server with one scripted
 * OpenAI-compatible model, in one run. Both agents do the same job: call `fetch_doc` (2 KB of
 * text) once per step until the model answers. Ours declares the tool `local` (it is fast and
 * local: a local activity); one row shows ours with the same tool as a normal activity. Each worker runs in its own process so its CPU
 * can be measured. The systems take turns (the order alternates), each figure is the median of
 * BENCH_REPEATS rounds (default 3), and the ratios are the figures to read: the machine is noisy.
 * The step times take turns run by run (BENCH_LATENCY_RUNS, BENCH_IDEAL_RUNS per round) and the
 * runs in flight batch by batch (BENCH_THROUGHPUT_BATCHES per round), since the machine's speed
 * drifts within minutes and a ratio of two figures taken minutes apart drifts too.
 * A third worker takes its turns with them: Temporal alone (bench/floor), a workflow of the same
 * shape doing nothing, so the table can say what the engine itself costs at that moment; and the
 * same with each model call making the model's HTTP request (and nothing else), which is as fast
 * as any agent on this engine talking to a model over HTTP can be on this machine at that moment.
 *
 * A "K-step run" makes K model calls: K - 1 tool steps, then the answer.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { Client, type WorkflowHandle } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { startOpenAICompatibleServer } from '../src/testing/openai-compatible-server';
import { connectClient } from '../src/connection/client-connection';
import { freePort, startDevServer } from '../src/connection/dev-server';
import { installRuntimeLogging } from '../src/telemetry/logging';
import { startAgentRun } from '../src/client/run-agent';
import { adapterOverhead } from './adapter-overhead';
import { promptPrefix } from './prompt-prefix';
import { memoryBench } from './memory';
import { longRun } from './long-run';
import { manySteps } from './many-steps';
import { protocolLatency, type ProtocolLatencies } from './protocol-latency';
import { chatLatency, chatLatencyTable, type ChatLatencies } from './chat-latency';
import { fleetLatency, fleetLatencyTable, type FleetLatencies } from './fleet-latency';
import { measureWorkerStart, type WorkerStartFigures } from './worker-start';
import { node24 } from '../test/helpers/node24';
import { isTurnEnd, streamEvents } from '../src/client/event-stream';

const ROOT = join(__dirname, '..');
const PEER = join(__dirname, 'peer');
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 50);
/** BENCH_QUICK=1: only the step-time figures (for working on speed; the table is incomplete). */
const QUICK = process.env.BENCH_QUICK === '1';
const HISTORY_STEPS = QUICK ? [10] : [10, 30, 60];
/** Words in the streamed answer of the streaming figures. */
const STREAM_WORDS = Number(process.env.BENCH_STREAM_WORDS ?? 200);
/** Requests per case and system of the chat latency figures (`bench/chat-latency.ts`). */
const CHAT_RUNS = Number(process.env.BENCH_CHAT_RUNS ?? 20);
/** Turns per case and system of the production topology's figures (`bench/fleet-latency.ts`). */
const FLEET_RUNS = Number(process.env.BENCH_FLEET_RUNS ?? 10);
/** 10-step runs (0 ms model) per system per round for the step time; 10-step runs with a 200 ms model for actual / ideal. */
const LATENCY_RUNS = Number(process.env.BENCH_LATENCY_RUNS ?? 5);
const IDEAL_RUNS = Number(process.env.BENCH_IDEAL_RUNS ?? 3);
/** Batches of CONCURRENT runs per system per round for the runs in flight, the systems taking turns batch by batch. */
const THROUGHPUT_BATCHES = Number(process.env.BENCH_THROUGHPUT_BATCHES ?? 2);
const CLOCK_TICK_MS = 1000 / Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim() || 100);

/** One system under test: how to start its agent and where its worker runs. */
interface System {
  name: string;
  taskQueue: string;
  worker: ChildProcess;
  start(client: Client, message: string, steps: number): Promise<WorkflowHandle>;
  /** Whether it also has the tool as a normal activity (`fetch_doc_activity`); ours is local. */
  activityTool?: boolean;
}

/** What one round measures for one system. */
interface Figures {
  historyBytes: Record<number, number>;
  msPerStep: number;
  /** ms per step with the tool as a normal activity (the peer's tool always is one). */
  msPerStepActivityTool: number;
  idealRatio: number;
  runsPerSecond: number;
  p50: number;
  p95: number;
  workerCpuMs: number;
  serverCpuMs: number;
  actionsPerToolStep: number;
  actionBreakdown: Record<string, number>;
  /** Where a step's time goes, from the 10-step run's history (ms per step). */
  timeBreakdown: Record<string, number>;
}

async function main(): Promise<void> {
  installRuntimeLogging('ERROR');
  ensurePeerInstalled();
  const metricsPort = await freePort();
  const server = await startDevServer({ metricsPort }, process.env);
  const serverPid = childOf(server.pid!);
  const model = await startOpenAICompatibleServer(scriptedModel);
  // Histories of the peer's long runs pass gRPC's default 4 MB message limit.
  const { connection, close } = await connectClient({
    address: server.address,
    channelArgs: { 'grpc.max_receive_message_length': 256 * 1024 * 1024 },
  });
  const client = new Client({ connection });
  const env = { ...process.env, TEMPORAL_ADDRESS: server.address, OPENAI_BASE_URL: model.baseURL };
  const systems: System[] = [
    {
      name: 'durable-agents',
      taskQueue: 'bench-ours',
      worker: await startWorker(
        process.execPath,
        ['--import', 'tsx', 'bench/ours-worker.ts'],
        { ...env, TASK_QUEUE: 'bench-ours' },
        /ours worker ready/,
      ),
      start: (c, message, steps) =>
        startAgentRun(c, { message, tools: [toolOf(message)], maxIterations: steps }, { taskQueue: 'bench-ours' }),
      activityTool: true,
    },
    {
      name: '@temporalio/ai-sdk',
      taskQueue: 'bench-peer',
      worker: await startWorker(
        process.execPath,
        [join(PEER, 'worker.js')],
        { ...env, TASK_QUEUE: 'bench-peer' },
        /peer worker ready/,
      ),
      start: (c, message, steps) =>
        c.workflow.start('peerAgent', {
          taskQueue: 'bench-peer',
          workflowId: `peer-${randomUUID()}`,
          args: [message, steps],
        }),
    },
  ];
  // Not compared with: what the engine alone costs for the same shape of run, now, on this machine.
  const floorWorker = await startWorker(
    process.execPath,
    ['--import', 'tsx', 'bench/floor/worker.ts'],
    { ...env, TASK_QUEUE: 'bench-floor' },
    /floor worker ready/,
  );
  const floor: System = {
    name: 'Temporal alone',
    taskQueue: 'bench-floor',
    worker: floorWorker,
    start: (c, message, steps) =>
      c.workflow.start('floorRun', {
        taskQueue: 'bench-floor',
        workflowId: `floor-${randomUUID()}`,
        args: [steps, delayOf(message)],
      }),
  };
  const floorHttp: System = {
    ...floor,
    name: 'Temporal alone + HTTP',
    start: (c, message, steps) =>
      c.workflow.start('floorRun', {
        taskQueue: 'bench-floor',
        workflowId: `floor-http-${randomUUID()}`,
        args: [steps, delayOf(message), message],
      }),
  };
  const floorResults: LatencyFigures[] = [];
  const floorHttpResults: LatencyFigures[] = [];
  const results = new Map<string, Figures[]>(systems.map((s) => [s.name, []]));
  const streaming: StreamFigures[] = [];
  const protocols: ProtocolLatencies[] = [];
  let starts: WorkerStartFigures | undefined;
  let chat: ChatLatencies | undefined;
  let fleet: FleetLatencies | undefined;
  try {
    // First, while the machine is quiet: the rounds below keep both CPUs busy for minutes.
    process.stderr.write('worker start to first poll, cold and warm...\n');
    starts = await measureWorkerStart(client, env, join(PEER, 'worker.js'), 5);
    for (let round = 0; round < REPEATS; round++) {
      const order = round % 2 === 0 ? systems : [...systems].reverse();
      process.stderr.write(`round ${round + 1}/${REPEATS}: step times, the systems taking turns run by run...\n`);
      const latency = await measureLatency(client, [...order, floor, floorHttp]); // measureLatency alternates the order run by run
      floorResults.push(latency.get(floor.name)!);
      floorHttpResults.push(latency.get(floorHttp.name)!);
      process.stderr.write(
        `round ${round + 1}/${REPEATS}: ${CONCURRENT} runs in flight, the systems taking turns batch by batch...\n`,
      );
      const throughput = QUICK ? undefined : await measureThroughput(client, order, serverPid);
      for (const system of order) {
        process.stderr.write(`round ${round + 1}/${REPEATS}: ${system.name}...\n`);
        results.get(system.name)!.push({
          ...(await measure(client, system, metricsPort)),
          ...latency.get(system.name)!,
          ...(throughput?.get(system.name) ?? UNMEASURED),
        });
      }
      process.stderr.write(`round ${round + 1}/${REPEATS}: streaming...\n`);
      streaming.push(await measureStreaming(client, env));
      process.stderr.write(`round ${round + 1}/${REPEATS}: the HTTP API's streams (SSE, useChat, AG-UI)...\n`);
      protocols.push(await protocolLatency(client, 'bench-ours', STREAM_WORDS, (tag) => piecesSent[tag]));
    }
    if (!QUICK) {
      process.stderr.write('the durability tax at the screen: POST /api/chat beside a plain AI SDK route...\n');
      chat = await chatLatency(server.address, CHAT_RUNS);
      process.stderr.write(
        'the same in the production topology: two API replicas, two workers, Redis, the engine on disk...\n',
      );
      fleet = await fleetLatency(FLEET_RUNS);
    }
  } finally {
    for (const s of [...systems, floor]) s.worker.kill('SIGKILL'); // floorHttp shares floor's worker
    await close();
    await model.close();
    await server.stop();
  }
  report(
    systems.map((s) => s.name),
    results,
    floorResults,
    floorHttpResults,
  );
  reportStreaming(streaming);
  reportProtocols(protocols);
  const met = starts.warmMs <= 1_500 ? 'met' : 'NOT MET';
  console.log(
    `\nWorker start to first poll: durable-agents cold ${starts.coldMs.toFixed(0)} ms (bundles, then caches), warm ${starts.warmMs.toFixed(0)} ms (target: at most 1,500, ${met}); @temporalio/ai-sdk ${starts.peerMs.toFixed(0)} ms (bundles at every start)`,
  );
  if (chat) {
    console.log(
      '\nThe durability tax at the screen (ours: `durable-agents serve`, its worker in the process; plain: `streamText` + `toUIMessageStreamResponse`):\n',
    );
    console.log(chatLatencyTable(chat));
  }
  if (fleet) {
    console.log(
      '\nThe production topology (two `serve --no-worker`, two workers, AGENT_LIVE_URL on Redis, the engine on disk) beside the plain route:\n',
    );
    console.log(fleetLatencyTable(fleet));
  }
  await adapterOverhead();
  policyDecisions();
  await promptPrefix();
  await memoryBench();
  longConversation();
  await longRun();
  await manySteps();
}

/**
 * bench/policies.ts, on Node 24 (from PyPI, as the tests get it): Cedar's engine under Node 20's
 * V8 sometimes crashes the process in a tight loop of decisions (see docs/policies.md).
 */
function policyDecisions(): void {
  const run = spawnSync(node24(), ['--import', 'tsx', join(__dirname, 'policies.ts')], { encoding: 'utf8' });
  process.stdout.write(run.stdout || `policies: the bench did not run (${run.status}): ${run.stderr}\n`);
}

/**
 * The long conversation (`npm run long-conversation`), BENCH_LONG_TURNS turns (default 10,000)
 * with memory by tokens: time per turn (target: at most 50 ms on this machine), the largest prompt
 * (flat), and the history of the current run (bounded by continue-as-new).
 */
function longConversation(): void {
  const turns = Number(process.env.BENCH_LONG_TURNS ?? 10_000);
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'scripts', 'long-conversation.ts'), '--turns', String(turns)],
    {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, TEMPORAL_ADDRESS: '' },
    },
  );
  const line = run.stdout.split('\n').find((l) => l.startsWith('LONG_CONVERSATION '));
  console.log('');
  if (run.status !== 0 || !line) {
    console.log(`Long conversation: failed (exit ${run.status}): ${run.stderr.trim().split('\n').slice(-3).join(' ')}`);
    return;
  }
  const r = JSON.parse(line.slice('LONG_CONVERSATION '.length));
  console.log(
    `Long conversation: ${r.turns} turns, ${r.msPerTurn.toFixed(1)} ms per turn (target: at most 50), largest prompt ${r.largestPrompt} tokens (maxPromptTokens 2,000), ${r.summaries} summaries, ${r.runs} workflow runs, ${r.historyLength} history events in the last`,
  );
}

/** A run of `steps` model calls with a model answering after `delayMs`, and how long it took. */
async function timedRun(client: Client, system: System, steps: number, delayMs = 0, tool = 'fetch_doc') {
  const started = performance.now();
  const handle = await system.start(client, `read ${steps} pages; delay ${delayMs} ms; tool ${tool}`, steps);
  await handle.result();
  return { ms: performance.now() - started, handle };
}

/** The step-time figures of one round. */
type LatencyFigures = Pick<Figures, 'msPerStep' | 'msPerStepActivityTool' | 'idealRatio' | 'timeBreakdown'>;
type ThroughputFigures = Pick<Figures, 'runsPerSecond' | 'p50' | 'p95' | 'workerCpuMs' | 'serverCpuMs'>;
/** The throughput figures of a BENCH_QUICK run, which skips them. */
const UNMEASURED: ThroughputFigures = { runsPerSecond: NaN, p50: NaN, p95: NaN, workerCpuMs: NaN, serverCpuMs: NaN };

/**
 * The step-time figures of every system, measured run by run in turns (ours, the peer's, ours,
 * ...; the order alternating from one run to the next), so that a change in the machine's speed
 * (it is shared, and its speed drifts within minutes) weighs on both systems alike.
 */
async function measureLatency(client: Client, systems: System[]): Promise<Map<string, LatencyFigures>> {
  for (const system of systems) await timedRun(client, system, 3); // warm-up: bundles loaded, caches filled
  const perStep = new Map(systems.map((s) => [s.name, [] as number[]]));
  const perStepActivityTool = new Map(systems.map((s) => [s.name, [] as number[]]));
  const ideal = new Map(systems.map((s) => [s.name, [] as number[]]));
  const breakdowns = new Map(systems.map((s) => [s.name, [] as Record<string, number>[]]));
  for (let i = 0; i < LATENCY_RUNS; i++) {
    const order = i % 2 === 0 ? systems : [...systems].reverse();
    for (const system of order) {
      const { ms, handle } = await timedRun(client, system, 10);
      perStep.get(system.name)!.push(ms / 10);
      breakdowns.get(system.name)!.push(timeBreakdown(await handle.fetchHistory(), 10));
      if (system.activityTool)
        perStepActivityTool
          .get(system.name)!
          .push((await timedRun(client, system, 10, 0, 'fetch_doc_activity')).ms / 10);
    }
  }
  for (let i = 0; i < IDEAL_RUNS; i++) {
    const order = i % 2 === 0 ? systems : [...systems].reverse();
    for (const system of order) ideal.get(system.name)!.push((await timedRun(client, system, 10, 200)).ms / (10 * 200));
  }
  const figures = new Map<string, LatencyFigures>();
  for (const system of systems) {
    const runs = breakdowns.get(system.name)!;
    const timeBreakdown_: Record<string, number> = {};
    for (const key of Object.keys(runs[0])) timeBreakdown_[key] = median(runs.map((b) => b[key]));
    const msPerStep = median(perStep.get(system.name)!);
    const f: LatencyFigures = {
      msPerStep,
      msPerStepActivityTool: system.activityTool ? median(perStepActivityTool.get(system.name)!) : msPerStep,
      idealRatio: median(ideal.get(system.name)!),
      timeBreakdown: timeBreakdown_,
    };
    figures.set(system.name, f);
    process.stderr.write(
      `  ${system.name}: ${f.msPerStep.toFixed(1)} ms per step, actual / ideal ${f.idealRatio.toFixed(2)}\n`,
    );
  }
  return figures;
}

/**
 * The figures of many runs in flight (CONCURRENT at once): runs per second, run latency, and CPU
 * per run of the system's worker and of the dev server. The systems take turns batch by batch,
 * the order alternating, and each system's batches are added up: a batch takes seconds, and the
 * machine's speed (and with it the CPU a run takes) drifts from one minute to the next.
 */
async function measureThroughput(
  client: Client,
  systems: System[],
  serverPid: number,
): Promise<Map<string, ThroughputFigures>> {
  const totals = new Map(
    systems.map((s) => [s.name, { wallMs: 0, runs: 0, latencies: [] as number[], workerCpuMs: 0, serverCpuMs: 0 }]),
  );
  for (let batch = 0; batch < THROUGHPUT_BATCHES; batch++) {
    for (const system of batch % 2 === 0 ? systems : [...systems].reverse()) {
      const total = totals.get(system.name)!;
      const workerBefore = cpuMs(system.worker.pid!);
      const serverBefore = cpuMs(serverPid);
      const began = performance.now();
      const ends = await Promise.all(
        Array.from({ length: CONCURRENT }, async () => {
          const started = performance.now();
          const handle = await system.start(client, 'read 5 pages; delay 0 ms; tool fetch_doc', 5);
          await handle.result();
          return performance.now() - started;
        }),
      );
      total.wallMs += performance.now() - began;
      total.runs += CONCURRENT;
      total.latencies.push(...ends);
      total.workerCpuMs += cpuMs(system.worker.pid!) - workerBefore;
      total.serverCpuMs += cpuMs(serverPid) - serverBefore;
    }
  }
  const figures = new Map<string, ThroughputFigures>();
  for (const [name, total] of totals) {
    const f: ThroughputFigures = {
      runsPerSecond: total.runs / (total.wallMs / 1000),
      p50: percentile(total.latencies, 50),
      p95: percentile(total.latencies, 95),
      workerCpuMs: total.workerCpuMs / total.runs,
      serverCpuMs: total.serverCpuMs / total.runs,
    };
    figures.set(name, f);
    // Each round's throughput on stderr: the table shows medians, this shows how much they vary.
    process.stderr.write(
      `  ${name}: ${f.runsPerSecond.toFixed(1)} runs/s, worker CPU ${f.workerCpuMs.toFixed(0)} ms and dev-server CPU ${f.serverCpuMs.toFixed(0)} ms per run\n`,
    );
  }
  return figures;
}

/** One round of the other figures for one system: history sizes and billable actions. */
async function measure(
  client: Client,
  system: System,
  metricsPort: number,
): Promise<Omit<Figures, keyof LatencyFigures | keyof ThroughputFigures>> {
  // No warm-up: the step times and the runs in flight ran before, on the same workers.
  const run = (steps: number, delayMs = 0, tool = 'fetch_doc') => timedRun(client, system, steps, delayMs, tool);

  const historyBytes: Record<number, number> = {};
  for (const steps of HISTORY_STEPS) {
    const { handle } = await run(steps);
    historyBytes[steps] = proto.api.history.v1.History.encode(await handle.fetchHistory()).finish().length;
  }

  // Billable actions: the marginal cost of a tool step, from a 10-step run minus a 1-step run.
  const actions = async (steps: number) => {
    const before = await serverRequests(metricsPort);
    const { handle } = await run(steps);
    await new Promise((r) => setTimeout(r, 300)); // let the last heartbeats land
    const after = await serverRequests(metricsPort);
    return countActions(await handle.fetchHistory(), before, after);
  };
  if (QUICK) return { historyBytes, actionsPerToolStep: NaN, actionBreakdown: {} };
  const one = await actions(1);
  const ten = await actions(10);
  const actionBreakdown: Record<string, number> = {};
  for (const key of Object.keys(ten)) actionBreakdown[key] = (ten[key] - (one[key] ?? 0)) / 9;
  const actionsPerToolStep = Object.values(actionBreakdown).reduce((a, b) => a + b, 0);

  return { historyBytes, actionsPerToolStep, actionBreakdown };
}

/** When the model server wrote each piece of a streamed answer, by run. */
const piecesSent: Record<string, number[]> = {};

/** What streaming costs and how fast text reaches a subscriber (ours; one answer per run). */
interface StreamFigures {
  onBytes: number;
  /** With three subscribers instead of one. */
  onBytes3: number;
  offBytes: number;
  textBytes: number;
  signals: number;
  latencies: number[];
  peer: { bytes: number; bytes3: number; signals: number; updates: number; updates3: number; latencies: number[] };
}

/**
 * One answer of STREAM_WORDS words written over ~STREAM_WORDS × 20 ms, with streaming on (a
 * subscriber reading it live) and off: history bytes, signals, and for every piece the time from
 * the model server writing it to the subscriber receiving it.
 */
async function measureStreaming(client: Client, env: NodeJS.ProcessEnv): Promise<StreamFigures> {
  const words = STREAM_WORDS;
  const id = randomUUID();
  const start = (stream: boolean, tag: string) =>
    startAgentRun(
      client,
      { message: `stream ${words} words; delay 20 ms; id ${tag}`, tools: [], stream },
      { taskQueue: 'bench-ours' },
    );
  const read = async (workflowId: string, record?: number[]) => {
    for await (const e of streamEvents(client, workflowId, { after: -1, until: (e) => isTurnEnd(e) })) {
      if (e.type === 'text_delta' && record) for (let i = 0; i < e.delta.length; i++) record.push(performance.now());
    }
  };
  const on = await start(true, id);
  const received: number[] = []; // per character of the answer: when it arrived
  await Promise.all([read(on.workflowId, received), on.result()]);
  const on3 = await start(true, `${id}-3`);
  await Promise.all([read(on3.workflowId), read(on3.workflowId), read(on3.workflowId), on3.result()]);
  const history = await on.fetchHistory();
  const signals = history.events!.filter(
    (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'agentText',
  ).length;
  const sent = piecesSent[id];
  const latencies: number[] = [];
  let end = 0;
  for (let i = 0; i < words; i++) {
    end += `word${i} `.length;
    latencies.push(received[end - 1] - sent[i]);
  }
  const off = await start(false, `${id}-off`);
  await off.result();
  const bytes = async (h: WorkflowHandle) =>
    proto.api.history.v1.History.encode(await h.fetchHistory()).finish().length;
  const text = Array.from({ length: words }, (_, i) => `word${i} `).join('');
  const peer = (subscribers: number) => {
    const r = spawnSync(process.execPath, [join(PEER, 'streams-run.js'), String(words), '20', String(subscribers)], {
      env: { ...env, TASK_QUEUE: 'bench-peer' },
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`the workflow-streams run failed:\n${r.stdout}\n${r.stderr}`);
    return JSON.parse(r.stdout) as { bytes: number; signals: number; updates: number; latencies: number[] };
  };
  const one = peer(1);
  const three = peer(3);
  return {
    onBytes: await bytes(on),
    onBytes3: await bytes(on3),
    offBytes: await bytes(off),
    textBytes: Buffer.byteLength(text),
    signals,
    latencies,
    peer: {
      bytes: one.bytes,
      bytes3: three.bytes,
      signals: one.signals,
      updates: one.updates,
      updates3: three.updates,
      latencies: one.latencies,
    },
  };
}

function reportStreaming(rounds: StreamFigures[]): void {
  const med = (pick: (f: StreamFigures) => number) => median(rounds.map(pick));
  const ours = rounds.flatMap((r) => r.latencies);
  const peer = rounds.flatMap((r) => r.peer.latencies);
  const overhead = med((f) => (f.onBytes - f.offBytes - f.textBytes) / Math.max(1, f.signals));
  const ms = (all: number[]) => `${percentile(all, 50).toFixed(0)} / ${percentile(all, 95).toFixed(0)} ms`;
  console.log(
    `\nStreaming: one ${STREAM_WORDS}-word answer (${med((f) => f.textBytes)} bytes) written over ~${(STREAM_WORDS * 20) / 1000} s, batches every 100 ms; median of ${rounds.length}.`,
  );
  console.log(
    'Ours: the agent workflow with a streamed model call. Peer: @temporalio/workflow-streams 1.23 (an activity publishing the same pieces; no model call).',
  );
  console.log(`| figure | durable-agents | workflow-streams |\n|---|---|---|`);
  console.log(`| history bytes, streaming off | ${med((f) => f.offBytes)} | |`);
  console.log(`| history bytes, 1 subscriber | ${med((f) => f.onBytes)} | ${med((f) => f.peer.bytes)} |`);
  console.log(`| history bytes, 3 subscribers | ${med((f) => f.onBytes3)} | ${med((f) => f.peer.bytes3)} |`);
  console.log(`| signals (batches) | ${med((f) => f.signals)} | ${med((f) => f.peer.signals)} |`);
  console.log(
    `| updates (subscriber polls), 1 / 3 subscribers | 0 / 0 | ${med((f) => f.peer.updates)} / ${med((f) => f.peer.updates3)} |`,
  );
  console.log(`| our history overhead per batch beyond its text | ${overhead.toFixed(0)} bytes | |`);
  console.log(`| piece written → subscriber has it, p50 / p95 | ${ms(ours)} | ${ms(peer)} |`);
}

function reportProtocols(rounds: ProtocolLatencies[]): void {
  type Door = 'sse' | 'ui' | 'agui';
  const all = (kind: Door) => rounds.flatMap((r) => r[kind]);
  const p = (kind: Door, q: number) => percentile(all(kind), q);
  const row = (name: string, kind: Door) => {
    const vs = p(kind, 50) / Math.max(1, p('sse', 50));
    console.log(
      `| ${name} | ${p(kind, 50).toFixed(0)} ms | ${p(kind, 95).toFixed(0)} ms | ${kind === 'sse' ? '' : `${vs.toFixed(2)} ${vs <= 1.1 ? 'met' : 'NOT MET'}`} |`,
    );
  };
  console.log(
    `\nThe HTTP API's streams: the same ${STREAM_WORDS}-word answer in a new conversation through each door; a word written by the model → the client has it (all rounds). Target: each protocol within 10% of our own SSE (p50).`,
  );
  console.log('| door | p50 | p95 | p50 / our SSE (≤ 1.10) |\n|---|---|---|---|');
  row('our SSE (`POST /conversations/:id/messages`)', 'sse');
  row('AI SDK UI message stream (`POST /api/chat`)', 'ui');
  row('AG-UI (`POST /ag-ui`)', 'agui');
  const runs = rounds.flatMap((r) => r.roundTrip.runs);
  const a2a = rounds.flatMap((r) => r.roundTrip.a2a);
  const vs = percentile(a2a, 50) / Math.max(1, percentile(runs, 50));
  console.log(
    `\nA one-step run of a named agent, request to answer (${runs.length} each, taking turns). Target: A2A within 10% of \`POST /runs\` (p50).`,
  );
  console.log('| door | p50 | p95 | p50 / `POST /runs` (≤ 1.10) |\n|---|---|---|---|');
  console.log(`| \`POST /runs\` | ${percentile(runs, 50).toFixed(0)} ms | ${percentile(runs, 95).toFixed(0)} ms | |`);
  const turns = rounds.flatMap((r) => r.roundTrip.turns);
  console.log(
    `| \`POST /conversations/:id/messages\` (a new conversation's turn: what an A2A task is) | ${percentile(turns, 50).toFixed(0)} ms | ${percentile(turns, 95).toFixed(0)} ms | ${(percentile(turns, 50) / Math.max(1, percentile(runs, 50))).toFixed(2)} |`,
  );
  console.log(
    `| A2A \`SendMessage\` (JSON-RPC) | ${percentile(a2a, 50).toFixed(0)} ms | ${percentile(a2a, 95).toFixed(0)} ms | ${vs.toFixed(2)} ${vs <= 1.1 ? 'met' : 'NOT MET'} |`,
  );
}

/** The tool a bench message asks for. */
function toolOf(message: string): string {
  return /; tool (\w+)/.exec(message)?.[1] ?? 'fetch_doc';
}

/** The model's delay a run's message asks for (`delay D ms`). */
function delayOf(message: string): number {
  return Number(/delay (\d+) ms/.exec(message)?.[1] ?? 0);
}

/**
 * The scripted model both systems talk to. The user message says how many model calls the run
 * makes, how long each takes and (optionally) which tool it calls: `read K pages; delay D ms; tool T`.
 */
async function scriptedModel(request: { messages: Array<{ role: string; content?: unknown }> }) {
  const user = String(request.messages.find((m) => m.role === 'user')?.content ?? '');
  const streamed = /^stream (\d+) words; delay (\d+) ms; id (\S+)/.exec(user);
  if (streamed) {
    const pieces = Array.from({ length: Number(streamed[1]) }, (_, i) => `word${i} `);
    const sent = (piecesSent[streamed[3]] = [] as number[]);
    return {
      content: pieces.join(''),
      chunks: pieces,
      chunkDelayMs: Number(streamed[2]),
      onPiece: (i: number) => (sent[i] = performance.now()),
    };
  }
  const [, steps, delay] = /read (\d+) pages; delay (\d+) ms/.exec(user) ?? ['', '1', '0'];
  const tool = toolOf(user);
  if (Number(delay) > 0) await new Promise((r) => setTimeout(r, Number(delay)));
  const done = request.messages.filter((m) => m.role === 'tool').length;
  if (done < Number(steps) - 1) return { toolCalls: [{ name: tool, arguments: { page: done + 1 } }] };
  return { content: `read ${done} pages` };
}

/**
 * Temporal Cloud's billable actions in a run, by kind: from its history (workflow start, activity
 * attempts, local activities, timers, child workflows, signals, updates, search attribute upserts) and from the server's
 * request counters (recorded heartbeats and queries, which leave no event).
 */
function countActions(
  history: proto.api.history.v1.IHistory,
  before: Map<string, number>,
  after: Map<string, number>,
): Record<string, number> {
  const counts: Record<string, number> = {
    workflow: 0,
    activities: 0,
    localActivities: 0,
    timers: 0,
    childWorkflows: 0,
    signals: 0,
    updates: 0,
    upserts: 0,
    heartbeats: 0,
    queries: 0,
  };
  for (const e of history.events ?? []) {
    if (e.workflowExecutionStartedEventAttributes) counts.workflow++;
    if (e.activityTaskScheduledEventAttributes) counts.activities++;
    if (e.activityTaskStartedEventAttributes)
      counts.activities += (e.activityTaskStartedEventAttributes.attempt ?? 1) - 1;
    if (e.markerRecordedEventAttributes?.markerName === 'core_local_activity') counts.localActivities++;
    if (e.timerStartedEventAttributes) counts.timers++;
    if (e.startChildWorkflowExecutionInitiatedEventAttributes) counts.childWorkflows++;
    if (e.workflowExecutionSignaledEventAttributes) counts.signals++;
    if (e.workflowExecutionUpdateAcceptedEventAttributes) counts.updates++;
    // Search attribute upserts are billed, except TemporalChangeVersion (written by `patched`).
    const upserted = Object.keys(
      e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {},
    );
    if (upserted.some((name) => name !== 'TemporalChangeVersion')) counts.upserts++;
  }
  const delta = (op: string) => (after.get(op) ?? 0) - (before.get(op) ?? 0);
  counts.heartbeats = delta('RecordActivityTaskHeartbeat') + delta('RecordActivityTaskHeartbeatById');
  counts.queries = delta('QueryWorkflow');
  return counts;
}

/**
 * Where the time of a run goes, per model call, from its history: workflow tasks waiting for a
 * worker and being processed, activities waiting for a worker and running, local activities
 * (timed by their markers' workflow tasks), and whatever is left (start and result delivery).
 */
function timeBreakdown(history: proto.api.history.v1.IHistory, steps: number): Record<string, number> {
  const t = (e: proto.api.history.v1.IHistoryEvent) =>
    Number(e.eventTime!.seconds) * 1000 + (e.eventTime!.nanos ?? 0) / 1e6;
  const events = history.events ?? [];
  const byId = new Map(events.map((e) => [Number(e.eventId), e]));
  const out = {
    'workflow task wait': 0,
    'workflow task processing': 0,
    'activity wait': 0,
    'activity running': 0,
    total: 0,
  };
  for (const e of events) {
    if (e.workflowTaskStartedEventAttributes)
      out['workflow task wait'] += t(e) - t(byId.get(Number(e.workflowTaskStartedEventAttributes.scheduledEventId))!);
    if (e.workflowTaskCompletedEventAttributes)
      out['workflow task processing'] +=
        t(e) - t(byId.get(Number(e.workflowTaskCompletedEventAttributes.startedEventId))!);
    if (e.activityTaskStartedEventAttributes)
      out['activity wait'] += t(e) - t(byId.get(Number(e.activityTaskStartedEventAttributes.scheduledEventId))!);
    if (e.activityTaskCompletedEventAttributes)
      out['activity running'] += t(e) - t(byId.get(Number(e.activityTaskCompletedEventAttributes.startedEventId))!);
  }
  out.total = t(events[events.length - 1]) - t(events[0]);
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, v / steps]));
}

/** The dev server's frontend requests so far, by operation (its Prometheus counters). */
async function serverRequests(metricsPort: number): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const counts = new Map<string, number>();
  for (const m of text.matchAll(/^service_requests\{([^}]*)\} (\d+(?:\.\d+)?)/gm)) {
    const op = /operation="(\w+)"/.exec(m[1])?.[1];
    if (op && m[1].includes('service_name="frontend"')) counts.set(op, (counts.get(op) ?? 0) + Number(m[2]));
  }
  return counts;
}

/** A process's CPU time so far (user + system), from /proc. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_MS;
}

/** The one child process of `pid` (the dev server under its guardian). */
function childOf(pid: number): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
      if (ppid === pid) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no child process of ${pid}`);
}

async function startWorker(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<ChildProcess> {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  for (const deadline = Date.now() + 120_000; !ready.test(out);) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${args.join(' ')} did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return child;
}

/** The peer lives in bench/peer with its own dependencies; they are installed on first use. */
function ensurePeerInstalled(): void {
  if (
    existsSync(join(PEER, 'node_modules', '@temporalio', 'ai-sdk')) &&
    existsSync(join(PEER, 'node_modules', '@temporalio', 'workflow-streams'))
  )
    return;
  process.stderr.write('installing the peer (bench/peer) once...\n');
  const r = spawnSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: PEER, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('npm install in bench/peer failed');
}

function median(values: number[]): number {
  return percentile(values, 50);
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Prints the table: medians over the rounds, the ratio ours/peer, and each target. */
function report(
  names: string[],
  results: Map<string, Figures[]>,
  floor: LatencyFigures[],
  floorHttp: LatencyFigures[],
): void {
  const [ours, peer] = names.map((n) => results.get(n)!);
  const med = (rounds: Figures[], pick: (f: Figures) => number) => median(rounds.map(pick));
  type Row = [
    figure: string,
    pick: (f: Figures) => number,
    format: (v: number) => string,
    target?: (ratio: number, o: number) => boolean,
    targetText?: string,
  ];
  const kb = (v: number) => (v >= 1e6 ? `${(v / 1e6).toFixed(2)} M` : `${(v / 1e3).toFixed(0)} k`);
  const ms = (v: number) => `${v.toFixed(0)} ms`;
  const rows: Row[] = [
    ...HISTORY_STEPS.map((s): Row => [
      `history bytes, ${s}-step run`,
      (f) => f.historyBytes[s],
      kb,
      s === 60 ? (r) => r <= 1 / 30 : undefined,
      s === 60 ? '≤ 1/30' : undefined,
    ]),
    ['ms per step, 0 ms model (10-step run)', (f) => f.msPerStep, ms, (r) => r <= 0.5, '≤ 0.5'],
    ['  the same, our tool as an activity', (f) => f.msPerStepActivityTool, ms],
    [
      '10-step run, 200 ms model: actual / ideal',
      (f) => f.idealRatio,
      (v) => v.toFixed(2),
      (_r, o) => o <= 1.15,
      'ours ≤ 1.15',
    ],
    [
      `${CONCURRENT} runs in flight (5 steps): runs/s`,
      (f) => f.runsPerSecond,
      (v) => v.toFixed(1),
      (r) => r >= 2,
      '≥ 2',
    ],
    ['  p50 run latency', (f) => f.p50, ms],
    ['  p95 run latency', (f) => f.p95, ms],
    ['  worker CPU per run', (f) => f.workerCpuMs, ms],
    ['  dev-server CPU per run', (f) => f.serverCpuMs, ms, (r) => r <= 1, '≤ 1'],
    ['billable actions per tool step', (f) => f.actionsPerToolStep, (v) => v.toFixed(2), (r) => r <= 1, '≤ 1'],
  ];
  const table: string[][] = [['figure', names[0], names[1], 'ratio', 'target']];
  for (const [figure, pick, format, target, targetText] of rows) {
    const o = med(ours, pick);
    const p = med(peer, pick);
    const ratio = o / p;
    table.push([
      figure,
      format(o),
      format(p),
      ratio < 0.1 ? `1/${(1 / ratio).toFixed(0)}` : ratio.toFixed(2),
      target ? `${targetText} ${target(ratio, o) ? 'met' : 'NOT MET'}` : '',
    ]);
  }
  const widths = table[0].map((_, i) => Math.max(...table.map((r) => r[i].length)));
  console.log(
    `\n${new Date().toISOString().slice(0, 10)}, ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}; median of ${REPEATS} rounds`,
  );
  for (const [i, r] of table.entries()) {
    console.log(`| ${r.map((c, j) => c.padEnd(widths[j])).join(' | ')} |`);
    if (i === 0) console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  }
  const breakdown = (rounds: Figures[]) =>
    Object.keys(rounds[0].actionBreakdown ?? {})
      .map((k) => [k, med(rounds, (f) => f.actionBreakdown[k])] as const)
      .filter(([, v]) => Math.abs(v) > 0.01)
      .map(([k, v]) => `${k} ${v.toFixed(2)}`)
      .join(', ');
  const times = (rounds: Pick<Figures, 'timeBreakdown'>[]) =>
    Object.keys(rounds[0].timeBreakdown)
      .map((k) => `${k} ${median(rounds.map((f) => f.timeBreakdown[k])).toFixed(1)}`)
      .join(', ');
  const step = (rounds: LatencyFigures[]) => median(rounds.map((f) => f.msPerStep));
  const ideal = (rounds: LatencyFigures[]) => median(rounds.map((f) => f.idealRatio));
  const above = (rounds: LatencyFigures[]) =>
    `${names[0]} ${(med(ours, (f) => f.msPerStep) - step(rounds)).toFixed(0)} ms per step, ${names[1]} ${(med(peer, (f) => f.msPerStep) - step(rounds)).toFixed(0)} ms`;
  console.log(
    `\nTemporal alone, the same shape of run doing nothing (an activity per model call that only waits for the model's delay, a local activity per tool step that returns at once): ` +
      `${step(floor).toFixed(0)} ms per step, actual / ideal ${ideal(floor).toFixed(2)}; above it, ${above(floor)}. ` +
      `With each model call making the model's HTTP request and nothing else (the same request an agent sends, by plain fetch): ` +
      `${step(floorHttp).toFixed(0)} ms per step, actual / ideal ${ideal(floorHttp).toFixed(2)}; above it, ${above(floorHttp)}.`,
  );
  console.log(
    `ms per model call, from the 10-step histories: ${names[0]}: ${times(ours)}; ${names[1]}: ${times(peer)}; Temporal alone: ${times(floor)}; Temporal alone + HTTP: ${times(floorHttp)}`,
  );
  console.log(
    `billable actions per tool step, by kind: ${names[0]}: ${breakdown(ours)}; ${names[1]}: ${breakdown(peer)}`,
  );
}

main().then(
  // The SDK's connections and tsx's esbuild service would keep a finished bench alive.
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
