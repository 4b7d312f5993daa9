import { randomUUID } from 'node:crypto';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { readTenantUsage, setTenantBudget } from '../../src/client/tenants';
import { cleanEnv, eventually, runTs, startTs, type Started } from '../helpers/processes';
import { answer, lastOf, startModel } from '../helpers/scripted-model';
import { connectTestTemporal, type TestTemporal } from '../helpers/temporal';

/**
 * A tenant's budget holds across a worker killed mid-call: the call's first attempt never got its
 * reply to the ledger, its second (on another worker) did, and was charged once; the tenant's
 * next run is refused before it asks the model, as `budget_exceeded` with the tenant's figures.
 */
describe('a tenant budget across a worker SIGKILL', () => {
  let t: TestTemporal;
  beforeAll(async () => {
    t = await connectTestTemporal();
  });
  afterAll(async () => t?.close());

  it('charges the killed call once and stops the tenant’s next run, exactly', async () => {
    let release: (() => void) | undefined;
    const asked: string[] = [];
    const model = await startModel(async (req) => {
      const message = lastOf(req, 'user');
      asked.push(message);
      // The first request is held until its worker is dead: its reply goes nowhere.
      if (asked.length === 1) await new Promise<void>((r) => (release = r));
      return answer(`ok: ${message}`);
    });
    const taskQueue = `tenant-budget-${randomUUID()}`;
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const env = cleanEnv({
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
      TEST_WORKFLOW_BUNDLE: process.env.TEST_WORKFLOW_BUNDLE!,
      AGENT_TASK_QUEUE: taskQueue,
      OPENAI_BASE_URL: model.baseURL,
      LEDGER_URL: 'http://127.0.0.1:9/unused',
    });
    const workers: Started[] = [];
    const start = async (name: string) =>
      workers.push(await startTs(['test/fixtures/fleet-worker.ts'], { ...env, WORKER_NAME: name }, /ready/));
    try {
      await start('a');
      // A budget of one token: the first call is admitted (nothing spent yet), and spends it. Set
      // by the CLI; bad values are refused before anything is sent.
      const bad = await runTs(['client.ts', 'tenants', 'budget', tenant, '--tokens', '1.5', '--per', 'day'], env);
      expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('--tokens must be a whole number >= 1')]);
      const set = await runTs(
        ['client.ts', 'tenants', 'budget', tenant, '--tokens', '1', '--per', 'day', '--json'],
        env,
      );
      expect(set.code).toBe(0);
      expect(JSON.parse(set.stdout)).toMatchObject({
        tenant,
        budget: { tokens: 1, per: 'day' },
        spent: { tokens: 0, calls: 0 },
      });
      const first = await startAgentRun(t.client, { message: 'first', tenant }, { taskQueue });
      expect(await eventually(() => release !== undefined, 20_000)).toBe(true);
      workers[0].kill('SIGKILL');
      await workers[0].exited;
      await start('b');
      release!();
      const done = await runOutcome(first);
      expect(done).toMatchObject({ status: 'completed', content: 'ok: first', tenant });
      // The model was asked twice (the lost attempt, and its retry); the ledger charged one reply.
      expect(asked).toEqual(['first', 'first']);
      const spent = { tokens: done.usage.totalTokens, usd: 0, calls: 1 };
      expect((await readTenantUsage(t.client, tenant))?.spent).toEqual(spent);

      const second = await runOutcome(await startAgentRun(t.client, { message: 'second', tenant }, { taskQueue }));
      expect(second).toMatchObject({
        status: 'budget_exceeded',
        tenantBudget: { tenant, limit: { tokens: 1, per: 'day' }, spent },
        iterations: 0,
      });
      expect(second.content).toMatch(/tenant's budget/);
      // Refused before the model was asked; another tenant is not held back.
      expect(asked).toEqual(['first', 'first']);
      expect(
        await runOutcome(await startAgentRun(t.client, { message: 'other', tenant: `${tenant}-b` }, { taskQueue })),
      ).toMatchObject({ status: 'completed', content: 'ok: other' });
      expect((await readTenantUsage(t.client, tenant))?.spent).toEqual(spent);
      const usage = await runTs(['client.ts', 'tenants', 'usage', '--tenant', tenant, '--json'], env);
      expect(JSON.parse(usage.stdout)).toMatchObject({ tenant, spent, budget: { tokens: 1, per: 'day' } });
      const table = await runTs(['client.ts', 'tenants', 'usage'], env);
      expect(table.stdout).toMatch(new RegExp(`${tenant} +\\d{4}-\\d\\d-\\d\\d +${spent.tokens} .* 1 tokens a day`));
      // Raised, the tenant goes on.
      await setTenantBudget(t.client, tenant, { tokens: 1_000_000, per: 'day' });
      expect(
        await runOutcome(await startAgentRun(t.client, { message: 'third', tenant }, { taskQueue })),
      ).toMatchObject({
        status: 'completed',
      });
    } finally {
      for (const w of workers) w.kill('SIGKILL');
    }
  }, 120_000);
});
