import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { calculatorAgent } from '../../scripts/demo-agents/agents';
import { AgentsPlugin } from '../../src/worker/agents-plugin';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { answer, call, startModel, toolResults } from '../helpers/scripted-model';
import { modelAt, useTestTemporal } from '../helpers/temporal';

/** AgentsPlugin in a worker of the user's own: their workflows and the agent workflows, side by side. */
const temporal = useTestTemporal();
const userWorkflows = require.resolve('../fixtures/user-workflows');

it("adds the agents to a worker with the user's own workflows; a user workflow runs an agent as a child", async () => {
  const model = await startModel((req) =>
    req.messages.some((m) => m.role === 'tool')
      ? answer(`it is ${toolResults(req)[0]}`)
      : call(['add', { a: 2, b: 3 }]),
  );
  const t = temporal();
  const taskQueue = `plugin-${randomUUID()}`;
  const plugin = new AgentsPlugin({ agents: [calculatorAgent], model: modelAt(model.baseURL) });
  const worker = await Worker.create({
    connection: t.nativeConnection,
    taskQueue,
    workflowsPath: userWorkflows,
    plugins: [plugin],
    shutdownGraceTime: '1s',
  });
  await worker.runUntil(async () => {
    expect(await t.client.workflow.execute('plainWorkflow', { taskQueue, workflowId: `plain-${randomUUID()}` })).toBe(
      'plain',
    );

    const parentId = `triage-${randomUUID()}`;
    expect(
      await t.client.workflow.execute('triageWorkflow', { taskQueue, workflowId: parentId, args: ['add 2 and 3'] }),
    ).toBe('the agent said: it is 5');
    const child = await t.client.workflow.getHandle('triage-child-11-calculator').describe();
    expect(child.type).toBe('agentWorkflow');
    expect(child.parentExecution?.workflowId).toBe(parentId);

    const failed = await t.client.workflow.execute('triageWorkflow', {
      taskQueue,
      workflowId: `triage-${randomUUID()}`,
      args: ['add 2 and 3', 'astrologer'],
    });
    expect(failed).toBe(
      `the agent failed: Agent.UnknownAgent: no agent named "astrologer" on task queue "${taskQueue}" (its workers serve: calculator)`,
    );

    // The agent workflows are there for clients too.
    const direct = await runOutcome(
      await startAgentRun(t.client, { agent: 'calculator', message: 'add 2 and 3' }, { taskQueue }),
    );
    expect(direct).toMatchObject({ status: 'completed', content: 'it is 5' });
  });
});

/** A logger that keeps what the bundler says, by level. */
function recordingLogger() {
  const said: Record<string, string[]> = { info: [], warn: [], error: [] };
  const keep = (level: string) => (message: string) => void (said[level] ??= []).push(message);
  return {
    said,
    logger: {
      log: () => undefined,
      trace: () => undefined,
      debug: () => undefined,
      info: keep('info'),
      warn: keep('warn'),
      error: keep('error'),
    },
  };
}

it('keeps worker-side libraries out of a workflow bundle that imports durable-agents/workflow; writes no file and reports in one line', async () => {
  const plugin = new AgentsPlugin({ model: modelAt('http://127.0.0.1:1/v1') });
  const generated = join(tmpdir(), 'durable-agents-workflows');
  const before = existsSync(generated) ? readdirSync(generated) : [];
  const { said, logger } = recordingLogger();
  // The bundler itself refuses Node built-ins in workflow code; openai and zod would bundle, so look for them.
  const { code } = await bundleWorkflowCode({ workflowsPath: userWorkflows, plugins: [plugin], logger });
  expect(code).toContain('triageWorkflow');
  expect(code).toContain('conversationWorkflow');
  expect(code).not.toMatch(/node_modules\/(openai|zod)\//);
  // The user's workflows and ours are joined by a module of the package, not a generated file.
  expect(existsSync(generated) ? readdirSync(generated) : []).toEqual(before);
  // Webpack's report is one line, without warnings; `bundlerReport: 'full'` keeps the SDK's.
  expect(said.info.filter((m) => !m.startsWith('Workflow bundle created'))).toEqual([
    expect.stringMatching(/^bundled \d+ modules in \d+ ms$/),
  ]);
  expect([...said.warn, ...said.error]).toEqual([]);
  const full = recordingLogger();
  await bundleWorkflowCode({
    workflowsPath: userWorkflows,
    plugins: [new AgentsPlugin({ model: modelAt('http://127.0.0.1:1/v1'), bundlerReport: 'full' })],
    logger: full.logger,
  });
  expect(full.said.info.join('\n')).toMatch(/modules by path[\s\S]*webpack \d+\.\d+\.\d+ compiled successfully/);
});
