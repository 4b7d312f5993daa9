import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpApi } from '../../src/http/http-api';
import { eventsPosition } from '../../src/client/event-stream';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { eventually } from '../helpers/processes';
import { answer, call, lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';
import { testAgents, testRegistry } from '../helpers/test-tools';

/** The HTTP API with real HTTP requests (fetch) against a real worker and Temporal server. */
const temporal = useTestTemporal();

const QUESTION = 'What is the square root of the sum of the numbers of letters in the words "hello" and "world"';

function model(req: ChatRequest) {
  const last = req.messages[req.messages.length - 1];
  const images = req.messages.flatMap((m) => m.images ?? []);
  if (images.length)
    return answer(
      `I see ${images.map((url) => (url.startsWith('data:image/png;base64,iVBOR') ? 'a PNG' : url)).join(', ')}`,
    );
  const results = req.messages.filter((m) => m.role === 'tool').map((m) => Number(m.content));
  if (lastOf(req, 'user') === QUESTION) {
    if (results.length === 0) return call(['stringLength', { s: 'hello' }], ['stringLength', { s: 'world' }]);
    if (results.length === 2) return call(['add', { a: results[0], b: results[1] }]);
    if (results.length === 3) return call(['sqrt', { x: results[2] }]);
    return answer(
      `The square root of the sum of the numbers of letters in the words "hello" and "world" is approximately ${results[3].toFixed(3)}.`,
    );
  }
  if (lastOf(req, 'user') === 'pay bob' && last.role === 'user') return call(['transfer', { to: 'bob', amount: 5 }]);
  if (last.role === 'tool') return answer(`tool said: ${last.content}`);
  if (req.messages[0].role === 'system') return answer(`(${req.messages[0].content}) ${lastOf(req, 'user')}`);
  return answer(
    `you said: ${lastOf(req, 'user')} (${req.messages.filter((m) => m.role === 'user').length} user messages seen)`,
  );
}

async function withApi(body: (base: string) => Promise<void>): Promise<void> {
  const m = await startModel(model);
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, {
    baseURL: m.baseURL,
    registry: testRegistry(),
    agents: testAgents(),
  });
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

const post = (url: string, body: unknown) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

it('answers GET /assistant-with-tool?message= with the text, as in the Quarkus example', async () => {
  await withApi(async (base) => {
    const res = await fetch(`${base}/assistant-with-tool?message=${encodeURIComponent(QUESTION)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await res.text()).toBe(
      'The square root of the sum of the numbers of letters in the words "hello" and "world" is approximately 3.162.',
    );
    expect(res.headers.get('x-workflow-id')).toMatch(/^agent-what-is-the-square-root/);

    const missing = await fetch(`${base}/assistant-with-tool`);
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({
      error: expect.stringContaining('missing the "message" query parameter'),
      errorType: 'Http.BadRequest',
    });
  });
});

it('holds conversations: messages, transcript with status, approvals, and clear errors', async () => {
  await withApi(async (base) => {
    const id = `http-${randomUUID()}`;
    const first = await post(`${base}/conversations/${id}/messages`, { message: 'hello' });
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({
      workflowId: id,
      turn: 1,
      status: 'completed',
      content: 'you said: hello (1 user messages seen)',
    });
    const second = await json(post(`${base}/conversations/${id}/messages`, { message: 'again' }));
    expect(second).toMatchObject({ turn: 2, content: 'you said: again (2 user messages seen)' });

    const got = await fetch(`${base}/conversations/${id}`);
    expect(got.status).toBe(200);
    const view = await json(got);
    expect(view).toMatchObject({ kind: 'conversation', conversationId: id, state: 'idle', turns: 2, messageCount: 4 });
    expect(view.messages.map((m: { content: string }) => m.content)).toEqual([
      'hello',
      'you said: hello (1 user messages seen)',
      'again',
      'you said: again (2 user messages seen)',
    ]);

    // Approval over HTTP while the turn waits.
    const paying = post(`${base}/conversations/${id}/messages`, { message: 'pay bob' });
    let callId: string | undefined;
    for (let i = 0; i < 100 && !callId; i++) {
      const status = await json(fetch(`${base}/conversations/${id}`));
      callId = status.pendingApprovals[0]?.callId;
      if (!callId) await new Promise((r) => setTimeout(r, 100));
    }
    expect(callId).toBeDefined();
    const wrong = await post(`${base}/conversations/${id}/approvals/nope`, { approve: true });
    expect(wrong.status).toBe(400);
    expect((await json(wrong)).error).toMatch(/no tool call "nope" is awaiting approval/);
    const badBody = await post(`${base}/conversations/${id}/approvals/${callId}`, { approve: 'yes' });
    expect(badBody.status).toBe(400);
    const decided = await post(`${base}/conversations/${id}/approvals/${callId}`, {
      approve: false,
      reason: 'not today',
    });
    expect(await decided.json()).toEqual({ callId, approved: false, stillPending: 0 });
    expect(await json(paying)).toMatchObject({ turn: 3, content: expect.stringContaining('Reason: not today') });

    // Bad input: 400 with a JSON error, nothing written.
    for (const body of ['{not json', '[1]', { message: '' }, { message: 'x', tools: ['teleport'] }]) {
      const res = await post(`${base}/conversations/${id}/messages`, body);
      expect(res.status).toBe(400);
      expect(typeof (await json(res)).error).toBe('string');
    }
    expect((await json(fetch(`${base}/conversations/${id}`))).turns).toBe(3);

    // Unknown conversation and routes: 404.
    const unknown = await fetch(`${base}/conversations/never-${randomUUID()}`);
    expect(unknown.status).toBe(404);
    expect(await json(unknown)).toEqual({
      error: expect.stringMatching(/no run or conversation "never-/),
      errorType: 'Client.NotFound',
    });
    expect((await post(`${base}/conversations/never-${randomUUID()}/approvals/x`, { approve: true })).status).toBe(404);
    expect((await fetch(`${base}/nowhere`)).status).toBe(404);
    expect((await fetch(`${base}/conversations/${id}/messages`)).status).toBe(405);
  });
});

describe('requests that used to answer 500, or leave something behind', () => {
  it('answers a malformed percent-escape and an over-long id with 400', async () => {
    await withApi(async (base) => {
      const escape = await post(`${base}/conversations/%ZZ/messages`, { message: 'hi' });
      expect(escape.status).toBe(400);
      expect(await json(escape)).toEqual({
        error: 'the path /conversations/%ZZ/messages has a malformed percent-escape',
        errorType: 'Http.BadRequest',
      });
      const long = await post(`${base}/conversations/${'x'.repeat(1001)}/messages`, { message: 'hi' });
      expect(long.status).toBe(400);
      expect((await json(long)).error).toBe('the conversation id is 1001 bytes long; Temporal accepts at most 1000');
      expect((await fetch(`${base}/runs/${'y'.repeat(1001)}`)).status).toBe(400);
      // Node answers oversized headers itself, as docs/http-api.md says.
      expect((await fetch(`${base}/runs/x`, { headers: { 'x-big': 'z'.repeat(20_000) } })).status).toBe(431);
      // Ids a terminal or the Web UI would show as something else: control, bidi and invisible characters.
      for (const id of ['a%0Ab', 'nul%00', 'bidi%E2%80%AEtxt.exe', 'zero%E2%80%8Bwidth']) {
        const res = await fetch(`${base}/conversations/${id}`);
        expect(res.status).toBe(400);
        expect((await json(res)).error).toBe(
          'the conversation id must not contain control, bidirectional-override or invisible characters',
        );
      }
    });
  });

  it('bounds ?wait= before anything starts, and answers an event stream past its end at once', async () => {
    await withApi(async (base) => {
      for (const wait of ['99999999d', '25d', '2h']) {
        const id = `wait-${randomUUID()}`;
        const res = await post(`${base}/conversations/${id}/messages?wait=${wait}`, { message: 'hi' });
        expect(res.status).toBe(400);
        expect((await json(res)).error).toMatch(/^"wait" may be at most 1h/);
        // Nothing was started.
        await expect(temporal().client.workflow.getHandle(id).describe()).rejects.toThrow(/not found/i);
      }
      expect((await post(`${base}/runs?wait=1h`, { message: 'hi' })).status).toBe(200);

      const id = `sse-${randomUUID()}`;
      expect((await post(`${base}/conversations/${id}/messages`, { message: 'hello' })).status).toBe(200);
      const past = await fetch(`${base}/conversations/${id}/events`, {
        headers: { 'last-event-id': '1000000000000000' },
      });
      expect(past.status).toBe(400);
      expect((await json(past)).error).toMatch(
        /^event offset 1000000000000000 is past the last event of "sse-[0-9a-f-]+" \(\d+\)/,
      );
      // Caught up, with nothing new: the headers come at once all the same.
      const stop = new AbortController();
      const last = await eventsPosition(temporal().client, id);
      const caughtUp = await fetch(`${base}/conversations/${id}/events`, {
        headers: { 'last-event-id': String(last) },
        signal: stop.signal,
      });
      expect(caughtUp.status).toBe(200);
      stop.abort();
    });
  });

  it('leaves no conversation behind when the message that would start it is refused', async () => {
    await withApi(async (base) => {
      const id = `bad-${randomUUID()}`;
      const refused = await post(`${base}/conversations/${id}/messages`, { message: 'hi', tools: ['teleport'] });
      expect(refused.status).toBe(400);
      expect((await json(refused)).error).toMatch(/unknown tool:? teleport/);
      const after = await fetch(`${base}/conversations/${id}`);
      expect(after.status).toBe(404);
      // Not even a closed one: the workflow is gone from Temporal.
      await expect(temporal().client.workflow.getHandle(id).describe()).rejects.toThrow(/not found/i);

      // An agent the workers do not serve: said, naming the task queue, and nothing left either.
      const other = `bad-agent-${randomUUID()}`;
      const unknown = await post(`${base}/conversations/${other}/messages`, { message: 'hi', agent: 'no-such-agent' });
      expect(unknown.status).toBe(400);
      expect(await json(unknown)).toEqual({
        error: expect.stringMatching(
          /^no agent named "no-such-agent" on task queue "test-[0-9a-f-]+" \(its workers serve: /,
        ),
        errorType: 'Client.Rejected',
      });
      // The server deletes a closed workflow in the background, moments later.
      const gone = () =>
        temporal()
          .client.workflow.getHandle(other)
          .describe()
          .then(
            () => false,
            (err: Error) => /not found/i.test(err.message),
          );
      expect(await eventually(gone, 10_000)).toBe(true);
    });
  });

  it('keeps one-shot runs and conversations apart, and serves runs under /runs', async () => {
    await withApi(async (base) => {
      const run = await post(`${base}/runs`, { message: QUESTION, tools: ['stringLength', 'add', 'sqrt'] });
      expect(run.status).toBe(200);
      const result = await json(run);
      expect(result).toMatchObject({ status: 'completed', iterations: 4, content: expect.stringContaining('3.162') });
      const runId = result.workflowId as string;

      const asConversation = await fetch(`${base}/conversations/${runId}`);
      expect(asConversation.status).toBe(404);
      expect(await json(asConversation)).toEqual({
        error: `"${runId}" is a one-shot run, not a conversation; see GET /runs/${runId}`,
        errorType: 'Client.WrongKind',
      });
      const send = await post(`${base}/conversations/${runId}/messages`, { message: 'hi' });
      expect(send.status).toBe(409);
      expect((await json(send)).error).toMatch(/is a one-shot run, not a conversation/);
      // The finished run is still a run: nothing started a conversation under its id.
      expect((await temporal().client.workflow.getHandle(runId).describe()).type).toBe('agentWorkflow');

      const view = await json(fetch(`${base}/runs/${runId}`));
      expect(view).toMatchObject({
        kind: 'run',
        workflowId: runId,
        state: 'completed',
        iteration: 4,
        toolExecutionCount: 4,
      });
      expect(view.messages[0]).toEqual({ role: 'user', content: QUESTION });
      expect((await post(`${base}/runs`, { message: 'x', maxExecutionTime: '5' })).status).toBe(400);
    });
  });

  it('answers 202 with a Location when the caller stops waiting before the run ends', async () => {
    await withApi(async (base) => {
      const id = `wait-${randomUUID()}`;
      const paying = await post(`${base}/conversations/${id}/messages?wait=1s`, { message: 'pay bob' });
      expect(paying.status).toBe(202);
      expect(paying.headers.get('location')).toBe(`/conversations/${id}`);
      expect(await json(paying)).toMatchObject({
        conversationId: id,
        status: 'running',
        errorType: 'Client.StillRunning',
      });
      const view = await json(fetch(`${base}${paying.headers.get('location')}`));
      expect(view.state).toBe('awaiting_approval');
      const decided = await post(`${base}/conversations/${id}/approvals/${view.pendingApprovals[0].callId}`, {
        approve: false,
      });
      expect(decided.status).toBe(200);
      const quick = await fetch(`${base}/assistant-with-tool?message=hi`, { headers: { prefer: 'wait=0' } });
      expect(quick.status).toBe(202);
      // The run went on without this request; it finishes on its own.
      const { workflowId } = await json(quick);
      expect(await temporal().client.workflow.getHandle(workflowId).result()).toMatchObject({ status: 'completed' });
    });
  });
});

describe('named agents over HTTP', () => {
  it('lists them, and runs one by ?agent= or the "agent" field', async () => {
    await withApi(async (base) => {
      const listed = await json(fetch(`${base}/agents`));
      expect(listed.agents.map((a: { name: string }) => a.name)).toEqual([
        'forecaster',
        'clerk',
        'resilient',
        'writer',
        'triage',
        'researcher',
        'billing',
      ]);
      expect(listed.agents.find((a: { name: string }) => a.name === 'writer')).toMatchObject({
        agents: ['researcher'],
      });
      const text = await fetch(`${base}/assistant-with-tool?message=hello&agent=clerk`);
      expect(await text.text()).toBe('(You are a clerk. Be brief.) hello');
      const unknown = await fetch(`${base}/assistant-with-tool?message=hello&agent=nobody`);
      expect(unknown.status).toBe(502);
      expect(await json(unknown)).toMatchObject({ errorType: 'Agent.UnknownAgent' });
      const turn = await json(
        post(`${base}/conversations/agent-${randomUUID()}/messages`, { message: 'hi', agent: 'clerk' }),
      );
      expect(turn).toMatchObject({ turn: 1, content: '(You are a clerk. Be brief.) hi' });
      expect((await post(`${base}/runs`, { message: 'hi', agent: 'no such agent!' })).status).toBe(400);
    });
  });
});

/** Reads a Server-Sent Events body to its end: each message's `id` and parsed `data`, and its `event` name if any. */
async function readSse(res: Response): Promise<Array<{ id?: string; event?: string; data: any }>> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((block) => block.split('\n').some((line) => line.startsWith('id:') || line.startsWith('event: error')))
    .map((block) => {
      const field = (name: string) =>
        block
          .split('\n')
          .find((line) => line.startsWith(`${name}:`))
          ?.slice(name.length + 1)
          .trim();
      return { id: field('id'), event: field('event'), data: JSON.parse(field('data')!) };
    });
}

/** A stream's events other than text, and each model call's text. */
function transcriptOf(messages: Array<{ data: any }>) {
  const text: Record<number, string> = {};
  for (const { data } of messages)
    if (data.type === 'text_delta') text[data.call] = (text[data.call] ?? '') + data.delta;
  return { events: messages.map((m) => m.data).filter((e) => e.type !== 'text_delta'), text };
}

describe('event streams (Server-Sent Events)', () => {
  it('POST /conversations/:id/messages with Accept: text/event-stream streams that turn and ends after it; GET .../events resumes from Last-Event-ID or ?after=', async () => {
    await withApi(async (base) => {
      const id = `sse-${randomUUID()}`;
      const sse = (message: string) =>
        fetch(`${base}/conversations/${id}/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify({ message }),
        });
      const first = await sse('hello');
      expect(first.status).toBe(200);
      expect(first.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const turn1 = await readSse(first);
      // An event's id is where its reader stands: its offset, and for text the live path brought
      // ahead of the log (this worker runs in the API's process), how far that text went.
      expect(turn1.map((m) => m.data.offset)).toEqual(turn1.map((m) => Number(m.id!.split('.')[0])));
      const others = turn1.filter((m) => m.data.type !== 'text_delta');
      for (const m of others) expect(m.id).toBe(String(m.data.offset));
      expect(others.map((m) => m.data.offset)).toEqual(
        [...new Set(others.map((m) => m.data.offset))].sort((a, b) => a - b),
      );
      expect(turn1[0].data).toMatchObject({ type: 'turn_started', turn: 1, message: 'hello' });
      expect(turn1[turn1.length - 1].data).toMatchObject({
        type: 'turn_completed',
        turn: 1,
        result: { content: 'you said: hello (1 user messages seen)' },
      });
      const text = turn1
        .filter((m) => m.data.type === 'text_delta')
        .map((m) => m.data.delta)
        .join('');
      expect(text).toBe('you said: hello (1 user messages seen)');

      const second = await readSse(await sse('again'));
      const end1 = turn1[turn1.length - 1].data.offset;
      const end2 = second[second.length - 1].data.offset;
      expect(second[0].data).toMatchObject({ type: 'turn_started', turn: 2, offset: end1 + 1 });
      expect(second[second.length - 1].data).toMatchObject({ type: 'turn_completed', turn: 2 });

      // Reconnecting: everything after the offset, then the stream stays open for the next turn.
      const stop = new AbortController();
      const resumed = await fetch(`${base}/conversations/${id}/events`, {
        headers: { 'last-event-id': String(end1 - 1) },
        signal: stop.signal,
      });
      expect(resumed.status).toBe(200);
      const reader = resumed.body!.getReader();
      let got = '';
      while (!got.includes(`id: ${end2}\n`)) got += new TextDecoder().decode((await reader.read()).value);
      stop.abort();
      const ids = [...got.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
      expect(ids[0]).toBe(end1);
      expect(ids).toEqual(ids.map((_, i) => end1 + i));

      // ?after= works the same; a bad offset is a 400; an unknown id a 404; a run id here a 404 naming /runs.
      const bad = await fetch(`${base}/conversations/${id}/events?after=soon`);
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: string }).error).toMatch(/must be an event offset/);
      expect((await fetch(`${base}/conversations/nope-${randomUUID()}/events`)).status).toBe(404);
    });
  });

  it('POST /runs with Accept: text/event-stream streams the run; GET /runs/:id/events replays it for a late subscriber', async () => {
    await withApi(async (base) => {
      const res = await fetch(`${base}/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ message: QUESTION }),
      });
      expect(res.status).toBe(200);
      const workflowId = res.headers.get('x-workflow-id')!;
      const live = await readSse(res);
      expect(live.filter((m) => m.data.type === 'tool_call_finished').map((m) => m.data.result)).toEqual([
        '5',
        '5',
        '10',
        expect.stringMatching(/^3\.16/),
      ]);
      expect(live[live.length - 1].data).toMatchObject({ type: 'turn_completed', result: { status: 'completed' } });
      // The run has ended: a late subscriber gets the whole run, then the stream ends.
      const late = await readSse(await fetch(`${base}/runs/${workflowId}/events`));
      // The same events and text; the text in other pieces (the log's batches, not the model's words).
      expect(transcriptOf(late)).toEqual(transcriptOf(live));
      expect(late.filter((m) => m.data.type === 'text_delta').length).toBeLessThanOrEqual(
        live.filter((m) => m.data.type === 'text_delta').length,
      );
      const wrong = await fetch(`${base}/conversations/${workflowId}/events`);
      expect(wrong.status).toBe(404);
      expect(((await wrong.json()) as { error: string }).error).toMatch(
        /is a one-shot run, not a conversation; see GET \/runs\//,
      );
    });
  });
});

it('takes images with a message (data URLs stored, URLs passed on), and refuses what it cannot send with 400', async () => {
  const png =
    'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
  await withApi(async (base) => {
    const run = await post(`${base}/runs`, {
      message: 'What is in these?',
      images: [png, 'https://example.com/a.jpg'],
    });
    expect(run.status).toBe(200);
    expect(await run.json()).toMatchObject({
      status: 'completed',
      content: 'I see a PNG, https://example.com/a.jpg',
    });
    const id = `http-images-${randomUUID()}`;
    const turn = await post(`${base}/conversations/${id}/messages`, { message: 'And this?', images: [{ url: png }] });
    expect(await json(turn)).toMatchObject({ status: 'completed', content: 'I see a PNG' });
    const view = await json(fetch(`${base}/conversations/${id}`));
    expect(view.messages[0]).toMatchObject({ role: 'user', images: [{ mediaType: 'image/png', bytes: 70 }] });
    expect(JSON.stringify(view)).not.toContain('iVBOR');

    for (const [images, error] of [
      ['https://example.com/a.jpg', /"images" must be an array/],
      [[42], /"images" must be an array/],
      [['data:text/plain;base64,aGVsbG8='], /image 1 is of type text\/plain; models take image\/png/],
      [['/etc/passwd'], /neither an http\(s\) URL nor a data URL/],
    ] as const) {
      const res = await post(`${base}/runs`, { message: 'x', images });
      expect(res.status).toBe(400);
      expect((await res.json()).error).toMatch(error);
    }
  });
});
