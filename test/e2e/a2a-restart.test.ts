import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Message, TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { defineAgent } from '../../src/agents/define-agent';
import { cleanEnv, startTs, type Started } from '../helpers/processes';
import { startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';
import { testRegistry } from '../helpers/test-tools';

/**
 * The A2A server as its own process (`durable-agents a2a`), killed in the middle of a task and
 * started again: the task is read back from Temporal (GetTask) and a resubscription follows it
 * to its end from the conversation's durable event log.
 */
const temporal = useTestTemporal();

const writer = defineAgent({ name: 'writer', description: 'Writes reports', instructions: 'Write.', tools: [] });

async function freePort(): Promise<number> {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

const stateOf = (u: StreamResponse) =>
  u.payload?.$case === 'statusUpdate'
    ? u.payload.value.status?.state
    : u.payload?.$case === 'task'
      ? u.payload.value.status?.state
      : undefined;

it('answers GetTask and SubscribeToTask for a task whose A2A server process was killed mid-task and started again', async () => {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let asked = 0;
  const m = await startModel(async () => {
    asked++;
    await released;
    return { content: 'the quarterly report, done' };
  });
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, {
    baseURL: m.baseURL,
    registry: testRegistry(),
    agents: [writer],
  });
  const port = await freePort();
  const env = cleanEnv({ TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!, AGENT_TASK_QUEUE: taskQueue });
  const start = () => startTs(['client.ts', 'a2a', '--port', String(port)], env, /Press Ctrl\+C/, 120_000);
  const url = `http://127.0.0.1:${port}/a2a/writer/`;
  let server: Started | undefined;
  try {
    await worker.runUntil(async () => {
      server = await start();
      const client = await new ClientFactory().createFromUrl(url);
      const message = Message.fromJSON({ messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'write it' }] });
      const seen: StreamResponse[] = [];
      const stream = client.sendMessageStream({ tenant: '', message, configuration: undefined, metadata: undefined });
      for await (const u of stream) {
        seen.push(u);
        if (stateOf(u) === TaskState.TASK_STATE_WORKING) break;
      }
      const first = seen[0].payload!;
      expect(first.$case).toBe('task');
      const taskId = (first.value as Task).id;
      // The model is answering (held): the server saves a working task within a second.
      await new Promise((r) => setTimeout(r, 1500));
      server.kill('SIGKILL');
      await server.exited;

      server = await start();
      const again = await new ClientFactory().createFromUrl(url);
      const stored = await again.getTask({ tenant: '', id: taskId, historyLength: undefined });
      expect(stored.status?.state).toBe(TaskState.TASK_STATE_WORKING);

      // Resubscribing follows the task from the conversation; the model answers now.
      const updates: StreamResponse[] = [];
      for await (const u of again.resubscribeTask({ tenant: '', id: taskId })) {
        updates.push(u);
        if (updates.length === 1) release();
      }
      expect(updates[0].payload?.$case).toBe('task');
      expect(stateOf(updates.at(-1)!)).toBe(TaskState.TASK_STATE_COMPLETED);
      const artifact = updates.find((u) => u.payload?.$case === 'artifactUpdate')?.payload?.value as {
        artifact: { parts: Array<{ content: { value: string } }> };
      };
      expect(artifact.artifact.parts[0].content.value).toBe('the quarterly report, done');

      // The final state was saved: GetTask answers it, with the answer.
      const done = await again.getTask({ tenant: '', id: taskId, historyLength: undefined });
      expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(done.artifacts[0].parts[0].content).toMatchObject({ value: 'the quarterly report, done' });
      // The message went to the model once.
      expect(asked).toBe(1);
    });
  } finally {
    release();
    server?.kill('SIGKILL');
    await server?.exited;
  }
}, 240_000);
