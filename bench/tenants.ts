/**
 * `npm run bench:tenants`: one fleet, many customers.
 *
 * (a) The rate governor: N conversations (default 1,000), one turn each, all at once, over two
 *     worker processes, against a scripted model that answers 429 (with Retry-After) above
 *     --limit-rpm requests in any 60 s (default 600). The workers' AGENT_RATE_LIMITS names a little
 *     less (--governed-rpm, default 588). Reports failed turns, 429s as a share of requests
 *     (target <= 1%), and served requests a minute while the backlog lasted as a share of the limit
 *     (target >= 90%).
 * (b) Fair shares: tenant A starts --flood runs at once (default 2,000) while tenant B starts one
 *     run a second; B's p95 time from its start to its first model call, with A's flood, over B's
 *     p95 alone (target <= 1.5x); on a server with fairness on, then off, for comparison. The
 *     workers are the bottleneck (few task slots), so the task queue backs up.
 *
 * (c) The same with one worker as it comes (its default slots), a model that takes 3 s and A's 300
 *     runs at once: what the slots A's tasks hold and the sticky queues of A's open runs cost B;
 *     then with AGENT_WORKFLOW_TASK_SLOTS=2 (fair shares inside the worker).
 *
 * Last line JSON: {conversations, failedTurns, rateLimitedShare, limitShare, fairP95Ratio, unfairP95Ratio, oneWorkerP95Ratio, oneWorkerTwoSlotsP95Ratio}.
 * On embedded dev servers of its own (one partition per task queue, so shares are exact). Not part of `npm test`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client, type WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { connectClient } from '../src/connection/client-connection';
import { startDevServer, type DevServer } from '../src/connection/dev-server';
import { startMessage } from '../src/client/conversations';
import { runOutcome, startAgentRun } from '../src/client/run-agent';
import { installRuntimeLogging } from '../src/telemetry/logging';
import { startOpenAICompatibleServer, type ChatRequest } from '../src/testing/openai-compatible-server';
import { percentile } from './scale-stats';

const ROOT = join(__dirname, '..');
const { values: flags } = parseArgs({
  options: {
    conversations: { type: 'string', default: '1000' },
    'limit-rpm': { type: 'string', default: '600' },
    'governed-rpm': { type: 'string', default: '588' },
    flood: { type: 'string', default: '2000' },
    'b-runs': { type: 'string', default: '20' },
    only: { type: 'string' },
  },
});
const CONVERSATIONS = Number(flags.conversations);
const LIMIT = Number(flags['limit-rpm']);
const GOVERNED = Number(flags['governed-rpm']);
const FLOOD = Number(flags.flood);
const B_RUNS = Number(flags['b-runs']);
/** One partition per task queue: Temporal's fairness is exact within a partition, approximate across. */
const ONE_PARTITION = { 'matching.numTaskqueueReadPartitions': 1, 'matching.numTaskqueueWritePartitions': 1 };

function startWorker(env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/tenants-worker.ts'], {
    cwd: ROOT,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (/tenants worker ready/.test(out)) {
        clearInterval(timer);
        resolve(child);
      } else if (child.exitCode !== null) {
        clearInterval(timer);
        reject(new Error(`a tenants worker did not start:\n${out}`));
      }
    }, 100);
  });
}

async function onServer<T>(
  dynamicConfig: Record<string, number | boolean>,
  body: (client: Client, address: string) => Promise<T>,
): Promise<T> {
  const server: DevServer = await startDevServer(
    { dynamicConfig, logFile: join(ROOT, '.temporal', `bench-tenants-${randomUUID().slice(0, 6)}.log`) },
    process.env,
  );
  const connection = await connectClient({ address: server.address });
  try {
    return await body(new Client({ connection: connection.connection }), server.address);
  } finally {
    await connection.close();
    await server.stop();
  }
}

/** (a) Many conversations against a model limited to LIMIT requests a minute, through the governor. */
async function governed(): Promise<{
  failedTurns: number;
  rateLimitedShare: number;
  limitShare: number;
  requests: number;
}> {
  const served: number[] = [];
  const allServed: number[] = [];
  let rejected = 0;
  const model = await startOpenAICompatibleServer(async () => {
    const now = Date.now();
    while (served.length && served[0] <= now - 60_000) served.shift();
    if (served.length >= LIMIT) {
      rejected++;
      const retryAfter = Math.max(1, Math.ceil((served[0] + 60_000 - now) / 1000));
      return {
        http: {
          status: 429,
          body: { error: { message: 'rate limited' } },
          headers: { 'retry-after': String(retryAfter) },
        },
      };
    }
    served.push(now);
    allServed.push(now);
    await new Promise((r) => setTimeout(r, 150));
    return { content: 'Hello! How can I help?' };
  });
  try {
    return await onServer(ONE_PARTITION, async (client, address) => {
      const taskQueue = `bench-tenants-a-${randomUUID().slice(0, 6)}`;
      const env = {
        ...process.env,
        TEMPORAL_ADDRESS: address,
        TASK_QUEUE: taskQueue,
        OPENAI_BASE_URL: model.baseURL,
        AGENT_RATE_LIMITS: JSON.stringify({ bench: { requestsPerMinute: GOVERNED } }),
      };
      const workers = await Promise.all([startWorker(env), startWorker(env)]);
      try {
        console.error(
          `(a) ${CONVERSATIONS} conversations, one turn each, the model limited to ${LIMIT}/min, governed at ${GOVERNED}/min`,
        );
        const started = Date.now();
        const ids = Array.from({ length: CONVERSATIONS }, (_, i) => `bench-c-${i}-${randomUUID().slice(0, 4)}`);
        const results = await Promise.all(
          Array.from({ length: CONVERSATIONS }, async (_, i) => {
            try {
              const sent = await startMessage(
                client,
                ids[i],
                { message: 'hello' },
                { taskQueue, options: { tenant: `t${i % 10}` } },
              );
              const r = await sent.result();
              return r.status === 'completed';
            } catch {
              return false;
            }
          }),
        );
        const failedTurns = results.filter((ok) => !ok).length;
        const first = allServed[0] ?? started;
        const last = allServed.at(-1) ?? started;
        const minutes = Math.max((last - first) / 60_000, 1 / 60);
        const perMinute = (allServed.length - 1) / minutes;
        const requests = allServed.length + rejected;
        const took = ((Date.now() - started) / 1000).toFixed(0);
        // Model calls that failed an attempt and were retried (a 429, or a governor that did not answer in time).
        const retried = await retriedModelCalls(client, ids);
        console.error(
          `    ${allServed.length} served, ${rejected} answered 429, ${failedTurns} turns failed, ${retried} model-call attempts retried, ${Math.round(perMinute)}/min while the backlog lasted (${took} s)`,
        );
        return {
          failedTurns,
          rateLimitedShare: requests ? rejected / requests : 0,
          limitShare: perMinute / LIMIT,
          requests,
        };
      } finally {
        for (const w of workers) w.kill('SIGKILL');
      }
    });
  } finally {
    await model.close();
  }
}

/** How a fairness case is set up: (b) few slots on two workers and a fast model; (c) one worker as it comes, a slow model. */
interface FairnessSetup {
  label: string;
  workers: number;
  /** Activity task slots per worker (undefined: the worker's default); workflow task slots are the plugin's (2) unless `env` says. */
  slots?: number;
  modelMs: number;
  flood: number;
  /** More of the workers' environment (BENCH_WORKFLOW_SLOTS, BENCH_STICKY_TIMEOUT). */
  env?: Record<string, string>;
}

/** (b), (c): B's p50 and p95 time to its first model call, alone and with A's flood, on a server with fairness `on` or off. */
async function fairness(
  on: boolean,
  setup: FairnessSetup = {
    label: '(b)',
    workers: 2,
    slots: 4,
    modelMs: 50,
    flood: FLOOD,
    env: { AGENT_WORKFLOW_TASK_SLOTS: '2' },
  },
): Promise<{ alone: number; flooded: number; aloneP50: number; floodedP50: number }> {
  const firstCall = new Map<string, number>();
  let lastA = 0;
  const model = await startOpenAICompatibleServer(async (req: ChatRequest) => {
    const message = String(req.messages.find((m) => m.role === 'user')?.content ?? '');
    if (!firstCall.has(message)) firstCall.set(message, Date.now());
    if (message.startsWith('A ')) lastA = Date.now();
    await new Promise((r) => setTimeout(r, setup.modelMs));
    return { content: 'ok' };
  });
  try {
    return await onServer({ ...ONE_PARTITION, 'matching.enableFairness': on }, async (client, address) => {
      const taskQueue = `bench-tenants-b-${randomUUID().slice(0, 6)}`;
      // Few slots: the workers, not the model, are the bottleneck, so the task queue backs up.
      const env = {
        ...process.env,
        TEMPORAL_ADDRESS: address,
        TASK_QUEUE: taskQueue,
        OPENAI_BASE_URL: model.baseURL,
        ...(setup.slots ? { BENCH_ACTIVITY_SLOTS: String(setup.slots) } : {}),
        ...setup.env,
      };
      const workers = await Promise.all(Array.from({ length: setup.workers }, () => startWorker(env)));
      try {
        /** Where B's time to its first model call went, per run: [dispatch of its first workflow task, that task, dispatch of the model call, the call until it asked]. */
        const phases: number[][] = [];
        const bRuns = async (label: string): Promise<number[]> => {
          const waits: Promise<number>[] = [];
          for (let i = 0; i < B_RUNS; i++) {
            const message = `B ${label} ${i}`;
            const at = Date.now();
            waits.push(
              startAgentRun(client, { message, tenant: 'tenant-b' }, { taskQueue }).then(async (h) => {
                await runOutcome(h);
                const asked = firstCall.get(message) ?? Date.now();
                if (label === 'flooded') phases.push(await phasesOf(h, asked));
                return asked - at;
              }),
            );
            await new Promise((r) => setTimeout(r, 1000));
          }
          return Promise.all(waits);
        };
        // One run first, not counted: the first call of tenant B starts its ledger (a new workflow).
        await runOutcome(await startAgentRun(client, { message: 'B warm-up', tenant: 'tenant-b' }, { taskQueue }));
        const aloneWaits = await bRuns('alone');
        const alone = percentile(aloneWaits, 95);
        // A's flood, started at once (in parallel batches); then B goes on one a second.
        const flood = (async () => {
          const handles = [];
          for (let i = 0; i < setup.flood; i += 100)
            handles.push(
              ...(await Promise.all(
                Array.from({ length: Math.min(100, setup.flood - i) }, (_, j) =>
                  startAgentRun(client, { message: `A ${i + j}`, tenant: 'tenant-a' }, { taskQueue }),
                ),
              )),
            );
          return handles;
        })();
        // B's runs start once A's are in (the server took them all): what is measured is the task
        // queue's dispatch while A's backlog drains, not the server's admission of 2,000 starts.
        const floodStarted = Date.now();
        const handles = await flood;
        const floodedWaits = await bRuns('flooded');
        const flooded = percentile(floodedWaits, 95);
        const servedA = [...firstCall.keys()].filter((k) => k.startsWith('A ')).length;
        const aloneP50 = percentile(aloneWaits, 50);
        const floodedP50 = percentile(floodedWaits, 50);
        console.error(
          `${setup.label} fairness ${on ? 'on ' : 'off'}: B's p50 / p95 to its first model call ${aloneP50} / ${alone} ms alone, ${floodedP50} / ${flooded} ms with A's ${setup.flood} runs (${servedA} of them asked the model by then)`,
        );
        const phase = (i: number) =>
          `${percentile(
            phases.map((p) => p[i]),
            50,
          )} / ${percentile(
            phases.map((p) => p[i]),
            95,
          )} ms`;
        // A's throughput: how long its runs took to answer (each run is one model call).
        await Promise.all(handles.map((h) => runOutcome(h).catch(() => undefined)));
        console.error(
          `    A's ${setup.flood} runs all answered ${((Date.now() - floodStarted) / 1000).toFixed(1)} s after their start (the last asked the model at ${((lastA - floodStarted) / 1000).toFixed(1)} s)`,
        );
        console.error(
          `    where B's time went with the flood (p50 / p95): its first workflow task waited ${phase(0)} and ran ${phase(1)}; its model call waited ${phase(2)} for a worker, then took ${phase(3)} to ask`,
        );
        void handles;
        return { alone, flooded, aloneP50, floodedP50 };
      } finally {
        for (const w of workers) w.kill('SIGKILL');
      }
    });
  } finally {
    await model.close();
  }
}

/** How many model-call attempts of these workflows failed and were tried again (from their histories). */
async function retriedModelCalls(client: Client, workflowIds: string[]): Promise<number> {
  let retried = 0;
  for (let i = 0; i < workflowIds.length; i += 50)
    await Promise.all(
      workflowIds.slice(i, i + 50).map(async (id) => {
        const { events } = await client.workflow.getHandle(id).fetchHistory();
        for (const e of events ?? []) {
          const attempt = e.activityTaskStartedEventAttributes?.attempt ?? 1;
          if (attempt > 1) retried += attempt - 1;
        }
      }),
    );
  return retried;
}

/** A run's phases until its first model call asked (see `fairness`), from its history's event times. */
async function phasesOf(handle: WorkflowHandle, asked: number): Promise<number[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  const time = (e: temporal.api.history.v1.IHistoryEvent | undefined) =>
    e?.eventTime ? Number(e.eventTime.seconds ?? 0) * 1000 + Math.floor((e.eventTime.nanos ?? 0) / 1e6) : NaN;
  const at = (type: string) =>
    events.find((e) => e.eventType === temporal.api.enums.v1.EventType[type as 'EVENT_TYPE_UNSPECIFIED']);
  const started = time(events[0]);
  const taskStarted = time(at('EVENT_TYPE_WORKFLOW_TASK_STARTED'));
  const taskDone = time(at('EVENT_TYPE_WORKFLOW_TASK_COMPLETED'));
  const scheduled = time(at('EVENT_TYPE_ACTIVITY_TASK_SCHEDULED'));
  const activityStarted = time(at('EVENT_TYPE_ACTIVITY_TASK_STARTED'));
  return [taskStarted - started, taskDone - taskStarted, activityStarted - scheduled, asked - activityStarted];
}

async function main(): Promise<void> {
  installRuntimeLogging('ERROR');
  const only = flags.only;
  const a = only === undefined || only === 'a' ? await governed() : undefined;
  const fair = only === undefined || only === 'b' ? await fairness(true) : undefined;
  const unfair = only === undefined || only === 'b' ? await fairness(false) : undefined;
  // (c) One worker with its default slots, a 3 s model, A's 300 runs at once: the sticky queues of
  // A's open runs and the slots their tasks hold, which Temporal's fairness does not cover.
  const oneWorker = (label: string, env: Record<string, string>) =>
    fairness(true, { label, workers: 1, modelMs: 3_000, flood: 300, env });
  const single =
    only === undefined || only === 'c'
      ? await oneWorker('(c)', JSON.parse(process.env.BENCH_C_ENV ?? '{}') as Record<string, string>)
      : undefined;
  // (c) again with the setting for fair shares inside the worker: 2 workflow tasks at once.
  const singleFair =
    only === undefined || only === 'c'
      ? await oneWorker('(c, 2 slots)', { AGENT_WORKFLOW_TASK_SLOTS: '2' })
      : undefined;
  const ratio = (r?: { alone: number; flooded: number }) =>
    r ? Number((r.flooded / Math.max(r.alone, 1)).toFixed(2)) : null;
  console.log(
    JSON.stringify({
      conversations: a ? CONVERSATIONS : null,
      failedTurns: a?.failedTurns ?? null,
      rateLimitedShare: a ? Number(a.rateLimitedShare.toFixed(4)) : null,
      limitShare: a ? Number(a.limitShare.toFixed(3)) : null,
      fairP95Ratio: ratio(fair),
      unfairP95Ratio: ratio(unfair),
      oneWorkerP95Ratio: ratio(single),
      oneWorkerTwoSlotsP95Ratio: ratio(singleFair),
    }),
  );
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
