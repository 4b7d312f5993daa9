import { randomUUID } from 'node:crypto';
import { freePort } from '../../src/connection/dev-server';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { aiSdkChat } from '../helpers/ai-sdk-client';
import { cleanEnv, startTs, type Started } from '../helpers/processes';
import { call, lastOf, startModel } from '../helpers/scripted-model';
import { startHttpApi } from '../helpers/http-api';
import { watchChatTurns, type ChatTurnEvent } from '../../src/ui/watch-chat-turns';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';
import { testRegistry, transfers } from '../helpers/test-tools';

/**
 * `useChat`'s protocol, spoken to the AI SDK's own client: `ai`'s AbstractChat (the state
 * `useChat` keeps) with DefaultChatTransport and its default routes, in a Node 24 process.
 */
const temporal = useTestTemporal();

const STORY = Array.from({ length: 100 }, (_, i) => `word${i}`).join(' ');

function model(req: ChatRequest) {
  const last = req.messages[req.messages.length - 1];
  const user = lastOf(req, 'user');
  if (last.role === 'tool') return { content: `tool said: ${last.content}` };
  if (user === 'price of ACME') return call(['stock_quote', { symbol: 'ACME' }]);
  if (user === 'pay bob') return call(['transfer', { to: 'bob', amount: 5 }]);
  return { content: STORY, chunkDelayMs: 80 };
}

const textOf = (m: { parts: any[] }) =>
  m.parts
    .filter((p) => p.type === 'text')
    .map((p) => p.text)
    .join('');

it('runs tool-calling turns and an approval round trip through DefaultChatTransport, and loads the same chat back', async () => {
  const m = await startModel(model);
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: m.baseURL, registry: testRegistry() });
  const api = await startHttpApi({ client: t.client, taskQueue });
  const base = api.base;
  const id = `ui-chat-${randomUUID()}`;
  const chat = aiSdkChat(`${base}/api/chat`, id);
  try {
    await worker.runUntil(async () => {
      // No turn in progress: resume finds nothing (204), as the transport expects.
      expect((await fetch(`${base}/api/chat/${id}/stream`)).status).toBe(204);

      const priced = await chat.command({ send: 'price of ACME' });
      expect([priced.status, priced.error]).toEqual(['ready', undefined]);
      const reply = priced.messages[1];
      expect(reply).toMatchObject({ id: `${id}-turn-1`, role: 'assistant' });
      expect(reply.parts.map((p) => p.type)).toEqual(['step-start', 'tool-stock_quote', 'step-start', 'text']);
      // The value the tool returned, as the AI SDK gives it: an object (a string result stays a string, below).
      expect(reply.parts[1]).toMatchObject({
        state: 'output-available',
        input: { symbol: 'ACME' },
        output: { symbol: 'ACME', price: 42.5 },
      });
      expect(textOf(reply)).toContain('tool said:');
      expect(priced.finish).toMatchObject({
        workflowId: id,
        turn: 1,
        status: 'completed',
        usage: { totalTokens: expect.any(Number) },
      });

      // A tool that needs approval: the message pauses at the request; the answer continues it.
      const asked = await chat.command({ send: 'pay bob' });
      expect(asked.status).toBe('ready');
      expect(asked.messages).toHaveLength(4);
      expect(asked.messages[3].parts.find((p) => p.type === 'tool-transfer')).toMatchObject({
        state: 'approval-requested',
        input: { to: 'bob', amount: 5 },
        approval: { id: expect.any(String) },
      });
      expect(asked.finish).toMatchObject({ status: 'awaiting_approval', turn: 2 });
      // A second browser loads the chat and resumes the turn: it sees the same request, paused.
      const second = aiSdkChat(`${base}/api/chat`, id);
      try {
        await second.command({ load: true });
        const picked = await second.command({ resume: true });
        expect(picked.messages.map((x) => x.id)).toEqual(
          asked.messages.map((x) => (x.role === 'user' ? expect.any(String) : x.id)),
        );
        expect(picked.messages[3].parts).toEqual(asked.messages[3].parts);
      } finally {
        await second.close();
      }
      const paid = transfers.length;
      const approved = await chat.command({ approve: true });
      expect([approved.status, approved.error]).toEqual(['ready', undefined]);
      expect(approved.messages).toHaveLength(4);
      const continued = approved.messages[3];
      expect(continued.parts.filter((p) => p.type === 'tool-transfer')).toEqual([
        expect.objectContaining({ state: 'output-available', output: 'sent 5 to bob' }),
      ]);
      expect(textOf(continued)).toBe('tool said: sent 5 to bob');
      expect(approved.finish).toMatchObject({ status: 'completed', turn: 2 });
      expect(transfers.length).toBe(paid + 1);

      // A denial: the tool does not run, the part says so, and the model hears of it.
      await chat.command({ send: 'pay bob' });
      const denied = await chat.command({ approve: false, reason: 'not today' });
      const refused = denied.messages[5];
      expect(refused.parts.find((p) => p.type === 'tool-transfer')).toMatchObject({ state: 'output-denied' });
      expect(textOf(refused)).toMatch(/tool said: .*rejected.*not today/);
      expect(transfers.length).toBe(paid + 1);

      // Another browser loads the conversation from the workflow: the same messages and parts.
      const loaded = await chat.command({ load: true });
      expect(loaded.messages.map((x) => x.id)).toEqual([
        expect.any(String),
        `${id}-turn-1`,
        expect.any(String),
        `${id}-turn-2`,
        expect.any(String),
        `${id}-turn-3`,
      ]);
      const states = (msgs: typeof loaded.messages) =>
        msgs.filter((x) => x.role === 'assistant').map((x) => x.parts.map((p) => `${p.type}:${p.state ?? ''}`));
      expect(states(loaded.messages)).toEqual(states(denied.messages));
      expect(loaded.messages[1].parts[1]).toMatchObject({ output: { symbol: 'ACME', price: 42.5 } });
      expect(loaded.messages[3].parts.find((p) => p.type === 'tool-transfer')).toMatchObject({
        output: 'sent 5 to bob',
      });
      expect(loaded.messages.map(textOf)).toEqual(denied.messages.map(textOf));
    });
  } finally {
    await chat.close();
    api.close();
  }
}, 120_000);

it('resumes a turn after the serve process is killed mid-answer and started again: the whole answer, once, from the durable log', async () => {
  // The story is held twice, so no step races the machine's speed: after its third word until the
  // API is dead (the worker then writes on while no API runs), and after its 50th until the
  // resumed stream has shown it (the turn is still running when the new API is asked).
  const apiDead = gate();
  const resumedShown = gate();
  const m = await startModel(() => ({
    content: STORY,
    beforePiece: (i: number) => (i === 3 ? apiDead.wait : i === 50 ? resumedShown.wait : undefined),
  }));
  const t = temporal();
  const port = await freePort();
  // The API alone: the worker (here, in the test) writes the answer on while the API is down.
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: m.baseURL, registry: testRegistry() });
  const env = cleanEnv({
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
    AGENT_TASK_QUEUE: taskQueue,
    AGENT_SERVE_WORKER: 'false',
    PORT: String(port),
  });
  const id = `ui-resume-${randomUUID()}`;
  let serve: Started = await startTs(['serve.ts'], env, /Press Ctrl\+C/, 120_000);
  const chat = aiSdkChat(`http://127.0.0.1:${port}/api/chat`, id);
  try {
    await worker.runUntil(async () => {
      const sending = chat.command({ send: 'tell me a story' });
      await chat.textReaches(12);
      serve.kill('SIGKILL');
      await serve.exited;
      const cut = await sending;
      expect(cut.status).toBe('error');
      const shown = textOf(cut.messages[1]).length;
      expect(shown).toBeLessThan(STORY.length / 4);
      apiDead.open();

      // The model writes on; the new server finds what it wrote in the conversation's event log.
      serve = await startTs(['serve.ts'], env, /Press Ctrl\+C/, 120_000);
      const resuming = chat.command({ resume: true });
      await chat.textReaches(300);
      resumedShown.open();
      const resumed = await resuming;
      expect([resumed.status, resumed.error]).toEqual(['ready', undefined]);
      expect(resumed.messages.map((x) => x.role)).toEqual(['user', 'assistant']);
      const answer = resumed.messages[1];
      expect(answer.id).toBe(`${id}-turn-1`);
      expect(answer.parts.filter((p) => p.type === 'text')).toEqual([expect.objectContaining({ text: STORY })]);
      expect(resumed.finish).toMatchObject({ workflowId: id, turn: 1, status: 'completed' });
      // One model call: nothing was written twice.
      expect(m.requests.length).toBe(1);
    });
  } finally {
    await chat.close();
    serve.kill('SIGKILL');
    await serve.exited;
  }
}, 240_000);

/** A promise a test opens when it is ready. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/** The text and the finish metadata of a UI message stream, as a client reads them. */
function readUiStream(body: string): { text: string; turn?: number; types: string[] } {
  const chunks = body
    .split('\n')
    .filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]')
    .map((l) => JSON.parse(l.slice(6)));
  return {
    text: chunks
      .filter((c) => c.type === 'text-delta')
      .map((c) => c.delta)
      .join(''),
    turn: chunks.find((c) => c.type === 'finish')?.messageMetadata?.turn,
    types: chunks.map((c) => c.type),
  };
}

it('streams to each request the turn its own message starts when messages arrive mid-turn, and a message sent again once', async () => {
  const m = await startModel(async (req) => {
    const user = lastOf(req, 'user');
    // A slow first turn: the other messages arrive while it runs.
    if (user === 'first') await new Promise((r) => setTimeout(r, 3_000));
    return { content: `reply to ${user}` };
  });
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: m.baseURL, registry: testRegistry() });
  const api = await startHttpApi({ client: t.client, taskQueue });
  const id = `ui-double-${randomUUID()}`;
  const post = (text: string) =>
    fetch(`${api.base}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id, messages: [{ id: `ui-${text}`, role: 'user', parts: [{ type: 'text', text }] }] }),
    }).then(async (r) => ({ status: r.status, ...readUiStream(await r.text()) }));
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  try {
    await worker.runUntil(async () => {
      // Three messages within two seconds, the first answered slowly: each request gets its own turn.
      const first = post('first');
      await pause(1_500);
      const second = post('second');
      await pause(400);
      const third = post('third');
      expect(await Promise.all([first, second, third])).toEqual([
        expect.objectContaining({ status: 200, text: 'reply to first', turn: 1 }),
        expect.objectContaining({ status: 200, text: 'reply to second', turn: 2 }),
        expect.objectContaining({ status: 200, text: 'reply to third', turn: 3 }),
      ]);
      // A client that sends the same message again (same UI message id) gets its turn, not a new one.
      expect(await post('second')).toEqual(expect.objectContaining({ status: 200, text: 'reply to second', turn: 2 }));
      expect(m.requests).toHaveLength(3);
    });
  } finally {
    api.close();
  }
}, 120_000);

it('answers a message to an agent nobody serves with 400 and the reason, at once', async () => {
  const m = await startModel(() => ({ content: 'never' }));
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: m.baseURL, registry: testRegistry() });
  const api = await startHttpApi({ client: t.client, taskQueue });
  const id = `ui-nobody-${randomUUID()}`;
  try {
    await worker.runUntil(async () => {
      const res = await fetch(`${api.base}/api/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          id,
          agent: 'astrologer',
          messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hello' }] }],
        }),
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        error: expect.stringMatching(/^no agent named "astrologer" on task queue ".*" \(its workers serve: /),
      });
      // An approval answer to a chat that does not exist: 404 with a sentence, not a 500.
      const answer = await fetch(`${api.base}/api/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          id: `ui-none-${randomUUID()}`,
          messages: [
            {
              id: 'a1',
              role: 'assistant',
              parts: [
                {
                  type: 'tool-x',
                  toolCallId: 'c1',
                  state: 'approval-responded',
                  approval: { id: 'c1', approved: true },
                },
              ],
            },
          ],
        }),
      });
      expect(answer.status).toBe(404);
      expect(await answer.json()).toMatchObject({ error: expect.stringMatching(/^there is no chat "ui-none-/) });
      // A one-shot run's id is no chat, on every chat route alike.
      const run = await startAgentRun(t.client, { message: 'hi' }, { taskQueue });
      await runOutcome(run);
      for (const route of ['messages', 'stream']) {
        const r = await fetch(`${api.base}/api/chat/${run.workflowId}/${route}`);
        expect({ route, status: r.status, errorType: (await r.json()).errorType }).toEqual({
          route,
          status: 404,
          errorType: 'Client.WrongKind',
        });
      }
    });
  } finally {
    api.close();
  }
}, 60_000);

it('a page that starts watching the chat just after another tab started a turn still sees that turn start (GET /api/chat/:id/turns)', async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const m = await startModel(async (req) => {
    if (lastOf(req, 'user') === 'slow') await held;
    return { content: `reply to ${lastOf(req, 'user')}` };
  });
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: m.baseURL, registry: testRegistry() });
  const api = await startHttpApi({ client: t.client, taskQueue });
  const id = `ui-watch-${randomUUID()}`;
  const post = (text: string) =>
    fetch(`${api.base}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id, messages: [{ id: `ui-${text}`, role: 'user', parts: [{ type: 'text', text }] }] }),
    }).then((r) => r.text());
  try {
    await worker.runUntil(async () => {
      await post('hello');
      // Another tab's turn is under way (its model call held) when this page begins to watch.
      const slow = post('slow');
      while (m.requests.length < 2) await new Promise((r) => setTimeout(r, 50));
      const watching = new AbortController();
      const seen: ChatTurnEvent[] = [];
      const watch = watchChatTurns(id, (e) => seen.push(e), { api: `${api.base}/api/chat`, signal: watching.signal });
      const deadline = Date.now() + 30_000;
      while (!seen.some((e) => e.type === 'turn-started' && e.messageId === 'ui-slow') && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      release();
      await slow;
      watching.abort();
      await watch;
      expect(seen).toContainEqual({ type: 'turn-started', turn: 2, messageId: 'ui-slow' });
    });
  } finally {
    release();
    api.close();
  }
}, 120_000);
