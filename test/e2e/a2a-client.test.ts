import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { AGENT_CARD_PATH, AgentCard, Role, TaskState, type Task } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { defineAgent } from '../../src/agents/define-agent';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { decideApproval, readStatus } from '../../src/client/workflow-controls';
import { keptEvents } from '../../src/client/event-stream';
import { a2aAgent } from '../../src/tools/a2a-client/a2a-agent';
import { ToolRegistry } from '../../src/tools/registry';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { eventually } from '../helpers/processes';
import { call, lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/** A remote agent served by the official A2A SDK (another framework's agent, as far as we know), used as a tool. */
const temporal = useTestTemporal();

/** A remote agent that takes `workMs` per task and counts the tasks it was given. */
async function remoteAgent(workMs: number): Promise<{ server: Server; url: string; tasks: string[] }> {
  const tasks: string[] = [];
  return serve(tasks, {
    async execute(ctx: RequestContext, bus: ExecutionEventBus) {
      tasks.push(ctx.taskId);
      const text = ctx.userMessage.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
      const status = (state: TaskState) => ({ state, message: undefined, timestamp: new Date().toISOString() });
      const task: Task = {
        id: ctx.taskId,
        contextId: ctx.contextId,
        status: status(TaskState.TASK_STATE_WORKING),
        artifacts: [],
        history: [ctx.userMessage],
        metadata: undefined,
      };
      bus.publish(AgentEvent.task(task));
      await new Promise((r) => setTimeout(r, workMs));
      const part = {
        content: { $case: 'text' as const, value: `findings on ${text}` },
        metadata: undefined,
        filename: '',
        mediaType: 'text/plain',
      };
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId: ctx.taskId,
          contextId: ctx.contextId,
          artifact: {
            artifactId: 'a',
            name: 'findings',
            description: '',
            parts: [part],
            metadata: undefined,
            extensions: [],
          },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
      bus.publish(
        AgentEvent.statusUpdate({
          taskId: ctx.taskId,
          contextId: ctx.contextId,
          status: status(TaskState.TASK_STATE_COMPLETED),
          metadata: undefined,
        }),
      );
      bus.finished();
    },
    async cancelTask() {},
  });
}

/** A remote agent that asks which account to pay from, then pays from the one it is told. */
async function payingAgent(): Promise<{ server: Server; url: string; tasks: string[]; told: string[] }> {
  const tasks: string[] = [];
  const told: string[] = [];
  const say = (text: string) => ({
    messageId: `m-${told.length}-${text.length}`,
    contextId: '',
    taskId: '',
    role: Role.ROLE_AGENT,
    parts: [
      { content: { $case: 'text' as const, value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' },
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  });
  const served = await serve(tasks, {
    async execute(ctx: RequestContext, bus: ExecutionEventBus) {
      const text = ctx.userMessage.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
      const status = (state: TaskState, message?: string) => ({
        state,
        message: message ? say(message) : undefined,
        timestamp: new Date().toISOString(),
      });
      const update = (state: TaskState, message?: string) =>
        bus.publish(
          AgentEvent.statusUpdate({
            taskId: ctx.taskId,
            contextId: ctx.contextId,
            status: status(state, message),
            metadata: undefined,
          }),
        );
      if (!ctx.task) {
        tasks.push(ctx.taskId);
        bus.publish(
          AgentEvent.task({
            id: ctx.taskId,
            contextId: ctx.contextId,
            status: status(TaskState.TASK_STATE_WORKING),
            artifacts: [],
            history: [ctx.userMessage],
            metadata: undefined,
          }),
        );
        update(TaskState.TASK_STATE_INPUT_REQUIRED, 'Which account should I pay from?');
      } else {
        told.push(text);
        update(TaskState.TASK_STATE_COMPLETED, `paid from ${text}`);
      }
      bus.finished();
    },
    async cancelTask() {},
  });
  return { ...served, told };
}

async function serve(
  tasks: string[],
  executor: AgentExecutor,
): Promise<{ server: Server; url: string; tasks: string[] }> {
  const app = express();
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/research`;
  const card = AgentCard.fromJSON({
    name: 'research',
    description: 'Finds things out',
    version: '1.0.0',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'research', name: 'research', description: 'Finds things out', tags: [] }],
  });
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.use(`/research/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
  app.use('/research', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  void Role; // the SDK's message roles, for readers of this test
  return { server, url, tasks };
}

function model(req: ChatRequest) {
  const last = req.messages[req.messages.length - 1];
  if (last.role === 'tool') return { content: `The researcher says: ${String(last.content)}` };
  return call(['research', { message: lastOf(req, 'user') }]);
}

it('calls a remote A2A agent as a tool; a worker that stops mid-task leaves one remote task, followed to its end by the next worker', async () => {
  const remote = await remoteAgent(4_000);
  const m = await startModel(model);
  const t = temporal();
  const registry = new ToolRegistry().register(a2aAgent({ url: remote.url, description: 'Finds things out' }));
  const agent = defineAgent({ name: 'asker', instructions: 'Ask the researcher.', tools: ['research'] });
  const first = await createTestWorker(t, { baseURL: m.baseURL, registry, agents: [agent] });
  const running = first.worker.run();
  try {
    const handle = await startAgentRun(
      t.client,
      { agent: 'asker', message: 'durable agents' },
      { taskQueue: first.taskQueue },
    );
    // The remote task runs; this worker goes away in the middle of it.
    expect(await eventually(() => remote.tasks.length === 1, 30_000)).toBe(true);
    // Into the task's work (the remote agent takes seconds): the worker leaves it mid-way.
    await new Promise((r) => setTimeout(r, 500));
    first.worker.shutdown();
    await running;
    const second = await createTestWorker(t, {
      baseURL: m.baseURL,
      registry,
      agents: [agent],
      taskQueue: first.taskQueue,
    });
    const outcome = await second.worker.runUntil(runOutcome(handle));
    expect(outcome).toMatchObject({ status: 'completed', content: 'The researcher says: findings on durable agents' });
    expect(remote.tasks).toHaveLength(1);
  } finally {
    if (first.worker.getState() === 'RUNNING') first.worker.shutdown();
    await running.catch(() => undefined);
    remote.server.close();
  }
}, 120_000);

it('asks a person in our run when the remote agent needs input, and sends their answer to the remote task', async () => {
  const remote = await payingAgent();
  const m = await startModel((req) => {
    const last = req.messages[req.messages.length - 1];
    if (last.role === 'tool') return { content: `Done: ${String(last.content)}` };
    return call(['payer', { message: 'pay the invoice' }]);
  });
  const t = temporal();
  const registry = new ToolRegistry().register(
    a2aAgent({ url: remote.url, name: 'payer', description: 'Pays invoices', maxPollMs: 200 }),
  );
  const agent = defineAgent({ name: 'clerk', instructions: 'Pay.', tools: ['payer'] });
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: m.baseURL, registry, agents: [agent] });
  try {
    await worker.runUntil(async () => {
      const handle = await startAgentRun(t.client, { agent: 'clerk', message: 'pay it' }, { taskQueue });
      // The remote question waits in our run, as an approval a person answers.
      let status = await readStatus(t.client, handle.workflowId);
      expect(
        await eventually(async () => {
          status = await readStatus(t.client, handle.workflowId);
          return status.pendingApprovals.length === 1;
        }),
      ).toBe(true);
      expect(status.state).toBe('awaiting_approval');
      expect(status.pendingApprovals[0]).toMatchObject({
        name: 'payer',
        question: 'payer asks: Which account should I pay from?',
        summary: 'payer asks: Which account should I pay from?',
      });
      const events = await keptEvents(t.client, handle.workflowId);
      expect(events.find((e) => e.type === 'approval_requested')).toMatchObject({
        question: 'payer asks: Which account should I pay from?',
      });
      await decideApproval(t.client, handle.workflowId, {
        callId: status.pendingApprovals[0].callId,
        approve: true,
        reason: 'account 42',
      });
      const outcome = await runOutcome(handle);
      expect(outcome).toMatchObject({ status: 'completed', content: 'Done: paid from account 42' });
      // One remote task, told the answer once; the run's tool execution is not marked as approved.
      expect(remote.tasks).toHaveLength(1);
      expect(remote.told).toEqual(['account 42']);
      expect(outcome.toolExecutions?.[0].approval).toBeUndefined();
    });
  } finally {
    remote.server.close();
  }
}, 120_000);
