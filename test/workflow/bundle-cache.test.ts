import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker, type WorkerOptions } from '@temporalio/worker';
import { SimplePlugin } from '@temporalio/plugin';
import { calculatorAgent } from '../../scripts/demo-agents/agents';
import { AgentsPlugin } from '../../src/worker/agents-plugin';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { answer, call, startModel, toolResults } from '../helpers/scripted-model';
import { modelAt, useTestTemporal } from '../helpers/temporal';

/**
 * The workflow bundle cache through the plugin, as a worker uses it: the first start bundles with
 * webpack and saves the bundle; the next one starts from it, without webpack, and runs the same
 * workflows (the user's and the agents'); another plugin that configures the bundler turns it off.
 */
const temporal = useTestTemporal();
const userWorkflows = require.resolve('../fixtures/user-workflows');
const dir = mkdtempSync(join(tmpdir(), 'durable-agents-bundle-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('saves the bundle at the first start and starts from it the next time, running both kinds of workflows', async () => {
  const model = await startModel((req) =>
    req.messages.some((m) => m.role === 'tool')
      ? answer(`it is ${toolResults(req)[0]}`)
      : call(['add', { a: 2, b: 3 }]),
  );
  const t = temporal();
  const plugin = () =>
    new AgentsPlugin({ agents: [calculatorAgent], model: modelAt(model.baseURL), bundleCache: join(dir, 'cache') });
  const options = (p: AgentsPlugin): WorkerOptions => ({
    connection: t.nativeConnection,
    taskQueue: `bundle-cache-${randomUUID()}`,
    workflowsPath: userWorkflows,
    plugins: [p],
    shutdownGraceTime: '1s',
  });

  // Cold: nothing cached, so the SDK bundles (the plugin's hook saves what it makes).
  const first = plugin();
  expect(first.configureWorker(options(first)).workflowBundle).toBeUndefined();
  await (await Worker.create(options(first))).runUntil(Promise.resolve());
  expect(readdirSync(join(dir, 'cache')).sort()).toEqual([
    expect.stringMatching(/\.js$/),
    expect.stringMatching(/\.json$/),
  ]);

  // Warm: the bundle is given to the worker whole; webpack does not run.
  const second = plugin();
  const warm = second.configureWorker(options(second));
  expect(warm.workflowsPath).toBeUndefined();
  expect(warm.workflowBundle).toEqual({ code: expect.stringContaining('triageWorkflow') });
  const worker = await Worker.create(options(second));
  const taskQueue = worker.options.taskQueue;
  await worker.runUntil(async () => {
    expect(
      await t.client.workflow.execute('triageWorkflow', {
        taskQueue,
        workflowId: `triage-${randomUUID()}`,
        args: ['add 2 and 3'],
      }),
    ).toBe('the agent said: it is 5');
    const run = await runOutcome(
      await startAgentRun(t.client, { agent: 'calculator', message: 'add 2 and 3' }, { taskQueue }),
    );
    expect(run).toMatchObject({ status: 'completed', content: 'it is 5' });
  });
});

it('is not used with another plugin that configures the bundler, nor when turned off', () => {
  const ours = new AgentsPlugin({ model: modelAt('http://127.0.0.1:1/v1'), bundleCache: join(dir, 'cache') });
  const other = new SimplePlugin({ name: 'other' }); // a SimplePlugin always has configureBundler
  const withOther = ours.configureWorker({ taskQueue: 'q', workflowsPath: userWorkflows, plugins: [ours, other] });
  expect(withOther.workflowBundle).toBeUndefined();
  expect(withOther.bundlerOptions?.webpackConfigHook).toBeUndefined();
  const off = new AgentsPlugin({ model: modelAt('http://127.0.0.1:1/v1'), bundleCache: false });
  const unchanged = off.configureWorker({ taskQueue: 'q', workflowsPath: userWorkflows, plugins: [off] });
  expect(unchanged).toMatchObject({ workflowsPath: userWorkflows });
  expect(unchanged.workflowBundle).toBeUndefined();
  expect(unchanged.bundlerOptions?.webpackConfigHook).toBeUndefined();
});
