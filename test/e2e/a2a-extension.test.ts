import { randomUUID } from 'node:crypto';
import { Message, TaskState, type SendMessageRequest, type Task } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { defineAgent } from '../../src/agents/define-agent';
import type { A2AServerExtension } from '../../src/a2a/a2a-server-extension';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { startHttpApi } from '../helpers/http-api';
import { call, lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';
import { testRegistry } from '../helpers/test-tools';

/**
 * An application's say in A2A messages (`A2AServerExtension`) through the HTTP API, spoken to by
 * the official `@a2a-js/sdk` client: a Message reply, a task settled with a file artifact, the
 * text the agent takes, and a follow-up the extension fails on, which leaves its task waiting.
 */
const temporal = useTestTemporal();

const payer = defineAgent({ name: 'payer', instructions: 'Pay.', tools: ['transfer'] });

function model(req: ChatRequest) {
  const last = req.messages[req.messages.length - 1];
  if (last.role === 'tool') return { content: `done: ${String(last.content)}` };
  if (/pay bob/.test(lastOf(req, 'user') ?? '')) return call(['transfer', { to: 'bob', amount: 3 }]);
  return { content: `you said: ${lastOf(req, 'user')}` };
}

const extension: A2AServerExtension = {
  onMessage(message, context) {
    const text = message.parts.map((p) => p.text ?? '').join(' ');
    if (text === 'boom') throw new Error('the extension broke');
    if (context.followUp) return undefined;
    if (text === 'ping') return { kind: 'message', parts: [{ text: 'pong' }] };
    if (text === 'report')
      return {
        kind: 'task',
        message: 'here it is',
        artifacts: [
          {
            name: 'report',
            parts: [{ raw: Buffer.from('%PDF').toString('base64'), filename: 'r.pdf', mediaType: 'application/pdf' }],
          },
        ],
      };
    return { kind: 'agent', text: `[${context.agent}] ${text}` };
  },
};

function request(text: string, ids: { taskId?: string; contextId?: string } = {}): SendMessageRequest {
  const message = Message.fromJSON({ messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...ids });
  return { tenant: '', message, configuration: undefined, metadata: undefined };
}

it('answers messages of its own beside the agent, and a follow-up it fails on leaves the task waiting for input', async () => {
  const m = await startModel(model);
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, {
    baseURL: m.baseURL,
    registry: testRegistry(),
    agents: [payer],
  });
  const api = await startHttpApi({ client: t.client, taskQueue, a2a: { extend: extension } });
  try {
    await worker.runUntil(async () => {
      const client = await new ClientFactory().createFromUrl(`${api.base}/a2a/payer/`);
      // A Message, and no task.
      const pong = (await client.sendMessage(request('ping'))) as Message;
      expect(pong.parts[0].content).toEqual({ $case: 'text', value: 'pong' });
      expect(pong.taskId).toBe('');
      // A task settled without the agent, with a file, read back from the task store.
      const report = (await client.sendMessage(request('report'))) as Task;
      expect(report.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const stored = await client.getTask({ tenant: '', id: report.id, historyLength: undefined });
      expect(stored.artifacts[0]).toMatchObject({
        name: 'report',
        parts: [{ filename: 'r.pdf', mediaType: 'application/pdf' }],
      });
      expect(stored.artifacts[0].parts[0].content?.$case).toBe('raw');
      // The agent takes the text the extension gave.
      const said = (await client.sendMessage(request('hello'))) as Task;
      expect(said.artifacts[0].parts[0].content).toEqual({ $case: 'text', value: 'you said: [payer] hello' });
      // A task waiting for approval; a follow-up the extension fails on leaves it waiting.
      const waiting = (await client.sendMessage(request('pay bob'))) as Task;
      expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      const ids = { taskId: waiting.id, contextId: waiting.contextId };
      const broke = (await client.sendMessage(request('boom', ids))) as Task;
      expect(broke.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      expect(broke.status?.message?.parts[0].content).toEqual({
        $case: 'text',
        value: expect.stringContaining('the extension broke; the message was not taken, send it again'),
      });
      expect(broke.metadata).toEqual(waiting.metadata);
      // Answered after all: the turn goes on and the task completes.
      const paid = (await client.sendMessage(request('yes', ids))) as Task;
      expect(paid.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    });
  } finally {
    api.close();
    await m.close();
  }
}, 120_000);
