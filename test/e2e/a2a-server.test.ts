import { randomUUID } from 'node:crypto';
import { Message, TaskState, type SendMessageRequest, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { defineAgent } from '../../src/agents/define-agent';
import { startHttpApi } from '../helpers/http-api';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { call, lastOf, startModel } from '../helpers/scripted-model';
import { eventually } from '../helpers/processes';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';
import { testRegistry, transfers } from '../helpers/test-tools';

/** The agents as A2A agents, spoken to by the official `@a2a-js/sdk` client (protocol 1.0). */
const temporal = useTestTemporal();

const cashier = defineAgent({
  name: 'cashier',
  description: 'Quotes prices and pays people',
  examples: ['What does ACME cost?'],
  instructions: 'Use the tools.',
  tools: ['stock_quote', 'transfer'],
});

function model(req: ChatRequest) {
  const last = req.messages[req.messages.length - 1];
  if (last.role === 'tool') return { content: `tool said: ${String(last.content)}` };
  if (lastOf(req, 'user') === 'pay bob') return call(['transfer', { to: 'bob', amount: 3 }]);
  return call(['stock_quote', { symbol: 'ACME' }]);
}

function request(text: string, ids: { contextId?: string; taskId?: string } = {}): SendMessageRequest {
  const message = Message.fromJSON({
    messageId: randomUUID(),
    role: 'ROLE_USER',
    parts: [{ text }],
    ...(ids.contextId ? { contextId: ids.contextId } : {}),
    ...(ids.taskId ? { taskId: ids.taskId } : {}),
  });
  return { tenant: '', message, configuration: undefined, metadata: undefined };
}

const answerOf = (task: Task) =>
  task.artifacts
    .flatMap((a) => a.parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : [])))
    .join('');

it('serves an agent over A2A: its card, a task answered as an artifact, a streamed task that waits for approval and is approved by a message, and tasks read back by a new server', async () => {
  const m = await startModel(model);
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, {
    baseURL: m.baseURL,
    registry: testRegistry(),
    agents: [cashier],
  });
  let api = await startHttpApi({ client: t.client, taskQueue });
  let base = api.base;
  try {
    await worker.runUntil(async () => {
      // The cards name a loopback server localhost.
      const local = base.replace('127.0.0.1', 'localhost');
      // The card, where the SDK looks for it relative to the agent's URL.
      const card = await (
        await fetch(`${base}/a2a/cashier/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } })
      ).json();
      expect(card).toMatchObject({
        name: 'cashier',
        description: 'Quotes prices and pays people',
        supportedInterfaces: expect.arrayContaining([
          expect.objectContaining({ url: `${local}/a2a/cashier`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }),
        ]),
        capabilities: { streaming: true },
        skills: [expect.objectContaining({ id: 'cashier', examples: ['What does ACME cost?'] })],
      });
      expect((await fetch(`${base}/a2a/nobody/.well-known/agent-card.json`)).status).toBe(404);
      // Without A2A-Version, the same 1.0 card, with none of 0.3's fields (its interfaces are listed).
      const unversioned = await (await fetch(`${base}/a2a/cashier/.well-known/agent-card.json`)).json();
      expect(unversioned).toEqual(card);
      for (const field of ['url', 'preferredTransport', 'protocolVersion', 'additionalInterfaces'])
        expect(unversioned).not.toHaveProperty(field);
      expect(card.supportedInterfaces).toEqual(
        expect.arrayContaining([expect.objectContaining({ protocolBinding: 'JSONRPC', protocolVersion: '0.3' })]),
      );
      // A client of protocol 0.3 that asks for it gets the card as 0.3 has it.
      const legacy = await (
        await fetch(`${base}/a2a/cashier/.well-known/agent-card.json`, { headers: { 'a2a-version': '0.3' } })
      ).json();
      expect(legacy).toMatchObject({
        name: 'cashier',
        protocolVersion: expect.stringMatching(/^0\.3/),
        url: `${local}/a2a/cashier`,
      });
      // A body that is not JSON is refused in each binding's terms, before it is read.
      const rpcRefusal = await fetch(`${base}/a2a/cashier`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain', 'a2a-version': '1.0' },
        body: 'hello',
      });
      expect(await rpcRefusal.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32005 } });
      const restRefusal = await fetch(`${base}/a2a/cashier/message:send`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain', 'a2a-version': '1.0' },
        body: 'hello',
      });
      expect(restRefusal.status).toBe(415);
      expect(await restRefusal.json()).toMatchObject({
        error: { code: 415, message: expect.stringMatching(/application\/json/) },
      });
      // HTTP+JSON answers as application/json.
      const missing = await fetch(`${base}/a2a/cashier/tasks/no-such-task`, { headers: { 'a2a-version': '1.0' } });
      expect(missing.status).toBe(404);
      expect(missing.headers.get('content-type')).toMatch(/^application\/json/);

      const client = await new ClientFactory().createFromUrl(`${base}/a2a/cashier/`);
      const first = (await client.sendMessage(request('price of ACME'))) as Task;
      expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(answerOf(first)).toMatch(/^tool said: .*42\.5/);
      const contextId = first.contextId;

      // Streaming, in the same context (the same durable conversation): the task waits for approval.
      const updates: StreamResponse[] = [];
      for await (const u of client.sendMessageStream(request('pay bob', { contextId }))) updates.push(u);
      const states = updates.flatMap((u) =>
        u.payload?.$case === 'statusUpdate'
          ? [u.payload.value.status?.state]
          : u.payload?.$case === 'task'
            ? [u.payload.value.status?.state]
            : [],
      );
      expect(states[0]).toBe(TaskState.TASK_STATE_SUBMITTED);
      expect(states).toContain(TaskState.TASK_STATE_WORKING);
      expect(states.at(-1)).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      const last = updates.at(-1)!.payload!;
      const taskId = last.$case === 'statusUpdate' ? last.value.taskId : '';
      expect(last.$case === 'statusUpdate' && last.value.status?.message?.parts[0].content).toMatchObject({
        value: expect.stringMatching(/^Approve transfer\(.*bob.*\)\? Answer "yes" or "no"\.$/),
      });
      const paid = transfers.length;
      expect((await client.getTask({ tenant: '', id: taskId, historyLength: undefined })).status?.state).toBe(
        TaskState.TASK_STATE_INPUT_REQUIRED,
      );

      // A message on the task answers it; the turn goes on in the workflow.
      const approved = (await client.sendMessage(request('yes', { contextId, taskId }))) as Task;
      expect(approved.id).toBe(taskId);
      expect(approved.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(answerOf(approved)).toBe('tool said: sent 3 to bob');
      expect(transfers.length).toBe(paid + 1);

      // A new server (nothing in memory) reads the tasks back from Temporal.
      api.close();
      api = await startHttpApi({ client: t.client, taskQueue });
      base = api.base;
      const again = await new ClientFactory().createFromUrl(`${base}/a2a/cashier/`);
      const read = await again.getTask({ tenant: '', id: taskId, historyLength: undefined });
      expect(read.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(answerOf(read)).toBe('tool said: sent 3 to bob');
      expect((await again.getTask({ tenant: '', id: first.id, historyLength: undefined })).contextId).toBe(contextId);

      // The context's tasks, listed from Temporal's visibility.
      const list = () =>
        again.listTasks({
          tenant: '',
          contextId,
          status: TaskState.TASK_STATE_UNSPECIFIED,
          pageToken: '',
          statusTimestampAfter: undefined,
        });
      expect(await eventually(async () => (await list()).tasks.length === 2, 10_000)).toBe(true);
      expect((await list()).tasks.map((x) => x.id).sort()).toEqual([first.id, taskId].sort());

      // A client of protocol 0.3 (its method names, no A2A-Version header), as older agents send.
      const old = await fetch(`${base}/a2a/cashier`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'message/send',
          params: {
            message: {
              kind: 'message',
              messageId: randomUUID(),
              role: 'user',
              parts: [{ kind: 'text', text: 'price of ACME' }],
            },
          },
        }),
      });
      expect(await old.json()).toMatchObject({ result: { kind: 'task', status: { state: 'completed' } } });

      // The HTTP+JSON interface of the card, through the SDK's REST transport.
      const rest = await new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: ['HTTP+JSON'] }),
      ).createFromUrl(`${base}/a2a/cashier/`);
      const viaRest = (await rest.sendMessage(request('price of ACME', { contextId }))) as Task;
      expect(viaRest.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect((await rest.getTask({ tenant: '', id: viaRest.id, historyLength: undefined })).id).toBe(viaRest.id);
    });
  } finally {
    api.close();
  }
}, 120_000);

it('asks for the HTTP API tokens, and answers hostile requests with errors while it goes on serving', async () => {
  const m = await startModel(model);
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, {
    baseURL: m.baseURL,
    registry: testRegistry(),
    agents: [cashier],
  });
  const token = 'a2a-test-token-0123456789';
  const api = await startHttpApi({ client: t.client, taskQueue, access: { tokens: [token] } });
  const auth = { authorization: `Bearer ${token}` };
  const rpc = (body: string, headers: Record<string, string> = auth) =>
    fetch(`${api.base}/a2a/cashier`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers },
      body,
    });
  try {
    await worker.runUntil(async () => {
      // The public card needs no token: it says how to authenticate, and names no tools.
      const card = `${api.base}/a2a/cashier/.well-known/agent-card.json`;
      const described = await (await fetch(card, { headers: { 'a2a-version': '1.0' } })).json();
      expect(JSON.stringify(described.securitySchemes)).toContain('bearer');
      expect(described.capabilities.extendedAgentCard).toBe(true);
      expect(described.skills[0].tags).toEqual(['durable-agents']);
      // So the SDK's card resolver finds the agent without one, and its calls carry the token.
      const withToken: typeof fetch = (input, init) =>
        fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), ...auth } });
      const client = await new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
          transports: [new JsonRpcTransportFactory({ fetchImpl: withToken })],
        }),
      ).createFromUrl(`${api.base}/a2a/cashier/`);
      // The extended card, for token holders: the agent's tools.
      const extended = await client.getAgentCard();
      expect(extended.skills[0].tags).toEqual(['durable-agents', 'stock_quote', 'transfer']);
      const extendedWithout = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'GetExtendedAgentCard' }), {});
      expect(extendedWithout.status).toBe(401);
      const send = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'price of ACME' }] } },
      });
      expect((await rpc(send, {})).status).toBe(401);

      // Malformed JSON, an unknown method, a message without parts, an unknown task, a huge body.
      expect((await (await rpc('{"jsonrpc": "2.0", "id": 1, "method": ')).json()).error.code).toBe(-32700);
      expect((await (await rpc('{"jsonrpc":"2.0","id":2,"method":"Nope","params":{}}')).json()).error.code).toBe(
        -32601,
      );
      const empty = await (
        await rpc(
          JSON.stringify({
            jsonrpc: '2.0',
            id: 3,
            method: 'SendMessage',
            params: { message: { messageId: 'x', role: 'ROLE_USER', parts: [] } },
          }),
        )
      ).json();
      expect(empty.error ?? empty.result?.task?.status?.state).toBeTruthy();
      const unknown = await (
        await rpc(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'GetTask', params: { id: 'no-such-task' } }))
      ).json();
      expect(unknown.error.message).toMatch(/not found/i);
      const huge = await rpc(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 5,
          method: 'SendMessage',
          params: { message: { messageId: 'h', role: 'ROLE_USER', parts: [{ text: 'x'.repeat(40_000_000) }] } },
        }),
      );
      expect(huge.status).toBeGreaterThanOrEqual(400);
      // A message over the size limit fails its task, which keeps an excerpt of it, not all of it.
      const long = await rpc(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 7,
          method: 'SendMessage',
          params: { message: { messageId: 'l', role: 'ROLE_USER', parts: [{ text: 'y'.repeat(5_000_000) }] } },
        }),
      );
      const longText = await long.text();
      expect(longText.length).toBeLessThan(10_000);
      const failed = JSON.parse(longText).result.task;
      expect(failed.status.state).toBe('TASK_STATE_FAILED');
      expect(JSON.stringify(failed.status.message)).toMatch(/longer than 100000 characters/);
      expect(failed.history[0].parts[0].text).toMatch(/^y{2000}… \(5000000 characters, cut\)$/);
      const stored = await (
        await rpc(JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'GetTask', params: { id: failed.id } }))
      ).text();
      expect(stored.length).toBeLessThan(10_000);
      // A bad context id (not a workflow id) fails the task with the reason, not the server.
      const badContext = await (
        await rpc(
          JSON.stringify({
            jsonrpc: '2.0',
            id: 6,
            method: 'SendMessage',
            params: {
              message: {
                messageId: randomUUID(),
                role: 'ROLE_USER',
                contextId: 'x'.repeat(2000),
                parts: [{ text: 'hi' }],
              },
            },
          }),
        )
      ).json();
      expect(JSON.stringify(badContext)).toMatch(/contextId|context/i);

      // Still serving.
      const ok = await (await rpc(send)).json();
      expect(ok.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    });
  } finally {
    api.close();
  }
}, 120_000);

it('takes busy in a message’s metadata: reject fails the task with the reason, steer joins the running turn', async () => {
  const m = await startModel(async (req) => {
    const users = req.messages.filter((x) => x.role === 'user').map((x) => String(x.content));
    if (lastOf(req, 'user') === 'slow one') {
      // A slow model: the turn is still running when the next messages come in.
      await new Promise((r) => setTimeout(r, 1500));
      return { content: 'slow answer' };
    }
    return { content: `saw: ${users.join(' | ')}` };
  });
  const t = temporal();
  const plain = defineAgent({ name: 'plain', instructions: 'Answer.', tools: [] });
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: m.baseURL, agents: [plain] });
  const api = await startHttpApi({ client: t.client, taskQueue });
  const busy = (text: string, contextId: string, policy: string): SendMessageRequest => {
    const r = request(text, { contextId });
    r.message!.metadata = { busy: policy };
    return r;
  };
  try {
    await worker.runUntil(async () => {
      const client = await new ClientFactory().createFromUrl(`${api.base}/a2a/plain/`);
      const contextId = ((await client.sendMessage(request('hello'))) as Task).contextId;
      const running = async () =>
        ((await (await fetch(`${api.base}/conversations/${contextId}`)).json()) as { state: string }).state ===
        'thinking';
      // A slow turn, followed in the background.
      const slow = (async () => {
        const seen: StreamResponse[] = [];
        for await (const u of client.sendMessageStream(request('slow one', { contextId }))) seen.push(u);
        return seen;
      })();
      expect(await eventually(running, 10_000)).toBe(true);
      const refused = (await client.sendMessage(busy('not now', contextId, 'reject'))) as Task;
      expect(refused.status?.state).toBe(TaskState.TASK_STATE_FAILED);
      const why = refused.status?.message?.parts
        .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
        .join('');
      expect(why).toMatch(/the conversation is busy: turn 2 is running/);
      // steer: the message joins the running turn; its task completes with that turn's answer.
      const steered = client.sendMessage(busy('and this', contextId, 'steer'));
      const [joined] = await Promise.all([steered, slow]);
      expect((joined as Task).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const last = m.requests[m.requests.length - 1];
      expect(last.messages.filter((x) => x.role === 'user').map((x) => x.content)).toEqual([
        'hello',
        'slow one',
        'and this',
      ]);
    });
  } finally {
    api.close();
    await m.close();
  }
});

it('caps a blocking send at AGENT_A2A_MAX_BLOCKING_WAIT (the task answered working, then completed), and lists tasks newest first, a page at a time', async () => {
  const m = await startModel(async (req) => {
    // Slower than the blocking cap: the send answers with the task still working.
    if (lastOf(req, 'user') === 'take your time') await new Promise((r) => setTimeout(r, 3000));
    return { content: `done: ${lastOf(req, 'user')}` };
  });
  const t = temporal();
  const slowpoke = defineAgent({ name: 'slowpoke', instructions: 'Answer.', tools: [] });
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: m.baseURL, agents: [slowpoke] });
  const api = await startHttpApi({ client: t.client, taskQueue, a2a: { maxBlockingWaitMs: 500 } });
  try {
    await worker.runUntil(async () => {
      const client = await new ClientFactory().createFromUrl(`${api.base}/a2a/slowpoke/`);
      const working = (await client.sendMessage(request('take your time'))) as Task;
      // Answered at the cap, with the task still working (uncapped, a blocking send answers with
      // the task completed); a GetTask later finds it completed.
      expect(working.status?.state).toBe(TaskState.TASK_STATE_WORKING);
      let done = working;
      await eventually(async () => {
        done = await client.getTask({ tenant: '', id: working.id, historyLength: 0 } as never);
        return done.status?.state === TaskState.TASK_STATE_COMPLETED;
      }, 15_000);
      expect(answerOf(done)).toBe('done: take your time');

      // Quick ones finish within the cap. The list: newest status first, paged with a token.
      const quick = [];
      for (const text of ['one', 'two']) quick.push(((await client.sendMessage(request(text))) as Task).id);
      const page = (pageToken: string) =>
        client.listTasks({
          tenant: '',
          contextId: '',
          status: TaskState.TASK_STATE_UNSPECIFIED,
          pageSize: 2,
          pageToken,
          statusTimestampAfter: undefined,
        });
      const first = await page('');
      expect(first.tasks.map((x) => x.id)).toEqual([quick[1], quick[0]]);
      expect(first.totalSize).toBeGreaterThanOrEqual(3);
      expect(first.nextPageToken).not.toBe('');
      const second = await page(first.nextPageToken);
      expect(second.tasks.map((x) => x.id)).toContain(working.id);
      expect(second.tasks.map((x) => x.id)).not.toContain(quick[0]);
    });
  } finally {
    api.close();
    await m.close();
  }
});
