import { randomUUID } from 'node:crypto';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { conversationStatus, sendMessage, startMessage } from '../../src/client/conversations';
import { forkConversation, listBranches, switchBranch } from '../../src/client/branches';
import { readTranscript } from '../../src/client/workflow-controls';
import { streamEvents } from '../../src/client/event-stream';
import type { AgentEvent } from '../../src/core/events/agent-events';
import { call, lastOf, startModel } from '../helpers/scripted-model';
import { testRegistry } from '../helpers/test-tools';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';
import { startHttpApi } from '../helpers/http-api';

/**
 * Branches as a library user makes them: fork a conversation at an earlier message (edit, and
 * regenerate), read the branch it replaced, make it current again, fork into a new conversation.
 */
const temporal = useTestTemporal();

/** What a model request held: the user messages, in order. */
const asked = (req: ChatRequest) => req.messages.filter((m) => m.role === 'user').map((m) => m.content);
const texts = (messages: Array<{ content: unknown }>) => messages.map((m) => m.content);

it('forks at an earlier message, keeps the branch it replaced, switches back and forks into a new conversation', async () => {
  let answers = 0;
  const m = await startModel((req) => ({ content: `${lastOf(req, 'user')} #${++answers}` }));
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: m.baseURL });
  const start = { taskQueue, options: { system: 'be brief' } };
  const id = `branch-${randomUUID()}`;
  try {
    await worker.runUntil(async () => {
      for (const message of ['one', 'two', 'three']) await sendMessage(t.client, id, { message }, start);
      const seen: AgentEvent[] = [];
      const stop = new AbortController();
      const reading = (async () => {
        for await (const e of streamEvents(t.client, id, { after: -1, signal: stop.signal })) seen.push(e);
      })();

      // Edit: message 2 ("two") replaced; the turn sees only what came before it.
      const edited = await forkConversation(t.client, id, { atMessage: 2, message: 'TWO' }, start);
      expect(edited).toMatchObject({ conversationId: id, branch: 'b1', result: { turn: 4, content: 'TWO #4' } });
      expect(asked(m.requests[m.requests.length - 1])).toEqual(['one', 'TWO']);
      expect(texts((await readTranscript(t.client, id)).messages)).toEqual(['one', 'one #1', 'TWO', 'TWO #4']);
      const main = await readTranscript(t.client, id, { branch: 'main' });
      expect(main.system).toBe('be brief');
      expect(texts(main.messages)).toEqual(['one', 'one #1', 'two', 'two #2', 'three', 'three #3']);

      // Regenerate: the same message again, a new answer on a new branch; the provider sees the same prefix.
      const again = await forkConversation(t.client, id, { atMessage: 2 }, start);
      expect(again).toMatchObject({ branch: 'b2', result: { turn: 5, content: 'TWO #5' } });
      expect(m.requests[m.requests.length - 1].messages).toEqual(m.requests[m.requests.length - 2].messages);
      expect((await listBranches(t.client, id)).map((b) => [b.id, b.current, b.messageCount, b.label])).toEqual([
        ['b2', true, 4, 'TWO'],
        ['main', false, 6, undefined],
        ['b1', false, 4, 'TWO'],
      ]);
      expect(await conversationStatus(t.client, id)).toMatchObject({ branch: 'b2', turns: 5 });

      // Made current again: the next message goes on from the first branch's end.
      await switchBranch(t.client, id, 'main');
      expect(await sendMessage(t.client, id, { message: 'four' }, start)).toMatchObject({
        turn: 6,
        content: 'four #6',
      });
      expect(asked(m.requests[m.requests.length - 1])).toEqual(['one', 'two', 'three', 'four']);
      expect(texts((await readTranscript(t.client, id, { branch: 'b1' })).messages)).toEqual([
        'one',
        'one #1',
        'TWO',
        'TWO #4',
      ]);

      // The event stream names each turn's branch, where a fork started it, and the switch: read
      // until the last turn's end has come.
      for (let i = 0; !seen.some((e) => e.type === 'turn_completed' && e.turn === 6); i++) {
        expect(i).toBeLessThan(300);
        await new Promise((r) => setTimeout(r, 100));
      }
      stop.abort();
      await reading;
      const started = seen.filter((e) => e.type === 'turn_started');
      expect(
        started.map((e) => [e.turn, 'branch' in e ? e.branch : undefined, 'forkedAt' in e ? e.forkedAt : undefined]),
      ).toEqual([
        [1, undefined, undefined],
        [2, undefined, undefined],
        [3, undefined, undefined],
        [4, 'b1', 2],
        [5, 'b2', 2],
        [6, 'main', undefined],
      ]);
      expect(seen.some((e) => e.type === 'branch_switched' && e.branch === 'main')).toBe(true);

      // Into a new conversation, from a branch that is not current; the source stays as it is.
      const other = `${id}-other`;
      const into = await forkConversation(
        t.client,
        id,
        { atMessage: 2, branch: 'b1', into: other, message: 'elsewhere' },
        { taskQueue },
      );
      expect(into).toMatchObject({
        conversationId: other,
        branch: 'main',
        result: { content: 'elsewhere #7', turn: 7 },
      });
      expect(texts((await readTranscript(t.client, other)).messages)).toEqual([
        'one',
        'one #1',
        'elsewhere',
        'elsewhere #7',
      ]);
      expect((await readTranscript(t.client, other)).system).toBe('be brief');
      expect((await conversationStatus(t.client, id)).messageCount).toBe(8);

      // Bad forks get a sentence and leave everything as it was.
      await expect(forkConversation(t.client, id, { atMessage: 1, message: 'x' }, start)).rejects.toThrow(
        "message 1 is not a message a person sent (it is the assistant's): fork at a user message",
      );
      await expect(switchBranch(t.client, id, 'nope')).rejects.toThrow(
        'no branch "nope"; the conversation\'s branches: main, b1, b2',
      );
      await expect(readTranscript(t.client, id, { branch: 'nope' })).rejects.toThrow('has no branch "nope"');
      await expect(forkConversation(t.client, id, { atMessage: 2, into: other }, { taskQueue })).rejects.toThrow(
        'exists already',
      );
      expect((await conversationStatus(t.client, id)).turns).toBe(6);
    });
  } finally {
    await m.close();
  }
});

it('a fork while a turn waits for approval stops that turn (a fork interrupts by default), and usage counts every branch', async () => {
  const m = await startModel((req) =>
    lastOf(req, 'user') === 'pay bob' && req.messages[req.messages.length - 1].role === 'user'
      ? call(['transfer', { to: 'bob', amount: 5 }])
      : { content: `ok: ${lastOf(req, 'user')}` },
  );
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: m.baseURL, registry: testRegistry() });
  const start = { taskQueue };
  const id = `branch-approval-${randomUUID()}`;
  try {
    await worker.runUntil(async () => {
      await sendMessage(t.client, id, { message: 'hello' }, start);
      const paying = await startMessage(t.client, id, { message: 'pay bob' }, start);
      for (let i = 0; (await conversationStatus(t.client, id)).pendingApprovals.length === 0; i++) {
        expect(i).toBeLessThan(100);
        await new Promise((r) => setTimeout(r, 100));
      }
      const forked = await forkConversation(t.client, id, { atMessage: 2, message: 'never mind' }, start);
      expect(forked.result).toMatchObject({ status: 'completed', content: 'ok: never mind', branch: 'b1' });
      expect(await paying.result()).toMatchObject({ turn: 2, status: 'cancelled' });
      const status = await conversationStatus(t.client, id);
      expect(status).toMatchObject({ state: 'idle', pendingApprovals: [], turns: 3 });
      // Every branch's model calls were spent: the conversation's usage (and budget) counts them all.
      const turns = [await sendMessage(t.client, id, { message: 'and?' }, start)];
      const spent = (await conversationStatus(t.client, id)).usage.totalTokens;
      expect(spent).toBeGreaterThan(status.usage.totalTokens);
      expect(spent).toBe(status.usage.totalTokens + turns[0].usage.totalTokens);
      const main = await readTranscript(t.client, id, { branch: 'main' });
      // The stopped turn stays on the branch it was on: its call, and the result that says it never ran.
      expect(main.messages.map((x) => x.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'tool']);
    });
  } finally {
    await m.close();
  }
});

const post = (base: string, path: string, body: unknown) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const user = (id: string, text: string) => ({ id, role: 'user', parts: [{ type: 'text', text }] });
/** The text of a UI message stream's answer. */
const streamed = async (r: Response) =>
  (await r.text())
    .split('\n\n')
    .filter((l) => l.startsWith('data: {'))
    .map((l) => JSON.parse(l.slice(6)))
    .filter((c) => c.type === 'text-delta')
    .map((c) => c.delta)
    .join('');
const textOf = (m: any) =>
  m.parts
    .filter((p: any) => p.type === 'text')
    .map((p: any) => p.text)
    .join('');

it('regenerates and edits useChat messages as branches, and forks over the HTTP API', async () => {
  let answers = 0;
  const m = await startModel((req) => ({ content: `${lastOf(req, 'user')} #${++answers}` }));
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: m.baseURL });
  const api = await startHttpApi({ client: t.client, taskQueue });
  const { base } = api;
  const id = `chat-branch-${randomUUID()}`;
  try {
    await worker.runUntil(async () => {
      const [u1, u2] = [randomUUID(), randomUUID()];
      expect(await streamed(await post(base, '/api/chat', { id, messages: [user(u1, 'one')] }))).toBe('one #1');
      const a1 = { id: `${id}-turn-1`, role: 'assistant', parts: [{ type: 'text', text: 'one #1' }] };
      expect(
        await streamed(await post(base, '/api/chat', { id, messages: [user(u1, 'one'), a1, user(u2, 'two')] })),
      ).toBe('two #2');

      // regenerate(): the same messages without the answer, trigger "regenerate-message".
      const again = await post(base, '/api/chat', {
        id,
        trigger: 'regenerate-message',
        messageId: `${id}-turn-2`,
        messages: [user(u1, 'one'), a1, user(u2, 'two')],
      });
      expect(await streamed(again)).toBe('two #3');
      // Editing the first message (sendMessage with its messageId): the conversation goes on from before it.
      const edited = await post(base, '/api/chat', { id, messageId: u1, messages: [user(u1, 'ONE')] });
      expect(await streamed(edited)).toBe('ONE #4');
      expect(asked(m.requests[m.requests.length - 1])).toEqual(['ONE']);

      // The page loads the current branch, with the ids it knows; the others stay readable.
      const current = (await (await fetch(`${base}/api/chat/${id}/messages`)).json()) as any[];
      expect(current.map((x) => [x.id, textOf(x)])).toEqual([
        [u1, 'ONE'],
        [`${id}-turn-4`, 'ONE #4'],
      ]);
      const branches = (await (await fetch(`${base}/api/chat/${id}/branches`)).json()) as any[];
      expect(branches.map((b) => [b.id, b.current, b.label])).toEqual([
        ['b2', true, 'ONE'],
        ['main', false, undefined],
        ['b1', false, 'two'],
      ]);
      const first = (await (await fetch(`${base}/api/chat/${id}/messages?branch=main`)).json()) as any[];
      expect(first.map((x) => [x.id, textOf(x)])).toEqual([
        [u1, 'one'],
        [`${id}-turn-1`, 'one #1'],
        [u2, 'two'],
        [`${id}-turn-2`, 'two #2'],
      ]);
      expect((await fetch(`${base}/api/chat/${id}/messages?branch=zz`)).status).toBe(404);

      // Made current again: the next message follows the regenerated answer.
      const switched = await post(base, `/api/chat/${id}/branch`, { branch: 'b1' });
      expect(((await switched.json()) as any[])[0]).toMatchObject({ id: 'b1', current: true });
      const u3 = randomUUID();
      expect(await streamed(await post(base, '/api/chat', { id, messages: [user(u3, 'three')] }))).toBe('three #5');
      expect(asked(m.requests[m.requests.length - 1])).toEqual(['one', 'two', 'three']);

      // The HTTP API: fork (regenerate by index), read a branch, bad requests.
      const forked = await post(base, `/conversations/${id}/fork`, { atMessage: 4 });
      expect(await forked.json()).toMatchObject({ conversationId: id, branch: 'b3', result: { content: 'three #6' } });
      const read = (await (await fetch(`${base}/conversations/${id}?branch=b1`)).json()) as any;
      expect(texts(read.messages)).toEqual(['one', 'one #1', 'two', 'two #3', 'three', 'three #5']);
      expect(read.branch).toBe('b1');
      const viaMessages = await post(base, `/conversations/${id}/messages`, { message: 'TWO', fork: { atMessage: 2 } });
      expect(await viaMessages.json()).toMatchObject({ branch: 'b4', content: 'TWO #7' });
      const bad = await post(base, `/conversations/${id}/fork`, { atMessage: 1 });
      expect([bad.status, ((await bad.json()) as any).error]).toEqual([
        400,
        'message 1 of "' + id + '" is the assistant\'s: fork at a user message',
      ]);
      const none = await post(base, `/conversations/${id}/fork`, {});
      expect(none.status).toBe(400);
      const list = (await (await fetch(`${base}/conversations/${id}/branches`)).json()) as any[];
      expect(list.map((b) => b.id)).toEqual(['b4', 'main', 'b1', 'b2', 'b3']);
    });
  } finally {
    api.close();
    await m.close();
  }
});
