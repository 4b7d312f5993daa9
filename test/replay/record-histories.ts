/**
 * `npm run record-histories [-- name ...]`: runs the replay scenarios (all, or those named)
 * against a fresh in-memory dev server and writes their event histories to test/histories.
 * Re-record only on purpose: the replay test exists to catch workflow changes that break runs
 * already in flight.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@temporalio/client';
import { connectClient } from '../../src/connection/client-connection';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { NativeConnection } from '@temporalio/worker';
import { createAgentWorker } from '../../src/worker/create-agent-worker';
import { startDevServer } from '../../src/connection/dev-server';
import { installRuntimeLogging } from '../../src/telemetry/logging';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { answer, call, startModel, startScriptedModel } from '../helpers/scripted-model';
import {
  A2A_TASK_WORKFLOW_TYPE,
  LIST_AGENTS_WORKFLOW_TYPE,
  a2aTaskPushQuery,
  a2aTaskPushSignal,
  a2aTaskSaveSignal,
  SCHEDULED_TURN_WORKFLOW_TYPE,
} from '../../src/contracts/definitions';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { modelAt } from '../helpers/temporal';
import { bookingToolProvider, testAgents, testRegistry } from '../helpers/test-tools';
import { conversationScenarios, replayAgents, replayGuardrails, scenarios } from './scenarios';
import { defineAgent } from '../../src/agents/define-agent';
import { deploymentStatus, promoteBuild } from '../../src/client/deployments';
import { conversationStatus, endConversation, sendMessage } from '../../src/client/conversations';
import { readTenantUsage, setTenantBudget } from '../../src/client/tenants';
import { tenantLedgerId } from '../../src/contracts/tenant-ledger';
import { rateGovernorId } from '../../src/contracts/rate-governor';

async function main(only: string[]): Promise<void> {
  const memoryDir = mkdtempSync(join(tmpdir(), 'durable-agents-record-memory-'));
  installRuntimeLogging('ERROR');
  const wanted = (name: string) => only.length === 0 || only.includes(name);
  // A low continue-as-new threshold: the longer conversation scenario continues as new on its own.
  const server = await startDevServer(
    { dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 60 } },
    process.env,
  );
  const connection = await connectClient({ address: server.address });
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const client = new Client({ connection: connection.connection });
  const worker = async (
    name: string,
    baseURL: string,
    provider?: 'anthropic' | 'openai-responses',
    rateLimits?: Record<string, { requestsPerMinute: number }>,
    policies?: string,
  ) =>
    createAgentWorker({
      ...(policies ? { policies: { text: { [`${name}.cedar`]: policies } } } : {}),
      ...(rateLimits ? { rateLimits } : {}),
      connection: nativeConnection,
      taskQueue: `record-${name}`,
      model:
        provider === 'anthropic'
          ? {
              ...modelAt(baseURL),
              model: 'anthropic:claude-test',
              anthropic: { apiKey: 'test-key', baseURL: baseURL.replace(/\/v1$/, '') },
            }
          : provider === 'openai-responses'
            ? { ...modelAt(baseURL), model: 'openai-responses:gpt-test' }
            : modelAt(baseURL),
      registry: testRegistry(),
      agents: [...testAgents(), ...replayAgents()],
      guardrails: replayGuardrails(),
      toolProvider: bookingToolProvider,
      // Scenarios with memory keep it in a directory of the recording's own, not the project's.
      memory: { dir: memoryDir },
      shutdownGraceTime: '1s',
    });
  const write = (name: string, history: Parameters<typeof historyToJSON>[0]) => {
    writeFileSync(join(__dirname, '..', 'histories', `${name}.json`), `${historyToJSON(history)}\n`);
    console.log(`${name}: ${history.events?.length} events`);
  };
  try {
    for (const scenario of scenarios.filter((s) => wanted(s.name))) {
      const model = await startScriptedModel(scenario.steps);
      const w = await worker(scenario.name, model.baseURL, scenario.provider, undefined, scenario.policies);
      const outcome = await w.runUntil(async () => {
        const handle = await startAgentRun(client, scenario.input, {
          taskQueue: `record-${scenario.name}`,
          workflowId: `agent-replay-${scenario.name}`,
        });
        await scenario.drive?.(client, handle.workflowId);
        return runOutcome(handle);
      });
      await model.close();
      write(scenario.name, await client.workflow.getHandle(outcome.workflowId).fetchHistory());
      // Agents it called as tools: their runs' histories too (a child's own commands replay from them).
      if (scenario.recordChildren)
        for (const [i, e] of outcome.toolExecutions.filter((x) => x.childWorkflowId).entries())
          write(`${scenario.name}-child${i + 1}`, await client.workflow.getHandle(e.childWorkflowId!).fetchHistory());
    }
    for (const scenario of conversationScenarios.filter((s) => wanted(s.name))) {
      const model = await startModel(scenario.model);
      const w = await worker(scenario.name, model.baseURL);
      const id = `replay-${scenario.name}`;
      await w.runUntil(scenario.drive(client, id, `record-${scenario.name}`));
      await model.close();
      // Every run of the conversation: the first ones end in continue-as-new.
      const runs: string[] = [];
      for await (const execution of client.workflow.list({ query: `WorkflowId = '${id}'` })) runs.push(execution.runId);
      const histories = await Promise.all(runs.map((runId) => client.workflow.getHandle(id, runId).fetchHistory()));
      histories.forEach((history, i) =>
        write(runs.length === 1 ? scenario.name : `${scenario.name}-run${runs.length - i}`, history),
      );
    }
    // A one-shot run long enough to continue as new twice (the server suggests it after 60
    // events here): each run's history, the first ones ending in continue-as-new.
    if (wanted('run-continue-as-new')) {
      const model = await startModel((req) => {
        const n = req.messages.filter((m) => m.role === 'tool').length;
        return n < 18 ? call(['add', { a: n, b: 1 }]) : answer(`added ${n} times`);
      });
      const w = await worker('run-continue-as-new', model.baseURL);
      const id = 'agent-replay-run-continue-as-new';
      await w.runUntil(async () =>
        runOutcome(
          await startAgentRun(
            client,
            { message: 'Add up.', system: 'Be exact.', tools: ['add'], maxIterations: 30 },
            { taskQueue: 'record-run-continue-as-new', workflowId: id },
          ),
        ),
      );
      await model.close();
      const runs: string[] = [];
      for await (const execution of client.workflow.list({ query: `WorkflowId = '${id}'` })) runs.push(execution.runId);
      const histories = await Promise.all(runs.map((runId) => client.workflow.getHandle(id, runId).fetchHistory()));
      histories.forEach((history, i) => write(`run-continue-as-new-run${runs.length - i}`, history));
    }
    // A model's rate governor: turns for calls at once, a 429 that pauses it, the turns after.
    if (wanted('rate-governor')) {
      let asked = 0;
      const model = await startModel(() =>
        ++asked === 2
          ? { http: { status: 429, body: { error: { message: 'slow down' } }, headers: { 'retry-after': '1' } } }
          : answer('paced'),
      );
      const w = await worker('rate-governor', model.baseURL, undefined, { scripted: { requestsPerMinute: 600 } });
      const taskQueue = 'record-rate-governor';
      await w.runUntil(
        Promise.all(
          ['one', 'two', 'three'].map(async (message) =>
            runOutcome(await startAgentRun(client, { message }, { taskQueue })),
          ),
        ),
      );
      await model.close();
      write('rate-governor', await client.workflow.getHandle(rateGovernorId('scripted')).fetchHistory());
    }
    // A tenant's ledger: a budget set, a run's reservation and settlement, a run it refuses, usage read.
    if (wanted('tenant-ledger')) {
      const model = await startModel(() => answer('counted'));
      const w = await worker('tenant-ledger', model.baseURL);
      const taskQueue = 'record-tenant-ledger';
      await w.runUntil(async () => {
        await setTenantBudget(client, 'replay-tenant', { tokens: 1, per: 'day' });
        for (const message of ['first', 'refused'])
          await runOutcome(await startAgentRun(client, { message, tenant: 'replay-tenant' }, { taskQueue }));
        await readTenantUsage(client, 'replay-tenant');
      });
      await model.close();
      write('tenant-ledger', await client.workflow.getHandle(tenantLedgerId('replay-tenant')).fetchHistory());
    }
    // What a schedule that targets a conversation starts: one activity that sends the message.
    if (wanted('scheduled-turn')) {
      const model = await startModel(() => answer('good morning'));
      const w = await worker('scheduled-turn', model.baseURL);
      const id = 'replay-scheduled-turn';
      await w.runUntil(
        client.workflow.execute(SCHEDULED_TURN_WORKFLOW_TYPE, {
          taskQueue: 'record-scheduled-turn',
          workflowId: id,
          args: [{ conversationId: 'replay-scheduled-conversation', turn: { message: 'Good morning' } }],
        }),
      );
      await model.close();
      write('scheduled-turn', await client.workflow.getHandle(id).fetchHistory());
    }
    // What `agents` and `GET /agents` start: a workflow that asks a worker for its agents.
    if (wanted('list-agents')) {
      const model = await startModel(() => answer('unused'));
      const w = await worker('list-agents', model.baseURL);
      const id = 'replay-list-agents';
      await w.runUntil(
        client.workflow.execute(LIST_AGENTS_WORKFLOW_TYPE, { taskQueue: 'record-list-agents', workflowId: id }),
      );
      await model.close();
      write('list-agents', await client.workflow.getHandle(id).fetchHistory());
    }
    // An A2A task's record: saved as working, then saved final (and so ended).
    if (wanted('a2a-task')) {
      const model = await startModel(() => answer('unused'));
      const w = await worker('a2a-task', model.baseURL);
      const id = 'replay-a2a-task';
      const task = (state: string) => ({ id: 't1', contextId: 'c1', status: { state }, metadata: { turn: 1 } });
      await w.runUntil(async () => {
        const handle = await client.workflow.signalWithStart(A2A_TASK_WORKFLOW_TYPE, {
          taskQueue: 'record-a2a-task',
          workflowId: id,
          args: [],
          signal: a2aTaskSaveSignal,
          signalArgs: [{ task: task('TASK_STATE_WORKING'), final: false }],
        });
        await handle.signal(a2aTaskSaveSignal, { task: task('TASK_STATE_COMPLETED'), final: true });
        await handle.result();
      });
      await model.close();
      write('a2a-task', await client.workflow.getHandle(id).fetchHistory());
    }
    // The same since the record keeps the task's state and time in its memo (patch a2a-task-memo).
    if (wanted('a2a-task-memo')) {
      const model = await startModel(() => answer('unused'));
      const w = await worker('a2a-task-memo', model.baseURL);
      const id = 'replay-a2a-task-memo';
      const task = (state: string, timestamp: string) => ({
        id: 't4',
        contextId: 'c4',
        status: { state, timestamp },
        metadata: { turn: 1 },
      });
      await w.runUntil(async () => {
        const handle = await client.workflow.signalWithStart(A2A_TASK_WORKFLOW_TYPE, {
          taskQueue: 'record-a2a-task-memo',
          workflowId: id,
          args: [],
          signal: a2aTaskSaveSignal,
          signalArgs: [{ task: task('TASK_STATE_WORKING', '2026-11-28T10:00:00.000Z'), final: false }],
        });
        await handle.signal(a2aTaskSaveSignal, {
          task: task('TASK_STATE_COMPLETED', '2026-11-28T10:00:01.000Z'),
          final: true,
        });
        await handle.result();
      });
      await model.close();
      write('a2a-task-memo', await client.workflow.getHandle(id).fetchHistory());
    }
    // The same with a push notification config: each change of state goes to the webhook by an activity.
    if (wanted('a2a-task-push')) {
      const hook = createServer((_req, res) => res.writeHead(200).end());
      hook.listen(0, '127.0.0.1');
      await once(hook, 'listening');
      const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
      const model = await startModel(() => answer('unused'));
      const w = await worker('a2a-task-push', model.baseURL);
      const id = 'replay-a2a-task-push';
      const task = (state: string) => ({ id: 't2', contextId: 'c2', status: { state }, metadata: { turn: 1 } });
      await w.runUntil(async () => {
        const handle = await client.workflow.signalWithStart(A2A_TASK_WORKFLOW_TYPE, {
          taskQueue: 'record-a2a-task-push',
          workflowId: id,
          args: [],
          signal: a2aTaskPushSignal,
          signalArgs: [{ set: { id: 'hook', url, headers: { 'X-A2A-Notification-Token': 't' }, config: { url } } }],
        });
        await handle.signal(a2aTaskSaveSignal, { task: task('TASK_STATE_WORKING'), final: false });
        await handle.signal(a2aTaskSaveSignal, { task: task('TASK_STATE_COMPLETED'), final: true });
        await handle.result();
      });
      await model.close();
      hook.close();
      write('a2a-task-push', await client.workflow.getHandle(id).fetchHistory());
    }
    // An ended task's record keeps its push configs for an hour (patch a2a-task-keeps-configs):
    // one set after the end, while the record waits; recorded as it waits.
    if (wanted('a2a-task-keeps-configs')) {
      const model = await startModel(() => answer('unused'));
      const w = await worker('a2a-task-keeps-configs', model.baseURL);
      const id = 'replay-a2a-task-keeps-configs';
      const task = (state: string) => ({ id: 't5', contextId: 'c5', status: { state }, metadata: { turn: 1 } });
      const url = 'http://127.0.0.1:9/hook';
      await w.runUntil(async () => {
        const handle = await client.workflow.signalWithStart(A2A_TASK_WORKFLOW_TYPE, {
          taskQueue: 'record-a2a-task-keeps-configs',
          workflowId: id,
          args: [],
          signal: a2aTaskSaveSignal,
          signalArgs: [{ task: task('TASK_STATE_COMPLETED'), final: true }],
        });
        await handle.signal(a2aTaskPushSignal, { set: { id: 'late', url, headers: {}, config: { url } } });
        for (let i = 0; i < 100 && (await handle.query(a2aTaskPushQuery)).length === 0; i++)
          await new Promise((r) => setTimeout(r, 50));
        await handle.signal(a2aTaskPushSignal, { remove: 'late' });
        for (let i = 0; i < 100 && (await handle.query(a2aTaskPushQuery)).length > 0; i++)
          await new Promise((r) => setTimeout(r, 50));
      });
      await model.close();
      write('a2a-task-keeps-configs', await client.workflow.getHandle(id).fetchHistory());
      await client.workflow.getHandle(id).terminate('recorded');
    }
    // An A2A task whose server went away mid-task: the record waits for the task's turn in its
    // conversation by itself (awaitA2aTaskEnd) and ends with the turn's answer.
    if (wanted('a2a-task-turn-ended')) {
      const model = await startModel(() => answer('the report'));
      const w = await worker('a2a-task-turn-ended', model.baseURL);
      const id = 'replay-a2a-task-turn-ended';
      const contextId = 'replay-a2a-conversation';
      await w.runUntil(async () => {
        await sendMessage(client, contextId, { message: 'write it' }, { taskQueue: 'record-a2a-task-turn-ended' });
        const handle = await client.workflow.signalWithStart(A2A_TASK_WORKFLOW_TYPE, {
          taskQueue: 'record-a2a-task-turn-ended',
          workflowId: id,
          args: [],
          signal: a2aTaskSaveSignal,
          signalArgs: [
            {
              task: { id: 't3', contextId, status: { state: 'TASK_STATE_WORKING' }, metadata: { turn: 1 } },
              final: false,
            },
          ],
        });
        await handle.result();
        await endConversation(client, contextId);
      });
      await model.close();
      write('a2a-task-turn-ended', await client.workflow.getHandle(id).fetchHistory());
    }
    // Worker Versioning: a conversation on build A, promoted to B while idle, moves (the nudge,
    // continue-as-new onto the current build, the agent resolved again) and answers its next turn on B.
    if (wanted('conversation-new-build')) {
      const model = await startModel((req) => answer(`[${String(req.messages[0]?.content)}]`));
      const deployment = 'record-deploy';
      const taskQueue = 'record-conversation-new-build';
      const build = (buildId: string) =>
        createAgentWorker({
          connection: nativeConnection,
          taskQueue,
          model: modelAt(model.baseURL),
          agents: [defineAgent({ name: 'support', instructions: `You are build ${buildId}.`, tools: [] })],
          deployment: { name: deployment, buildId },
          shutdownGraceTime: '1s',
        });
      const id = 'replay-conversation-new-build';
      const start = { taskQueue, options: { agent: 'support' } };
      const live = async (buildId: string) => {
        for (;;) {
          const report = await deploymentStatus(client, deployment).catch(() => undefined);
          if (report?.builds.some((b) => b.buildId === buildId)) return;
          await new Promise((r) => setTimeout(r, 200));
        }
      };
      const a = await build('A');
      await a.runUntil(async () => {
        await live('A');
        await promoteBuild(client, deployment, 'A');
        await sendMessage(client, id, { message: 'hello' }, start);
        const b = await build('B');
        await b.runUntil(async () => {
          await live('B');
          // Temporal refuses the promotion until B's workers poll every task queue A's do: try again.
          for (let tries = 0; ; tries++) {
            const promoted = await promoteBuild(client, deployment, 'B').catch((err: Error) => err);
            if (!(promoted instanceof Error)) break;
            if (tries >= 50) throw promoted;
            await new Promise((r) => setTimeout(r, 200));
          }
          for (;;) {
            const s = await conversationStatus(client, id);
            if (s.buildId === 'B') break;
            await new Promise((r) => setTimeout(r, 200));
          }
          const turn = await sendMessage(client, id, { message: 'and now?' }, start);
          if (turn.buildId !== 'B') throw new Error(`the second turn ran on ${turn.buildId}`);
          await endConversation(client, id);
        });
      });
      await model.close();
      const runs: string[] = [];
      for await (const execution of client.workflow.list({ query: `WorkflowId = '${id}'` })) runs.push(execution.runId);
      const histories = await Promise.all(runs.map((runId) => client.workflow.getHandle(id, runId).fetchHistory()));
      histories.forEach((history, i) => write(`conversation-new-build-run${runs.length - i}`, history));
    }
  } finally {
    await connection.close();
    await nativeConnection.close();
    await server.stop();
  }
}

main(process.argv.slice(2)).catch((err) => {
  console.error(err);
  process.exit(1);
});
