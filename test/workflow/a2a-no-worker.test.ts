import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Message, TaskState, type StreamResponse } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import type { Worker } from '@temporalio/worker';
import { a2aHandler } from '../../src/a2a';
import { defineAgent } from '../../src/agents/define-agent';
import { answer, lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

// A2A with no worker on the agents' task queue (none runs yet, or the one that ran died): the
// task is kept (its record is a workflow Temporal takes Signals for) and the message is queued,
// durably, after 10 s; the task says so and waits for its turn, which a worker that comes answers.
const temporal = useTestTemporal();

const helper = defineAgent({ name: 'helper', instructions: 'Help.', tools: [] });
// What the server's cards say: `ghost` is an agent the worker that comes does not have.
const agents = async () =>
  ['helper', 'ghost'].map((name) => ({ name, description: 'Helps', tools: [], structuredOutput: false }));

const stateOf = (u: StreamResponse) =>
  u.payload?.$case === 'statusUpdate' ? u.payload.value.status?.state : u.payload?.$case === 'task' ? 'task' : '';

it('keeps a message no worker accepts, says the task waits for one, answers it once a worker runs, and fails one it cannot answer', async () => {
  const t = temporal();
  const taskQueue = `a2a-nobody-${randomUUID()}`;
  const model = await startModel((req) => answer(`you said: ${lastOf(req, 'user')}`));
  const app = express();
  app.use(a2aHandler({ client: t.client, taskQueue, agents }));
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  let coming: Promise<void> | undefined;
  // Told it is queued: now a worker comes (once, whichever task hears it first).
  const workerComes = () =>
    (coming ??= createTestWorker(t, { baseURL: model.baseURL, taskQueue, agents: [helper] }).then((made) => {
      worker = made.worker;
      running = worker.run();
    }));
  const follow = async (agent: string, text: string) => {
    const { port } = server.address() as AddressInfo;
    const client = await new ClientFactory().createFromUrl(`http://127.0.0.1:${port}/a2a/${agent}/`);
    const updates: StreamResponse[] = [];
    for await (const u of client.sendMessageStream({
      tenant: '',
      message: Message.fromJSON({ messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] }),
      configuration: undefined,
      metadata: undefined,
    })) {
      updates.push(u);
      if (JSON.stringify(u).includes('it is queued')) await workerComes();
    }
    return updates;
  };
  try {
    const [answered, unanswerable] = await Promise.all([follow('helper', 'anyone there?'), follow('ghost', 'boo')]);
    expect(worker).toBeDefined();
    expect(stateOf(answered.at(-1)!)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(JSON.stringify(answered)).toContain('you said: anyone there?');
    // Its conversation closed without answering (no such agent on the worker): the task failed,
    // rather than staying submitted for good.
    expect(stateOf(unanswerable.at(-1)!)).toBe(TaskState.TASK_STATE_FAILED);
    expect(JSON.stringify(unanswerable.at(-1))).toContain('closed before it answered this message');
  } finally {
    worker?.shutdown();
    await running;
    server.close();
    await model.close();
  }
}, 120_000);
