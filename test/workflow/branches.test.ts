import { randomUUID } from 'node:crypto';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { conversationStatus, sendMessage } from '../../src/client/conversations';
import { forkConversation, listBranches, switchBranch } from '../../src/client/branches';
import { readTranscript } from '../../src/client/workflow-controls';
import { streamEvents } from '../../src/client/event-stream';
import type { AgentEvent } from '../../src/core';
import { lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

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

      // The event stream names each turn's branch, where a fork started it, and the switch.
      await new Promise((r) => setTimeout(r, 300));
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
