import { randomUUID } from 'node:crypto';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { rateGovernorId, rateGovernorQuery } from '../../src/contracts/rate-governor';
import { answer, lastOf, startModel } from '../helpers/scripted-model';
import { cleanEnv, startTs, type Started } from '../helpers/processes';
import { connectTestTemporal, type TestTemporal } from '../helpers/temporal';

/**
 * A model's rate limit held by two worker processes together (AGENT_RATE_LIMITS): their calls take
 * turns from one governor, paced at the limit, and a 429 pauses the model for every call, not only
 * the one that got it.
 */
let t: TestTemporal;
beforeAll(async () => {
  t = await connectTestTemporal();
});
afterAll(async () => t?.close());

it('paces two workers’ calls of a limited model at its limit, and pauses them all after a 429', async () => {
  const times: { message: string; at: number; status: number }[] = [];
  const model = await startModel((req) => {
    const message = lastOf(req, 'user');
    const first = times.length === 0;
    times.push({ message, at: Date.now(), status: first ? 429 : 200 });
    // The first request is told to wait two seconds: every other call must wait it too.
    if (first)
      return { http: { status: 429, body: { error: { message: 'slow down' } }, headers: { 'retry-after': '2' } } };
    return answer(`ok ${message}`);
  });
  const taskQueue = `rate-${randomUUID()}`;
  const name = `limited-${randomUUID().slice(0, 8)}`;
  const env = cleanEnv({
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
    TEST_WORKFLOW_BUNDLE: process.env.TEST_WORKFLOW_BUNDLE!,
    AGENT_TASK_QUEUE: taskQueue,
    OPENAI_BASE_URL: model.baseURL,
    FLEET_MODEL: name,
    LEDGER_URL: 'http://127.0.0.1:9/unused',
    AGENT_RATE_LIMITS: JSON.stringify({ [name]: { requestsPerMinute: 600 } }), // one request each 100 ms
  });
  const workers: Started[] = await Promise.all(
    ['a', 'b'].map((w) => startTs(['test/fixtures/fleet-worker.ts'], { ...env, WORKER_NAME: w }, /ready/)),
  );
  try {
    // One call meets the 429; the fleet's next calls (asked for on both workers) wait it out.
    const handles = [await startAgentRun(t.client, { message: 'm0' }, { taskQueue })];
    while (times.length === 0) await new Promise((r) => setTimeout(r, 20));
    // Until the governor has the pause (the 429's worker tells it).
    const paused = t.client.workflow.getHandle(rateGovernorId(name));
    for (let i = 0; !(await paused.query(rateGovernorQuery).catch(() => undefined))?.epoch; i++) {
      expect(i).toBeLessThan(200);
      await new Promise((r) => setTimeout(r, 50));
    }
    handles.push(
      ...(await Promise.all(
        Array.from({ length: 7 }, (_, i) => startAgentRun(t.client, { message: `m${i + 1}` }, { taskQueue })),
      )),
    );
    const outcomes = await Promise.all(handles.map((h) => runOutcome(h)));
    expect(outcomes.map((o) => o.status)).toEqual(Array(8).fill('completed'));
    const governor = await t.client.workflow.getHandle(rateGovernorId(name)).query(rateGovernorQuery);
    expect(governor).toMatchObject({ model: name, limit: { requestsPerMinute: 600 }, counts: { rateLimited: 1 } });
    // The model saw each call once, and the retry of the one that got the 429.
    expect(governor.counts.granted).toBeGreaterThanOrEqual(9);
    expect(times).toHaveLength(9);
  } finally {
    for (const w of workers) w.kill('SIGKILL');
  }
  const rejected = times.find((x) => x.status === 429)!;
  const served = times.filter((x) => x.status === 200).map((x) => x.at);
  // Nothing went before the 429's Retry-After, from either worker...
  expect(Math.min(...served) - rejected.at).toBeGreaterThanOrEqual(1950);
  // ...and the rest at the limit: about 5 requests a half second (turns given in the governor's
  // time, which trails the wall clock by up to a workflow task under load, may come a little early).
  const after = served.sort((x, y) => x - y);
  expect(after).toHaveLength(8);
  const busiest = Math.max(...after.map((start) => after.filter((at) => at >= start && at < start + 500).length));
  expect(busiest).toBeLessThanOrEqual(7);
  expect(after.at(-1)! - after[0]).toBeGreaterThanOrEqual(100 * (after.length - 1) - 200);
});
