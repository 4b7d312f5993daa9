import { randomUUID } from 'node:crypto';
import { freePort } from '../../src/connection/dev-server';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Message, TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import type { Worker } from '@temporalio/worker';
import { defineAgent } from '../../src/agents/define-agent';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { a2aAgent } from '../../src/tools/a2a-client/a2a-agent';
import {
  startOpenAICompatibleServer,
  type ChatRequest,
  type OpenAICompatibleServer,
} from '../../src/testing/openai-compatible-server';
import { cleanEnv, eventually, startTs, type Started } from '../helpers/processes';
import { call } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';
import { testRegistry } from '../helpers/test-tools';
import { taskWorkflowId } from '../../src/a2a/task-store';

/**
 * The A2A server as its own process (`durable-agents a2a`), as others' clients and our own
 * `a2aAgent` meet it: non-blocking sends followed to their end, and a server killed in the middle
 * of a task and started again (the task is read back from Temporal, a resubscription follows it,
 * and its webhook gets the final state without anyone asking). One worker and one server process
 * for the file.
 */
// Before useTestTemporal's: the worker lets go of the connection before the connection closes.
afterAll(async () => {
  for (const g of gates.values()) g.open();
  server?.kill('SIGKILL');
  await server?.exited;
  worker?.shutdown();
  await running;
  await model?.close();
});
const temporal = useTestTemporal();

const stateOf = (u: StreamResponse) =>
  u.payload?.$case === 'statusUpdate'
    ? u.payload.value.status?.state
    : u.payload?.$case === 'task'
      ? u.payload.value.status?.state
      : undefined;

const userMessage = (text: string) =>
  Message.fromJSON({ messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] });

/**
 * Messages the writer may not answer yet: each waits for its gate (every attempt of its model
 * call: a held call times out and is retried) until the test opens it.
 */
const gates = new Map<string, { opened: Promise<void>; open: () => void }>();
const gate = (text: string) => {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  gates.set(text, { opened, open });
};
const release = (text: string) => gates.get(text)!.open();
let asked: string[] = [];

/** The writer answers every message; a message starting "hold" waits until the test releases it. */
async function writerModel(req: ChatRequest) {
  const system = String(req.messages[0]?.content ?? '');
  const last = req.messages[req.messages.length - 1];
  if (system.includes('You manage')) {
    // The manager: asks the writer (our own A2A agent) through the a2aAgent tool, then reports.
    if (last.role === 'tool') return { content: `The writer says: ${String(last.content)}` };
    return call(['ask_writer', { message: 'write the summary' }]);
  }
  const text = String(req.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
  asked.push(text);
  await gates.get(text)?.opened;
  return { content: `done: ${text}` };
}

// The file's own model server: the scripted models of `startModel` close after each test.
let model: OpenAICompatibleServer;
let worker: Worker;
let running: Promise<void>;
let server: Started | undefined;
let port: number;
let env: NodeJS.ProcessEnv;
const startServer = async () => {
  server = await startTs(['client.ts', 'a2a', '--port', String(port)], env, /Press Ctrl\+C/, 120_000);
  return server;
};
const cardUrl = () => `http://127.0.0.1:${port}/a2a/writer/`;

beforeAll(async () => {
  model = await startOpenAICompatibleServer(writerModel);
  port = await freePort();
  const writer = defineAgent({ name: 'writer', description: 'Writes reports', instructions: 'Write.', tools: [] });
  // Our own A2A client, calling our own A2A server (which serves the writer of this same worker).
  const askWriter = a2aAgent({
    url: `http://127.0.0.1:${port}/a2a/writer`,
    name: 'ask_writer',
    description: 'Asks the writer',
    maxPollMs: 200,
  });
  const manager = defineAgent({ name: 'manager', instructions: 'You manage the writer.', tools: [askWriter] });
  const t = temporal();
  const created = await createTestWorker(t, {
    baseURL: model.baseURL,
    registry: testRegistry(),
    agents: [writer, manager],
  });
  worker = created.worker;
  running = worker.run();
  env = cleanEnv({ TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!, AGENT_TASK_QUEUE: created.taskQueue });
  await startServer();
}, 180_000);

beforeEach(() => {
  asked = [];
});

it('an agent of ours calls an agent of ours over A2A (a2aAgent, non-blocking sends) and gets its answer', async () => {
  const t = temporal();
  const run = await startAgentRun(
    t.client,
    { agent: 'manager', message: 'get me the summary' },
    { taskQueue: env.AGENT_TASK_QUEUE! },
  );
  const outcome = await runOutcome(run);
  expect(outcome).toMatchObject({ status: 'completed', content: 'The writer says: done: write the summary' });
  expect(asked).toEqual(['write the summary']);
}, 60_000);

it('answers a non-blocking send at once and GetTask follows the task to COMPLETED (JSON-RPC and HTTP+JSON)', async () => {
  for (const binding of ['JSONRPC', 'HTTP+JSON']) {
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [binding] }),
    );
    const client = await factory.createFromUrl(cardUrl());
    const text = `hold ${binding}`;
    gate(text);
    const sent = (await client.sendMessage({
      tenant: '',
      message: userMessage(text),
      configuration: { acceptedOutputModes: [], returnImmediately: true, taskPushNotificationConfig: undefined },
      metadata: undefined,
    })) as Task;
    expect(sent.status?.state).not.toBe(TaskState.TASK_STATE_FAILED);
    expect(await eventually(() => asked.includes(text), 30_000)).toBe(true);
    // Well after the send's response closed, the task is still alive and not failed (a window in
    // which a task bound to its request would have failed: there is no state to wait for).
    await new Promise((r) => setTimeout(r, 1_000));
    const working = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
    expect(working.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    release(text);
    let task = working;
    expect(
      await eventually(async () => {
        task = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
        return task.status?.state === TaskState.TASK_STATE_COMPLETED;
      }, 30_000),
    ).toBe(true);
    expect(task.artifacts[0].parts[0].content).toMatchObject({ value: `done: ${text}` });
  }
}, 90_000);

it('answers GetTask and SubscribeToTask for a task whose server was killed mid-task, and its webhook gets the final state without anyone asking', async () => {
  const received: Array<{ state?: string; token?: string }> = [];
  const hook: Server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.push({
        state: JSON.parse(body).task?.status?.state,
        token: req.headers['x-a2a-notification-token'] as string | undefined,
      });
      res.writeHead(200).end();
    });
  });
  hook.listen(0, '127.0.0.1');
  await once(hook, 'listening');
  const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/events`;
  try {
    const pushConfig = (id: string) => ({
      tenant: '',
      id,
      taskId: '',
      url: hookUrl,
      token: 'tok',
      authentication: undefined,
    });
    const follow = async (text: string) => {
      const client = await new ClientFactory().createFromUrl(cardUrl());
      const stream = client.sendMessageStream({
        tenant: '',
        message: userMessage(text),
        configuration: {
          acceptedOutputModes: [],
          returnImmediately: false,
          taskPushNotificationConfig: pushConfig(text),
        },
        metadata: undefined,
      });
      let taskId: string | undefined;
      for await (const u of stream) {
        if (u.payload?.$case === 'task') taskId = u.payload.value.id;
        if (stateOf(u) === TaskState.TASK_STATE_WORKING) break;
      }
      return taskId!;
    };
    // Two tasks: one nobody asks about after the kill (its webhook alone must hear how it ended),
    // and one read back and resubscribed to.
    gate('hold quiet');
    gate('hold watched');
    const quiet = await follow('hold quiet');
    const watched = await follow('hold watched');
    expect(await eventually(() => asked.includes('hold quiet') && asked.includes('hold watched'), 30_000)).toBe(true);
    // The server saves a working task within a second (its record, a workflow, keeps its state in
    // its memo); once both are saved, it dies.
    const saved = async (id: string) =>
      (await temporal()
        .client.workflow.getHandle(taskWorkflowId(id))
        .describe()
        .then((d) => (d.memo as { state?: string } | undefined)?.state === 'TASK_STATE_WORKING')
        .catch(() => false)) as boolean;
    expect(await eventually(async () => (await saved(quiet)) && (await saved(watched)), 30_000)).toBe(true);
    server!.kill('SIGKILL');
    await server!.exited;
    expect(received.map((r) => r.state)).not.toContain('TASK_STATE_COMPLETED');

    // With no A2A server at all, the first task ends: its webhook gets COMPLETED.
    release('hold quiet');
    expect(await eventually(() => received.some((r) => r.state === 'TASK_STATE_COMPLETED'), 30_000)).toBe(true);
    expect(received.find((r) => r.state === 'TASK_STATE_COMPLETED')!.token).toBe('tok');

    await startServer();
    const again = await new ClientFactory().createFromUrl(cardUrl());
    const quietTask = await again.getTask({ tenant: '', id: quiet, historyLength: undefined });
    expect(quietTask.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(quietTask.artifacts[0].parts[0].content).toMatchObject({ value: 'done: hold quiet' });

    const stored = await again.getTask({ tenant: '', id: watched, historyLength: undefined });
    expect(stored.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    // Resubscribing follows the task from the conversation; the model answers now.
    const updates: StreamResponse[] = [];
    for await (const u of again.resubscribeTask({ tenant: '', id: watched })) {
      updates.push(u);
      if (updates.length === 1) release('hold watched');
    }
    expect(updates[0].payload?.$case).toBe('task');
    expect(stateOf(updates.at(-1)!)).toBe(TaskState.TASK_STATE_COMPLETED);
    const done = await again.getTask({ tenant: '', id: watched, historyLength: undefined });
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.artifacts[0].parts[0].content).toMatchObject({ value: 'done: hold watched' });
    expect(
      await eventually(() => received.filter((r) => r.state === 'TASK_STATE_COMPLETED').length === 2, 30_000),
    ).toBe(true);
  } finally {
    hook.close();
  }
}, 180_000);
