import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { findTemporalCli } from '../../src/connection/temporal-cli';
import { cleanEnv, eventually, runTs, startTs } from '../helpers/processes';
import { answer, call, lastOf, startModel } from '../helpers/scripted-model';

/**
 * Backend agents on Temporal's clock through client.ts, as a user runs them next to worker.ts:
 * schedules (found by the Temporal CLI's own visibility query), and events delivered to a
 * waiting run with `client.ts event`.
 */
const run = promisify(execFile);

describe('client.ts schedule and event against a Temporal server', () => {
  let env: NodeJS.ProcessEnv;
  let worker: Awaited<ReturnType<typeof startTs>>;
  let closeModel: () => Promise<void>;

  beforeAll(async () => {
    const model = await startModel((req) => {
      const user = lastOf(req, 'user');
      if (req.messages.some((m) => m.role === 'tool')) return answer(`Paid: ${lastOf(req, 'tool')}`);
      if (/payment/.test(user)) return call(['wait_for_event', { name: 'payment_received' }]);
      return answer('Digest: nothing new.');
    });
    closeModel = () => model.close();
    env = cleanEnv({
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
      AGENT_TASK_QUEUE: `e2e-sched-${randomUUID()}`,
      OPENAI_BASE_URL: model.baseURL,
      OPENAI_API_KEY: 'e2e',
      AGENT_MODEL: 'scripted',
    });
    worker = await startTs(['worker.ts'], env, /Press Ctrl\+C/);
  });

  afterAll(async () => {
    worker?.kill('SIGKILL');
    await closeModel?.();
  });

  it('schedule create --every 4s starts runs the Temporal CLI finds by TemporalScheduledById; list shows it; delete stops it', async () => {
    const id = `s1-${randomUUID().slice(0, 8)}`;
    const created = await runTs(['client.ts', 'schedule', 'create', id, '--every', '4s', 'Write the digest.'], env);
    expect(created.code).toBe(0);
    expect(created.stdout).toContain(`Created schedule ${id}`);
    expect(created.stdout).toContain('every 4s, active');
    const query = `TemporalScheduledById='${id}'`;
    const listed = async () => {
      const r = await run(findTemporalCli(process.env), [
        'workflow',
        'list',
        '--address',
        process.env.TEST_TEMPORAL_ADDRESS!,
        '--query',
        query,
        '--output',
        'json',
      ]);
      const text = r.stdout.trim();
      return (text ? JSON.parse(text) : []) as { execution: { workflowId: string }; status: string }[];
    };
    let runs: Awaited<ReturnType<typeof listed>> = [];
    await eventually(async () => (runs = await listed()).some((r) => /COMPLETED/.test(r.status)), 20_000);
    expect(runs.length).toBeGreaterThanOrEqual(1);
    expect(runs[0].execution.workflowId.startsWith(`${id}-run-`)).toBe(true);

    const list = await runTs(['client.ts', 'schedule', 'list', '--json'], env);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toContainEqual(
      expect.objectContaining({
        scheduleId: id,
        target: 'run',
        every: '4s',
        paused: false,
        message: 'Write the digest.',
      }),
    );
    const described = await runTs(['client.ts', 'schedule', 'describe', id], env);
    expect(described.stdout).toMatch(/overlap skip; catch-up window/);
    expect(described.stdout).toMatch(new RegExp(`${id}-run-`));

    const deleted = await runTs(['client.ts', 'schedule', 'delete', id, '--json'], env);
    expect(JSON.parse(deleted.stdout)).toEqual({ scheduleId: id, deleted: true });
    const after = (await listed()).length;
    // A window longer than its 4 s interval, in which a run would have started: what did not
    // happen has no state to wait for.
    await new Promise((r) => setTimeout(r, 5_000));
    expect((await listed()).length).toBe(after);
    const gone = await runTs(['client.ts', 'schedule', 'describe', id, '--json'], env);
    expect(gone.code).toBe(2);
    expect(JSON.parse(gone.stdout)).toMatchObject({ errorType: 'Client.NotFound' });
  });

  it('a run waiting for payment_received shows as waiting; client.ts event delivers the payload and it completes', async () => {
    const id = `agent-pay-${randomUUID().slice(0, 8)}`;
    const started = await runTs(
      ['client.ts', 'run', 'Wait for the payment.', '--tools', 'wait_for_event', '--id', id, '--wait', '2s'],
      env,
    );
    expect(started.code).toBe(3);
    let status: { state?: string; waits?: unknown[] } = {};
    await eventually(async () => {
      status = JSON.parse((await runTs(['client.ts', 'status', id, '--json'], env)).stdout);
      return status.state === 'waiting';
    }, 15_000);
    expect(status).toMatchObject({ state: 'waiting', waits: [{ kind: 'event', name: 'payment_received' }] });
    const text = await runTs(['client.ts', 'status', id], env);
    expect(text.stdout).toMatch(/payment_received/);

    const delivered = await runTs(['client.ts', 'event', id, 'payment_received', '{"amount":42}'], env);
    expect(delivered.code).toBe(0);
    expect(delivered.stdout).toContain(`Delivered payment_received to the run ${id}`);
    await eventually(async () => {
      status = JSON.parse((await runTs(['client.ts', 'status', id, '--json'], env)).stdout);
      return status.state === 'completed';
    }, 15_000);
    expect(status.state).toBe('completed');
    const history = await runTs(['client.ts', 'history', id, '--json'], env);
    const messages = JSON.parse(history.stdout).messages as { role: string; content: string }[];
    expect(messages.at(-1)!.content).toMatch(/^Paid: .*"amount":42/);
  });
});
