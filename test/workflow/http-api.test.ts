import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpApi } from '../../src/http/http-api';
import type { ChatRequest } from '../../src/offline-model/openai-compatible-server';
import { answer, call, lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';
import { testRegistry } from '../helpers/test-tools';

/** The HTTP API with real HTTP requests (fetch) against a real worker and Temporal server. */
const temporal = useTestTemporal();

const QUESTION = 'What is the square root of the sum of the numbers of letters in the words "hello" and "world"';

function model(req: ChatRequest) {
  const last = req.messages[req.messages.length - 1];
  const results = req.messages.filter((m) => m.role === 'tool').map((m) => Number(m.content));
  if (lastOf(req, 'user') === QUESTION) {
    if (results.length === 0) return call(['stringLength', { s: 'hello' }], ['stringLength', { s: 'world' }]);
    if (results.length === 2) return call(['add', { a: results[0], b: results[1] }]);
    if (results.length === 3) return call(['sqrt', { x: results[2] }]);
    return answer(`The square root of the sum of the numbers of letters in the words "hello" and "world" is approximately ${results[3].toFixed(3)}.`);
  }
  if (lastOf(req, 'user') === 'pay bob' && last.role === 'user') return call(['transfer', { to: 'bob', amount: 5 }]);
  if (last.role === 'tool') return answer(`tool said: ${last.content}`);
  return answer(`you said: ${lastOf(req, 'user')} (${req.messages.filter((m) => m.role === 'user').length} user messages seen)`);
}

async function withApi(body: (base: string) => Promise<void>): Promise<void> {
  const m = await startModel(model);
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: m.baseURL, registry: testRegistry() });
  const server: Server = createHttpApi({ client: t.client, taskQueue });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    await worker.runUntil(body(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  } finally {
    server.close();
  }
}

/** Response bodies are checked by the assertions. */
const json = async (res: Response | Promise<Response>): Promise<any> => (await res).json();

const post = (url: string, body: unknown) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });

it('answers GET /assistant-with-tool?message= with the text, as in the Quarkus example', async () => {
  await withApi(async (base) => {
    const res = await fetch(`${base}/assistant-with-tool?message=${encodeURIComponent(QUESTION)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await res.text()).toBe('The square root of the sum of the numbers of letters in the words "hello" and "world" is approximately 3.162.');
    expect(res.headers.get('x-workflow-id')).toMatch(/^agent-what-is-the-square-root/);

    const missing = await fetch(`${base}/assistant-with-tool`);
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ error: expect.stringContaining('missing the "message" query parameter') });
  });
});

it('holds conversations: messages, transcript with status, approvals, and clear errors', async () => {
  await withApi(async (base) => {
    const id = `http-${randomUUID()}`;
    const first = await post(`${base}/conversations/${id}/messages`, { message: 'hello' });
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ workflowId: id, turn: 1, status: 'completed', content: 'you said: hello (1 user messages seen)' });
    const second = await json(post(`${base}/conversations/${id}/messages`, { message: 'again' }));
    expect(second).toMatchObject({ turn: 2, content: 'you said: again (2 user messages seen)' });

    const got = await fetch(`${base}/conversations/${id}`);
    expect(got.status).toBe(200);
    const view = await json(got);
    expect(view.status).toMatchObject({ conversationId: id, state: 'idle', turns: 2 });
    expect(view.messages.map((m: { content: string }) => m.content)).toEqual(['hello', 'you said: hello (1 user messages seen)', 'again', 'you said: again (2 user messages seen)']);

    // Approval over HTTP while the turn waits.
    const paying = post(`${base}/conversations/${id}/messages`, { message: 'pay bob' });
    let callId: string | undefined;
    for (let i = 0; i < 100 && !callId; i++) {
      const status = (await json(fetch(`${base}/conversations/${id}`))).status;
      callId = status.pendingApprovals[0]?.callId;
      if (!callId) await new Promise((r) => setTimeout(r, 100));
    }
    expect(callId).toBeDefined();
    const wrong = await post(`${base}/conversations/${id}/approvals/nope`, { approve: true });
    expect(wrong.status).toBe(400);
    expect((await json(wrong)).error).toMatch(/no tool call "nope" is awaiting approval/);
    const badBody = await post(`${base}/conversations/${id}/approvals/${callId}`, { approve: 'yes' });
    expect(badBody.status).toBe(400);
    const decided = await post(`${base}/conversations/${id}/approvals/${callId}`, { approve: false, reason: 'not today' });
    expect(await decided.json()).toEqual({ callId, approved: false, stillPending: 0 });
    expect(await json(paying)).toMatchObject({ turn: 3, content: expect.stringContaining('Reason: not today') });

    // Bad input: 400 with a JSON error, nothing written.
    for (const body of ['{not json', '[1]', { message: '' }, { message: 'x', tools: ['teleport'] }]) {
      const res = await post(`${base}/conversations/${id}/messages`, body);
      expect(res.status).toBe(400);
      expect(typeof (await json(res)).error).toBe('string');
    }
    expect((await json(fetch(`${base}/conversations/${id}`))).status.turns).toBe(3);

    // Unknown conversation and routes: 404.
    const unknown = await fetch(`${base}/conversations/never-${randomUUID()}`);
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).error).toMatch(/no conversation/);
    expect((await post(`${base}/conversations/never-${randomUUID()}/approvals/x`, { approve: true })).status).toBe(404);
    expect((await fetch(`${base}/nowhere`)).status).toBe(404);
    expect((await fetch(`${base}/conversations/${id}/messages`)).status).toBe(405);
  });
});
