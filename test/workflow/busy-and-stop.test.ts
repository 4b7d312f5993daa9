import { randomUUID } from 'node:crypto';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { startHttpApi } from '../helpers/http-api';
import { call, lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/**
 * A conversation that is busy: a message sent while a turn runs, by each policy (`busy`), over
 * `POST /conversations/:id/messages` and `POST /api/chat`; and Stop (`POST /api/chat/:id/stop`).
 */
const temporal = useTestTemporal();

const STORY = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
/** An answer long enough (24 s) that a stop meant for it cannot come after it ended, even on a loaded machine. */
const LONG = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves once the model has written `n` more pieces of a slow answer than when it was called. */
async function piecesWritten(n: number): Promise<void> {
  const from = written;
  while (written < from + n) await sleep(20);
}
/** Pieces of the slow answers the model has written so far. */
let written = 0;

function model(req: ChatRequest) {
  const user = lastOf(req, 'user');
  const users = req.messages.filter((m) => m.role === 'user').map((m) => m.content);
  const tools = req.messages.filter((m) => m.role === 'tool').length;
  if (users[0] === 'add things') {
    // A 3-step turn whose first call is slow: a steering message comes in meanwhile.
    if (tools === 0) return sleep(1500).then(() => call(['add', { a: 1, b: 2 }]));
    if (tools === 1 && user === 'add things') return call(['add', { a: 3, b: 4 }]);
    return { content: user === 'also mention cats' ? 'noted: cats' : `no steering (${user})` };
  }
  if (user.startsWith('long')) return { content: LONG, chunkDelayMs: 60, onPiece: () => (written += 1) };
  if (user.startsWith('slow')) return { content: STORY, chunkDelayMs: 60, onPiece: () => (written += 1) };
  return { content: `you said: ${user}` };
}

const post = (base: string, path: string, body: unknown) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** The HTTP API on a worker of the scripted model. */
async function chatApi() {
  const m = await startModel(model);
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: m.baseURL });
  const api = await startHttpApi({ client: t.client, taskQueue });
  return {
    worker,
    base: api.base,
    /** The model requests so far. */
    requests: m.requests,
    close: async () => {
      api.close();
      await m.close();
    },
  };
}

/** Waits until the conversation runs a turn. */
async function running(base: string, id: string): Promise<void> {
  for (;;) {
    const r = await fetch(`${base}/conversations/${id}`);
    const state = r.ok ? ((await r.json()) as { state: string }).state : 'idle';
    if (state !== 'idle' && state !== 'closed') return;
    await sleep(50);
  }
}

it('steers, rejects, interrupts and enqueues messages sent while a turn runs', async () => {
  const { worker, base, close, requests } = await chatApi();
  try {
    await worker.runUntil(async () => {
      // steer: the message joins the running turn; the model's next request of that turn has it.
      const id = `busy-${randomUUID()}`;
      const first = post(base, `/conversations/${id}/messages`, { message: 'add things' });
      await running(base, id);
      const steered = post(base, `/conversations/${id}/messages`, { message: 'also mention cats', busy: 'steer' });
      const [a, b] = await Promise.all([first, steered]);
      const [ra, rb] = [await a.json(), await b.json()];
      expect(ra).toMatchObject({ turn: 1, status: 'completed', content: 'noted: cats' });
      expect(rb).toEqual(ra);
      const second = requests.filter((r) => r.messages.some((x) => x.content === 'add things'))[1];
      expect(second.messages.map((x) => x.content)).toContain('also mention cats');

      // The steered message and its turn are in the transcript.
      const steeredTranscript = (await (await fetch(`${base}/conversations/${id}`)).json()) as { messages: any[] };
      expect(steeredTranscript.messages.find((x) => x.content === 'also mention cats')).toMatchObject({
        role: 'user',
        steered: true,
      });

      // reject: 409, nothing kept.
      const other = `busy-${randomUUID()}`;
      const slow = post(base, `/conversations/${other}/messages`, { message: 'slow one' });
      await running(base, other);
      const rejected = await post(base, `/conversations/${other}/messages`, { message: 'hello?', busy: 'reject' });
      expect(rejected.status).toBe(409);
      expect(await rejected.json()).toMatchObject({
        errorType: 'Client.Busy',
        error: expect.stringContaining('turn 1 is running'),
      });
      expect(await (await slow).json()).toMatchObject({ turn: 1, status: 'completed' });
      const id2 = other;

      // interrupt: the running turn ends cancelled (its partial answer kept), the new message is answered next.
      const long = post(base, `/conversations/${id2}/messages`, { message: 'slow two' });
      await running(base, id2);
      await piecesWritten(3); // some text is written
      const now = await post(base, `/conversations/${id2}/messages`, { message: 'now this', busy: 'interrupt' });
      expect(await (await long).json()).toMatchObject({ turn: 2, status: 'cancelled' });
      expect(await now.json()).toMatchObject({ turn: 3, status: 'completed', content: 'you said: now this' });

      // enqueue (the default, also through useChat's body): answered after the running turn.
      const running4 = post(base, `/conversations/${id2}/messages`, { message: 'slow three' });
      await running(base, id2);
      const queued = await post(base, '/api/chat', {
        id: id2,
        busy: 'enqueue',
        messages: [{ id: randomUUID(), role: 'user', parts: [{ type: 'text', text: 'after that' }] }],
      });
      const chunks = (await queued.text()).split('\n\n').filter((l) => l.startsWith('data: {'));
      expect(JSON.parse(chunks[0].slice(6))).toMatchObject({ type: 'start', messageId: `${id2}-turn-5` });
      expect(await (await running4).json()).toMatchObject({ turn: 4, status: 'completed' });

      // The HTTP API's cancel answers once the turn has ended; many at once are one stop (one
      // Update in the history); one when none runs is 204.
      const slowFour = post(base, `/conversations/${id2}/messages`, { message: 'slow four' });
      await running(base, id2);
      const stops = await Promise.all(
        Array.from({ length: 150 }, (_, i) =>
          post(base, i % 2 ? `/conversations/${id2}/cancel` : `/api/chat/${id2}/stop`, {}).then(async (r) => [
            r.status,
            await r.text(),
          ]),
        ),
      );
      // 200 with the stopped turn, or 204 for a stop that came once it had ended; never a fault.
      for (const [status, body] of stops)
        expect([
          [200, '{"turn":6,"status":"cancelled"}'],
          [204, ''],
        ]).toContainEqual([status, body]);
      expect(stops.filter(([status]) => status === 200).length).toBeGreaterThan(0);
      expect(await (await slowFour).json()).toMatchObject({ turn: 6, status: 'cancelled' });
      const idle = await post(base, `/conversations/${id2}/cancel`, {});
      expect(idle.status).toBe(204);
      const history = await temporal().client.workflow.getHandle(id2).fetchHistory();
      const cancels = history.events!.filter(
        (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'cancelTurn',
      );
      expect(cancels).toHaveLength(1);

      // A policy that is not one: 400.
      const bad = await post(base, `/conversations/${id2}/messages`, { message: 'x', busy: 'later' });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: string }).error).toBe(
        '"busy" must be one of enqueue, reject, interrupt, steer, not "later"',
      );

      // The transcript keeps the interrupted turn's partial answer.
      const { messages } = (await (await fetch(`${base}/conversations/${id2}`)).json()) as { messages: any[] };
      const partial = messages.find((x) => x.stopped);
      expect(partial.content).toMatch(/^word0/);
      expect(STORY.startsWith(partial.content)).toBe(true);
    });
  } finally {
    await close();
  }
});

it('steers, rejects and interrupts through useChat (busy in the POST /api/chat body)', async () => {
  const { worker, base, close, requests } = await chatApi();
  const user = (text: string) => ({ id: randomUUID(), role: 'user', parts: [{ type: 'text', text }] });
  const chunks = async (r: Response) =>
    (await r.text())
      .split('\n\n')
      .filter((l) => l.startsWith('data: {'))
      .map((l) => JSON.parse(l.slice(6)) as { type: string; delta?: string; data?: unknown });
  const textOf = (cs: Array<{ type: string; delta?: string }>) =>
    cs
      .filter((c) => c.type === 'text-delta')
      .map((c) => c.delta)
      .join('');
  try {
    await worker.runUntil(async () => {
      // steer: the message joins the 3-step turn; its stream is the rest of that turn, from where it joined.
      const id = `chat-busy-${randomUUID()}`;
      const first = post(base, '/api/chat', { id, messages: [user('add things')] });
      await running(base, id);
      const steer = await post(base, '/api/chat', { id, busy: 'steer', messages: [user('also mention cats')] });
      const steered = await chunks(steer);
      expect(steered[0]).toEqual({ type: 'start', messageId: `${id}-turn-1` });
      expect(steered).toContainEqual({
        type: 'data-steered',
        data: expect.objectContaining({ message: 'also mention cats' }),
      });
      expect(textOf(steered)).toBe('noted: cats');
      expect(textOf(await chunks(await first))).toBe('noted: cats');
      const second = requests.filter((r) => r.messages.some((x) => x.content === 'add things'))[1];
      expect(second.messages.map((x) => x.content)).toContain('also mention cats');

      // reject: 409 while a turn runs; interrupt: the running turn stops, the new message is answered.
      const other = `chat-busy-${randomUUID()}`;
      const slow = post(base, '/api/chat', { id: other, messages: [user('long story')] });
      await running(base, other);
      await piecesWritten(3); // some text is written
      const refused = await post(base, '/api/chat', { id: other, busy: 'reject', messages: [user('not now')] });
      expect(refused.status).toBe(409);
      expect(((await refused.json()) as { error: string }).error).toMatch(
        /^the conversation is busy: turn 1 is running/,
      );
      const now = await post(base, '/api/chat', { id: other, busy: 'interrupt', messages: [user('now this')] });
      expect(textOf(await chunks(now))).toBe('you said: now this');
      const stopped = await chunks(await slow);
      expect(stopped.at(-1)).toMatchObject({ type: 'finish', finishReason: 'other' });
      expect(LONG.startsWith(textOf(stopped)) && textOf(stopped).length < LONG.length).toBe(true);
    });
  } finally {
    await close();
  }
});

it('stops a useChat turn with POST /api/chat/:id/stop: cancelled, its partial answer kept, the next message answered', async () => {
  const { worker, base, close } = await chatApi();
  try {
    await worker.runUntil(async () => {
      const id = `stop-${randomUUID()}`;
      written = 0;
      expect((await post(base, `/api/chat/${id}/stop`, {})).status).toBe(404);
      const response = await post(base, '/api/chat', {
        id,
        messages: [{ id: randomUUID(), role: 'user', parts: [{ type: 'text', text: 'long story' }] }],
      });
      const reader = response.body!.getReader();
      let text = '';
      // Some text shown, and batched to the durable log (what the transcript keeps of a stopped answer).
      while (text.split('"text-delta"').length < 12) text += new TextDecoder().decode((await reader.read()).value);
      const stopped = await post(base, `/api/chat/${id}/stop`, {});
      expect(stopped.status).toBe(200);
      expect(await stopped.json()).toEqual({ turn: 1, status: 'cancelled' });
      // The model call stopped too (its request was aborted), not only the turn: after a moment for
      // the abort to reach the model, a window of ten of its pieces in which it writes none (what
      // did not happen has no state to wait for).
      await sleep(300);
      const after = written;
      await sleep(600);
      expect(written).toBe(after);
      expect(written).toBeLessThan(400);
      for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value);
      expect(text).toContain('"finishReason":"other"');
      // Nothing runs now: 204.
      expect((await post(base, `/api/chat/${id}/stop`, {})).status).toBe(204);
      const history = (await (await fetch(`${base}/api/chat/${id}/messages`)).json()) as any[];
      const answer = history[1].parts
        .filter((p: any) => p.type === 'text')
        .map((p: any) => p.text)
        .join('');
      expect(answer).toMatch(/^word0/);
      expect(LONG.startsWith(answer) && answer.length < LONG.length).toBe(true);
      const next = await post(base, `/conversations/${id}/messages`, { message: 'and now?' });
      expect(await next.json()).toMatchObject({ turn: 2, status: 'completed', content: 'you said: and now?' });
    });
  } finally {
    await close();
  }
});
