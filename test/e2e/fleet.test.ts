import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { streamEvents } from '../../src/client/event-stream';
import { cleanEnv, startTs, type Started } from '../helpers/processes';
import { answer, call, lastOf, startModel } from '../helpers/scripted-model';
import { connectTestTemporal, type TestTemporal } from '../helpers/temporal';

/**
 * Many workers, one cluster: three worker processes on one task queue, 100 runs, one worker
 * killed with SIGKILL while runs are in flight. Every run completes; no tool call has its side
 * effect twice (idempotency keys); no model call is asked again once its activity completed.
 */
const RUNS = 100;

describe('a fleet of three workers on one task queue', () => {
  let t: TestTemporal;
  beforeAll(async () => {
    t = await connectTestTemporal();
  });
  afterAll(async () => t?.close());

  it('completes 100 runs with a worker killed mid-run, without doubled side effects or repeated model calls', async () => {
    // The ledger: the side effects of `transfer`, deduplicated by idempotency key as a payment API does.
    const attempts = new Map<string, number>();
    const effects = new Map<string, { to: string; amount: number }>();
    // Calls that began (a tool's first step), and those under way on each worker: the test kills a
    // worker while it has one in flight, so the kill is sure to land mid-call.
    const begins = new Map<string, number>();
    const inFlight = new Map<string, number>();
    // Once the test is about to kill worker a, the ledger holds a's calls unanswered: the call it
    // has under way cannot complete in the moment before the kill lands (a busy machine saw that).
    let holdA = false;
    const ledger = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const { key, to, amount, worker } = JSON.parse(body);
        if (holdA && worker === 'a') return;
        if (req.url === '/begin') {
          begins.set(key, (begins.get(key) ?? 0) + 1);
          inFlight.set(worker, (inFlight.get(worker) ?? 0) + 1);
        } else {
          attempts.set(key, (attempts.get(key) ?? 0) + 1);
          inFlight.set(worker, (inFlight.get(worker) ?? 1) - 1);
          if (!effects.has(key)) effects.set(key, { to, amount });
        }
        res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((r) => ledger.listen(0, '127.0.0.1', r));
    // The model: two transfers, then an answer; every request is logged with its run, step, time
    // and worker (each worker has a model endpoint of its own).
    const requests: { run: string; step: number; at: number; worker: string }[] = [];
    const models = await Promise.all(
      ['a', 'b', 'c'].map((worker) =>
        startModel(async (req) => {
          const run = lastOf(req, 'user');
          const step = req.messages.filter((m) => m.role === 'assistant').length;
          requests.push({ run, step, at: Date.now(), worker });
          await new Promise((r) => setTimeout(r, 50));
          if (step < 2) return call(['transfer', { to: `acct-${run}`, amount: step + 1 }]);
          return answer(`done ${run}`);
        }),
      ),
    );
    const taskQueue = `fleet-${randomUUID()}`;
    const env = cleanEnv({
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
      TEST_WORKFLOW_BUNDLE: process.env.TEST_WORKFLOW_BUNDLE!,
      AGENT_TASK_QUEUE: taskQueue,
      LEDGER_URL: `http://127.0.0.1:${(ledger.address() as { port: number }).port}`,
      BEGIN_URL: `http://127.0.0.1:${(ledger.address() as { port: number }).port}/begin`,
    });
    const workers: Started[] = await Promise.all(
      ['a', 'b', 'c'].map((name, i) =>
        startTs(
          ['test/fixtures/fleet-worker.ts'],
          { ...env, WORKER_NAME: name, OPENAI_BASE_URL: models[i].baseURL },
          /ready/,
        ),
      ),
    );
    try {
      const handles = await Promise.all(
        Array.from({ length: RUNS }, (_, i) => startAgentRun(t.client, { message: `run-${i}` }, { taskQueue })),
      );
      // Kill a worker once a third of the side effects happened (runs are mid-way on all three), at
      // a moment it has a tool call under way.
      const deadline = Date.now() + 60_000;
      while ((attempts.size < (RUNS * 2) / 3 || !(inFlight.get('a')! > 0)) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 10));
      expect(inFlight.get('a')).toBeGreaterThan(0);
      holdA = true;
      workers[0].kill('SIGKILL');
      await workers[0].exited;
      const outcomes = await Promise.all(handles.map((h) => runOutcome(h)));
      expect(outcomes.filter((o) => o.status !== 'completed')).toEqual([]);
      expect(outcomes.map((o) => o.content).sort()).toEqual(
        Array.from({ length: RUNS }, (_, i) => `done run-${i}`).sort(),
      );

      // Every tool call had its effect exactly once: 2 per run, each key once, even where a call was retried.
      expect(effects.size).toBe(RUNS * 2);
      const perAccount = new Map<string, number[]>();
      for (const e of effects.values()) perAccount.set(e.to, [...(perAccount.get(e.to) ?? []), e.amount].sort());
      expect([...perAccount.values()].every((amounts) => amounts.join() === '1,2')).toBe(true);

      // No model call was asked again after its activity completed (in-flight ones may be retried).
      let retriedInFlight = 0;
      for (const [i, h] of handles.entries()) {
        const run = `run-${i}`;
        const history = await h.fetchHistory();
        const events = history.events ?? [];
        const scheduled = new Map(
          events
            .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
            .map((e, step) => [Number(e.eventId), step]),
        );
        const completedAt = new Map<number, number>();
        for (const e of events) {
          const done = e.activityTaskCompletedEventAttributes;
          const step = done && scheduled.get(Number(done.scheduledEventId));
          if (step !== undefined && step !== null)
            completedAt.set(step, Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6));
        }
        for (const r of requests.filter((q) => q.run === run)) {
          const completed = completedAt.get(r.step);
          expect(completed).toBeDefined();
          // The killed worker's last request may be read after its step was done elsewhere (it
          // was sent before the kill; a busy test process reads it late): the live ones' may not.
          if (r.worker !== 'a') expect(r.at).toBeLessThanOrEqual(completed!);
        }
        retriedInFlight += requests.filter((q) => q.run === run).length - 3;
      }
      // The kill did land mid-run: some calls were tried again on the surviving workers.
      const retriedTools = [...begins.values()].filter((n) => n > 1).length;
      console.log(
        `fleet: ${retriedTools} tool calls and ${retriedInFlight} model calls were in flight on the killed worker and ran again elsewhere`,
      );
      expect(retriedTools + retriedInFlight).toBeGreaterThan(0);
    } finally {
      for (const w of workers) w.kill('SIGKILL');
      await Promise.all(workers.map((w) => w.exited));
      ledger.close();
      await Promise.all(models.map((m) => m.close()));
    }
  }, 180_000);

  it("does not give a tool call up when its workers are lost: lost workers do not use up the tool's attempts", async () => {
    // The tool's own attempts are 3; three workers in turn are killed while running the call.
    const begins: { key: string; worker: string; attempt: number }[] = [];
    const effects: { key: string }[] = [];
    const ledger = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        (req.url === '/begin' ? begins : effects).push(JSON.parse(body));
        res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((r) => ledger.listen(0, '127.0.0.1', r));
    const model = await startModel((req) =>
      req.messages.some((m) => m.role === 'tool')
        ? answer(`tool said: ${lastOf(req, 'tool')}`)
        : call(['transfer', { to: 'acct-lost', amount: 5 }]),
    );
    const base = `http://127.0.0.1:${(ledger.address() as { port: number }).port}`;
    const taskQueue = `lost-${randomUUID()}`;
    const env = cleanEnv({
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
      TEST_WORKFLOW_BUNDLE: process.env.TEST_WORKFLOW_BUNDLE!,
      AGENT_TASK_QUEUE: taskQueue,
      OPENAI_BASE_URL: model.baseURL,
      LEDGER_URL: base,
      BEGIN_URL: `${base}/begin`,
    });
    const start = (name: string, delayMs: number) =>
      startTs(
        ['test/fixtures/fleet-worker.ts'],
        { ...env, WORKER_NAME: name, TRANSFER_DELAY_MS: String(delayMs) },
        /ready/,
      );
    const workers: Started[] = [await start('doomed-1', 600_000)];
    try {
      const handle = await startAgentRun(t.client, { message: 'pay' }, { taskQueue });
      for (let lost = 1; lost <= 3; lost++) {
        while (begins.length < lost) await new Promise((r) => setTimeout(r, 100));
        // The next worker is ready before this one dies: it takes the retry. The last one finishes.
        workers.push(await start(lost < 3 ? `doomed-${lost + 1}` : 'survivor', lost < 3 ? 600_000 : 100));
        workers[lost - 1].kill('SIGKILL');
        await workers[lost - 1].exited;
      }
      const outcome = await runOutcome(handle);
      expect(outcome).toMatchObject({ status: 'completed', content: 'tool said: moved 5 to acct-lost' });
      expect(outcome.toolExecutions.map((e) => [e.result, e.error])).toEqual([['moved 5 to acct-lost', false]]);
      // One call, one idempotency key throughout; the fourth attempt was the first to finish.
      expect(begins.map((b) => [b.worker, b.attempt])).toEqual([
        ['doomed-1', 1],
        ['doomed-2', 2],
        ['doomed-3', 3],
        ['survivor', 4],
      ]);
      expect(new Set(begins.map((b) => b.key)).size).toBe(1);
      expect(effects.map((e) => e.key)).toEqual([begins[0].key]);
      // Said where the owner of the side effect looks: the result counts the attempts, the stream
      // says as each one starts that the last one's worker was lost.
      expect(outcome.toolExecutions[0]).toMatchObject({ attempts: 4, workerLosses: 3 });
      const retried: unknown[] = [];
      for await (const e of streamEvents(t.client, handle.workflowId))
        if (e.type === 'tool_retried') retried.push([e.name, e.attempt, e.reason]);
      expect(retried).toEqual([
        ['transfer', 2, 'worker lost'],
        ['transfer', 3, 'worker lost'],
        ['transfer', 4, 'worker lost'],
      ]);
    } finally {
      for (const w of workers) w.kill('SIGKILL');
      await Promise.all(workers.map((w) => w.exited));
      ledger.close();
      await model.close();
    }
  }, 180_000);
});
