import { messagesPage, type ChatMessage } from '../../src/core/messages/chat-message';
import { ConversationLoader } from '../../src/activities/conversation-loader';

const msg = (i: number, size = 1): ChatMessage => ({ role: 'user', content: `${i}:${'x'.repeat(size)}` });

describe('messagesPage', () => {
  const all = [msg(0), msg(1), msg(2), msg(3)];
  it('slices by offset and limit', () => {
    expect(messagesPage(all, { offset: 1, limit: 2 })).toEqual([msg(1), msg(2)]);
    expect(messagesPage(all)).toEqual(all);
    expect(messagesPage(all, { offset: 9 })).toEqual([]);
  });
  it('stops at the size bound but always returns one message', () => {
    const big = [msg(0, 600), msg(1, 600), msg(2, 600)];
    expect(messagesPage(big, {}, 1000)).toEqual([big[0]]);
    expect(messagesPage(big, { offset: 1 }, 10)).toEqual([big[1]]);
  });
});

describe('ConversationLoader', () => {
  function fakeWorkflow(messages: ChatMessage[], pageSize = 2) {
    const calls: Array<[number, number]> = [];
    const loader = new ConversationLoader(async (_ref, offset, limit) => {
      calls.push([offset, limit]);
      return messages.slice(offset, offset + Math.min(limit, pageSize));
    }, 2);
    return { loader, calls, messages };
  }
  const ref = (messageCount: number, workflowId = 'w') => ({ workflowId, runId: 'r', messageCount });

  it('pages through the conversation, then fetches only new messages', async () => {
    const w = fakeWorkflow([msg(0), msg(1), msg(2)]);
    expect(await w.loader.load(ref(3))).toEqual(w.messages);
    expect(w.calls).toEqual([
      [0, 3],
      [2, 1],
    ]);
    w.messages.push(msg(3), msg(4));
    expect(await w.loader.load(ref(5))).toHaveLength(5);
    expect(w.calls.slice(2)).toEqual([[3, 2]]);
  });

  it('never returns messages beyond messageCount', async () => {
    const w = fakeWorkflow([msg(0), msg(1), msg(2), msg(3)], 10);
    await w.loader.load(ref(4));
    expect(await w.loader.load(ref(2))).toEqual([msg(0), msg(1)]);
  });

  it('forgets the least recently used conversation', async () => {
    const w = fakeWorkflow([msg(0)]);
    await w.loader.load(ref(1, 'a'));
    await w.loader.load(ref(1, 'b'));
    await w.loader.load(ref(1, 'c'));
    await w.loader.load(ref(1, 'a'));
    expect(w.calls).toHaveLength(4); // 'a' was evicted by 'c' and fetched again
  });

  it('serves what the workflow added through its sink without querying', async () => {
    const w = fakeWorkflow([msg(0), msg(1), msg(2), msg(3)]);
    w.loader.add({ workflowId: 'w', runId: 'r' }, 0, [msg(0), msg(1)]);
    w.loader.add({ workflowId: 'w', runId: 'r' }, 2, [msg(2)]);
    expect(await w.loader.load({ ...ref(3), pinned: 1, from: 1 })).toEqual([msg(0), msg(1), msg(2)]);
    w.loader.add({ workflowId: 'w', runId: 'r' }, 3, [msg(3)]);
    expect(await w.loader.load({ ...ref(4), pinned: 1, from: 2 })).toEqual([msg(0), msg(2), msg(3)]);
    expect(w.calls).toEqual([]);
  });

  it('keeps messages added beyond a call, and a retried workflow task may add the same again', async () => {
    const w = fakeWorkflow([msg(0), msg(1), msg(2)]);
    w.loader.add({ workflowId: 'w', runId: 'r' }, 0, [msg(0), msg(1), msg(2)]);
    expect(await w.loader.load(ref(2))).toEqual([msg(0), msg(1)]);
    w.loader.add({ workflowId: 'w', runId: 'r' }, 1, [msg(1), msg(2)]);
    expect(await w.loader.load(ref(3))).toEqual([msg(0), msg(1), msg(2)]);
    expect(w.calls).toEqual([]);
  });

  it('queries for what a restarted worker lacks, once', async () => {
    const w = fakeWorkflow([msg(0), msg(1), msg(2), msg(3)], 10);
    // Replay skipped the sink for messages 0-2; only the new one arrived.
    w.loader.add({ workflowId: 'w', runId: 'r' }, 3, [msg(3)]);
    expect(await w.loader.load(ref(4))).toEqual(w.messages);
    expect(w.calls).toEqual([[0, 4]]);
  });

  it('drops the least recently used runs past its memory budget', async () => {
    const w = fakeWorkflow([msg(0, 1000)]);
    const small = new ConversationLoader(
      async (ref, offset, limit) => (w.calls.push([offset, limit]), w.messages.slice(offset, offset + limit)),
      100,
      2500,
    );
    small.add({ workflowId: 'a', runId: 'r' }, 0, [msg(0, 1000)]);
    small.add({ workflowId: 'b', runId: 'r' }, 0, [msg(0, 1000)]);
    small.add({ workflowId: 'c', runId: 'r' }, 0, [msg(0, 1000)]);
    await small.load({ workflowId: 'c', runId: 'r', messageCount: 1 });
    await small.load({ workflowId: 'b', runId: 'r', messageCount: 1 });
    expect(w.calls).toEqual([]);
    await small.load({ workflowId: 'a', runId: 'r', messageCount: 1 });
    expect(w.calls).toEqual([[0, 1]]);
  });

  it('fails clearly when the workflow has fewer messages than the reference says', async () => {
    const w = fakeWorkflow([msg(0)]);
    await expect(w.loader.load(ref(3))).rejects.toThrow('workflow w has 1 messages, expected 3');
  });
});
