import { randomUUID } from 'node:crypto';
import { HttpAgent } from '@ag-ui/client';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { call, lastOf, startModel } from '../helpers/scripted-model';
import { startHttpApi } from '../helpers/http-api';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';
import { testRegistry, transfers } from '../helpers/test-tools';

/** AG-UI, spoken to the protocol's own client: `@ag-ui/client`'s HttpAgent, which checks the event order as it reads. */
const temporal = useTestTemporal();

/** 40 words, one every 60 ms: a turn still running when the next message comes. */
const STORY = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
/**
 * 300 words (18 s): the turn a client's abort stops, which must still be running when the stop
 * lands however busy the machine is (the 40 words were once all out before it did).
 */
const LONG_STORY = Array.from({ length: 300 }, (_, i) => `w${i}`).join(' ');

function model(req: ChatRequest) {
  const last = req.messages[req.messages.length - 1];
  if (lastOf(req, 'user') === 'story two') return { content: LONG_STORY, chunkDelayMs: 60 };
  if (lastOf(req, 'user').startsWith('story')) return { content: STORY, chunkDelayMs: 60 };
  if (lastOf(req, 'user').startsWith('say ')) return { content: lastOf(req, 'user').slice(4) };
  if (last.role === 'tool')
    return {
      content: `tool said: ${String(last.content)}`,
      chunks: ['tool said: ', String(last.content)],
      chunkDelayMs: 300,
    };
  if (lastOf(req, 'user') === 'pay bob') return call(['transfer', { to: 'bob', amount: 9 }]);
  return call(['stock_quote', { symbol: 'ACME' }]);
}

it('runs turns of a thread through HttpAgent: text and tool events, state, and an approval as an interrupt resumed by the next run', async () => {
  const m = await startModel(model);
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: m.baseURL, registry: testRegistry() });
  const api = await startHttpApi({ client: t.client, taskQueue });
  const base = api.base;
  const threadId = `ag-ui-${randomUUID()}`;
  try {
    await worker.runUntil(async () => {
      const agent = new HttpAgent({ url: `${base}/ag-ui`, threadId });
      agent.addMessage({ id: 'u1', role: 'user', content: 'price of ACME' });
      const events: Array<{ type: string; [k: string]: unknown }> = [];
      const first = await agent.runAgent({ runId: 'run-1' }, { onEvent: ({ event }) => void events.push(event) });
      const types = events.map((e) => e.type);
      expect(types[0]).toBe('RUN_STARTED');
      expect(types.at(-1)).toBe('RUN_FINISHED');
      expect(types).toEqual(
        expect.arrayContaining([
          'STEP_STARTED',
          'TOOL_CALL_START',
          'TOOL_CALL_ARGS',
          'TOOL_CALL_END',
          'TOOL_CALL_RESULT',
          'TEXT_MESSAGE_START',
          'TEXT_MESSAGE_CONTENT',
          'TEXT_MESSAGE_END',
          'STEP_FINISHED',
          'STATE_SNAPSHOT',
        ]),
      );
      expect(events.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').length).toBeGreaterThan(1);
      expect(first.result).toMatchObject({ status: 'completed', content: expect.stringContaining('tool said:') });
      // The client built the thread's messages from the events: the call, its result, the answer.
      const assistant = agent.messages.find((x) => x.role === 'assistant' && x.toolCalls?.length);
      expect(assistant).toMatchObject({
        toolCalls: [{ function: { name: 'stock_quote', arguments: JSON.stringify({ symbol: 'ACME' }) } }],
      });
      expect(agent.messages.find((x) => x.role === 'tool')?.content).toContain('42.5');
      expect(agent.messages.at(-1)).toMatchObject({
        role: 'assistant',
        content: expect.stringMatching(/^tool said: .*42\.5/),
      });
      expect(agent.state).toMatchObject({ workflowId: threadId, turn: 1, status: 'completed' });

      // A tool that needs approval: the run finishes with an interrupt; the next run resumes it.
      const paid = transfers.length;
      agent.addMessage({ id: 'u2', role: 'user', content: 'pay bob' });
      const asked = await agent.runAgent({ runId: 'run-2' });
      expect(asked.result).toBeUndefined();
      expect(agent.pendingInterrupts).toEqual([
        expect.objectContaining({ reason: 'tool_approval', toolCallId: expect.any(String), id: expect.any(String) }),
      ]);
      expect(agent.state).toMatchObject({
        status: 'awaiting_approval',
        pendingApprovals: [agent.pendingInterrupts[0].id],
      });
      expect(transfers.length).toBe(paid);
      const interrupt = agent.pendingInterrupts[0];
      const resumed = await agent.runAgent({
        runId: 'run-3',
        resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }],
      });
      expect(resumed.result).toMatchObject({ status: 'completed', content: 'tool said: sent 9 to bob' });
      expect(transfers.length).toBe(paid + 1);
      expect(agent.pendingInterrupts).toEqual([]);
      expect(agent.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'tool said: sent 9 to bob' });

      // Hostile input is a clear 400, and the server goes on.
      const bad = await fetch(`${base}/ag-ui`, { method: 'POST', body: JSON.stringify({ threadId, runId: 'x' }) });
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({ error: expect.stringContaining('"messages"') });
      for (const [content, error] of [
        [[{ type: 'text', text: { a: 1 } }], '"text" must be a string'],
        [[{ type: 'image', source: { type: 'data', value: 'AAAA' } }], '"source.mimeType"'],
      ] as const) {
        const part = await fetch(`${base}/ag-ui`, {
          method: 'POST',
          body: JSON.stringify({
            threadId: `${threadId}-parts`,
            runId: 'x',
            messages: [{ id: 'p1', role: 'user', content }],
            tools: [],
            context: [],
            state: {},
            forwardedProps: {},
          }),
        });
        expect(part.status).toBe(400);
        expect(await part.json()).toMatchObject({ error: expect.stringContaining(error) });
      }
    });
  } finally {
    api.close();
  }
}, 120_000);

it('takes busy and stopOnDisconnect in forwardedProps: reject (409), interrupt, and an abort that stops the turn', async () => {
  const m = await startModel(model);
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: m.baseURL, registry: testRegistry() });
  const api = await startHttpApi({ client: t.client, taskQueue });
  const threadId = `ag-ui-busy-${randomUUID()}`;
  const run = (id: string, content: string, forwardedProps: Record<string, unknown>, signal?: AbortSignal) =>
    fetch(`${api.base}/ag-ui`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({
        threadId,
        runId: `run-${id}`,
        messages: [{ id, role: 'user', content }],
        tools: [],
        context: [],
        state: {},
        forwardedProps,
      }),
      signal,
    });
  /** Reads a run's events until `until` says stop (or the stream ends). */
  const read = async (r: Response, until: (types: string[]) => boolean = () => false) => {
    const reader = r.body!.getReader();
    let text = '';
    const types = () =>
      text
        .split('\n\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => (JSON.parse(l.slice(6)) as { type: string }).type);
    for (let c = await reader.read(); !c.done && !until(types()); c = await reader.read())
      text += new TextDecoder().decode(c.value);
    return { text, types: types(), reader };
  };
  const contents = (text: string) =>
    text
      .split('\n\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)) as { type: string; delta?: string })
      .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
      .map((e) => e.delta)
      .join('');
  const turnsOf = async () =>
    (await (await fetch(`${api.base}/conversations/${threadId}`)).json()) as { turns: number; state: string };
  try {
    await worker.runUntil(async () => {
      const story = await run('u1', 'story one', {});
      const started = await read(story, (types) => types.filter((x) => x === 'TEXT_MESSAGE_CONTENT').length > 2);
      // reject: refused at once, nothing kept.
      const refused = await run('u2', 'say no', { busy: 'reject' });
      expect(refused.status).toBe(409);
      expect(((await refused.json()) as { error: string }).error).toMatch(
        /^the conversation is busy: turn 1 is running/,
      );
      // interrupt: the running turn ends (cancelled), the new message is answered next.
      const now = await run('u3', 'say now', { busy: 'interrupt' });
      const rest = await read(now);
      expect(contents(rest.text)).toBe('now');
      let first = started.text;
      for (let c = await started.reader.read(); !c.done; c = await started.reader.read())
        first += new TextDecoder().decode(c.value);
      expect(first).toContain('RUN_FINISHED');
      expect(contents(first).length).toBeLessThan(STORY.length);
      expect(await turnsOf()).toMatchObject({ turns: 2, state: 'idle' });

      // stopOnDisconnect: the client's abort stops the durable turn, not only its request.
      const abort = new AbortController();
      const stoppable = await run('u4', 'story two', { stopOnDisconnect: true }, abort.signal);
      await read(stoppable, (types) => types.filter((x) => x === 'TEXT_MESSAGE_CONTENT').length > 2);
      abort.abort();
      for (let i = 0; (await turnsOf()).state !== 'idle'; i++) {
        // Well before the story would have ended by itself.
        expect(i).toBeLessThan(150);
        await new Promise((r) => setTimeout(r, 100));
      }
      const history = (await (await fetch(`${api.base}/conversations/${threadId}`)).json()) as {
        messages: Array<{ role: string; content: string; stopped?: true }>;
      };
      expect(history.messages.at(-1)).toMatchObject({ role: 'assistant', stopped: true });
      // Without it, a closed request leaves the turn running (a reload must not cancel).
      const left = new AbortController();
      const kept = await run('u5', 'story three', {}, left.signal);
      await read(kept, (types) => types.includes('TEXT_MESSAGE_CONTENT'));
      left.abort();
      // A window in which a stop would have landed: what did not happen has no state to wait for.
      await new Promise((r) => setTimeout(r, 300));
      expect((await turnsOf()).state).not.toBe('idle');
    });
  } finally {
    api.close();
    await m.close();
  }
});
