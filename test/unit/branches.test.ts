import {
  carryOver,
  finishTurn,
  startConversation,
  startTurn,
  turnProblem,
} from '../../src/core/conversation/conversation';
import {
  forkAt,
  forkIndex,
  forkPointProblem,
  listBranches,
  switchBranch,
  switchProblem,
} from '../../src/core/conversation/branches';
import { forkedConversation } from '../../src/core/conversation/fork-conversation';
import { transcriptPage } from '../../src/core/conversation/conversation-status';
import type { ChatMessage } from '../../src/core/messages/chat-message';
import type { ConversationState } from '../../src/core/conversation/conversation-state';

const page = (messages: ChatMessage[], r: { offset: number; limit?: number }) =>
  messages.slice(r.offset, r.limit === undefined ? undefined : r.offset + r.limit);

/** A conversation after `turns` turns, each a question and its answer. */
function talked(turns: string[], from: ConversationState = startConversation({ system: 'be brief' })) {
  let conv = from;
  for (const [i, q] of turns.entries()) {
    const run = startTurn(conv, { message: q, messageId: `m${conv.turns + 1}` });
    run.messages.push({ role: 'assistant', content: `answer ${i}` });
    conv = finishTurn(conv, run);
  }
  return conv;
}

const texts = (messages: ChatMessage[]) => messages.map((m) => m.content);

describe('branches', () => {
  it('stamps each turn’s message with its turn and its sender’s id', () => {
    const conv = talked(['a', 'b']);
    expect(conv.messages[2]).toEqual({ role: 'user', content: 'b', turn: 2, messageId: 'm2' });
  });

  it('forks before a user message, keeping the branch it replaces whole', () => {
    const conv = talked(['a', 'b', 'c']);
    const found = forkIndex(conv, { atMessage: 2 }, 'c1');
    expect(found).toEqual({ index: 2 });
    const forked = forkAt(conv, 2);
    expect(texts(forked.messages)).toEqual(['a', 'answer 0']);
    expect(forked.branch).toEqual({ id: 'b1', parent: 'main', forkedAt: 2 });
    // The new turn sees the transcript before the fork, with its own message where the old one was.
    const next = talked(['B'], forked);
    expect(texts(next.messages)).toEqual(['a', 'answer 0', 'B', 'answer 0']);
    expect(next.messages[2]).toMatchObject({ turn: 4 });
    expect(listBranches(next)).toEqual([
      { id: 'b1', parent: 'main', forkedAt: 2, messageCount: 4, current: true, label: 'B' },
      { id: 'main', messageCount: 6, current: false },
    ]);
    const old = transcriptPage(next, undefined, { branch: 'main' }, page);
    expect(texts(old.messages)).toEqual(['a', 'answer 0', 'b', 'answer 1', 'c', 'answer 2']);
    expect(old).toMatchObject({ branch: 'main', system: 'be brief', total: 6 });
    expect(texts(transcriptPage(next, undefined, {}, page).messages)).toEqual(['a', 'answer 0', 'B', 'answer 0']);
    expect(() => transcriptPage(next, undefined, { branch: 'b7' }, page)).toThrow(
      'no branch "b7"; the conversation\'s branches: b1, main',
    );
  });

  it('finds the message by its sender’s id, a fork of it, or its place as a transcript read gives it', () => {
    const conv = talked(['a', 'b']);
    expect(forkIndex(conv, { atMessageId: 'm2' }, 'c1')).toEqual({ index: 2 });
    expect(forkIndex(conv, { atMessageId: 'c1-user-0' }, 'c1')).toEqual({ index: 0 });
    const again = talked(['b again'], forkAt(conv, 2));
    // A regenerated message is sent as `<id>~<suffix>`; the page still knows it by its first id.
    again.messages[2] = { ...again.messages[2], messageId: 'm2~x1' } as ChatMessage;
    expect(forkIndex(again, { atMessageId: 'm2' }, 'c1')).toEqual({ index: 2 });
    expect(forkIndex(conv, { atMessageId: 'nope' }, 'c1')).toMatchObject({
      problem: expect.stringContaining('no message "nope" on the current branch'),
    });
  });

  it('refuses fork points that are not a person’s message the run holds word for word', () => {
    const conv = talked(['a', 'b']);
    expect(forkIndex(conv, { atMessage: 1 }, 'c')).toEqual({
      problem:
        "message 1 is not a message a person sent (it is the assistant's): fork at a user message, which the new message replaces",
    });
    expect(forkIndex(conv, { atMessage: 9 }, 'c')).toEqual({
      problem: 'there is no message 9: the current branch has 4 messages',
    });
    const carried = startConversation({ carry: { ...carryOver(conv, 'run-1'), transcriptStart: 10 } });
    expect(forkIndex(carried, { atMessage: 3 }, 'c')).toMatchObject({
      problem: expect.stringContaining('older than what the conversation holds word for word (from message 10 on'),
    });
    const summarised = { ...conv, context: { from: 2, summary: 4 } };
    expect(forkIndex(summarised, { atMessage: 0 }, 'c')).toMatchObject({
      problem: expect.stringContaining('has been summarised'),
    });
  });

  it('moves a summary written after the fork point to the cut', () => {
    const conv = talked(['a', 'b', 'c']);
    const summary: ChatMessage = { role: 'system', content: 'earlier: a', summary: { from: 0, to: 2 } };
    const withSummary = { ...conv, messages: [...conv.messages, summary], context: { from: 2, summary: 6 } };
    const forked = forkAt(withSummary, 4);
    expect(texts(forked.messages)).toEqual(['a', 'answer 0', 'b', 'answer 1', 'earlier: a']);
    expect(forked.context).toEqual({ from: 2, summary: 4 });
  });

  it('makes a kept branch current again, keeping the one that was', () => {
    const main = talked(['a', 'b']);
    const b1 = talked(['B'], forkAt(main, 2));
    expect(switchProblem(b1, 'main')).toBeUndefined();
    const back = switchBranch(b1, 'main');
    expect(texts(back.messages)).toEqual(texts(main.messages));
    expect(back.branch).toEqual({ id: 'main' });
    expect(listBranches(back).map((b) => [b.id, b.current])).toEqual([
      ['main', true],
      ['b1', false],
    ]);
    // The next fork is a new branch, whatever was current.
    expect(forkAt(back, 0).branch).toEqual({ id: 'b2', parent: 'main', forkedAt: 0 });
    expect(switchProblem(back, 'x')).toBe('no branch "x"; the conversation\'s branches: main, b1');
  });

  it('carries where each branch is read over continue-as-new, not its messages', () => {
    const b1 = talked(['B'], forkAt(talked(['a', 'b']), 2));
    const next = startConversation({ carry: carryOver(b1, 'run-1') });
    expect(next.branches).toBeUndefined();
    expect(next.branch).toEqual({ id: 'b1', parent: 'main', forkedAt: 2 });
    expect(next.olderBranches).toEqual([{ id: 'main', messageCount: 4, current: false, heldBy: 'run-1' }]);
    expect(transcriptPage(next, undefined, { branch: 'main' }, page)).toMatchObject({ heldBy: 'run-1', total: 4 });
    expect(switchProblem(next, 'main')).toContain('kept by an earlier run');
    expect(forkAt(next, 0).branch?.id).toBe('b2');
  });

  it('forks a new conversation from any branch the run keeps', () => {
    const b1 = talked(['B'], forkAt(talked(['a', 'b']), 2));
    const forked = forkedConversation(b1, { atMessage: 2, branch: 'main' }, { workflowId: 'c1', runId: 'r1' });
    if ('problem' in forked) throw new Error(forked.problem);
    const conv = startConversation(forked.input);
    expect(texts(conv.messages)).toEqual(['a', 'answer 0']);
    expect(conv.branch).toBeUndefined();
    expect(conv).toMatchObject({ turns: 3, runs: 1, transcriptStart: 0 });
    expect(conv.previousWorkflowId).toBeUndefined();
    expect(forkedConversation(b1, { atMessage: 1 }, { workflowId: 'c1', runId: 'r1' })).toMatchObject({
      problem: expect.stringContaining('not a message a person sent'),
    });
  });

  it('checks a message’s fork', () => {
    expect(forkPointProblem({ atMessage: 2 }, undefined)).toBeUndefined();
    expect(forkPointProblem({ atMessageId: 'x' }, 'interrupt')).toBeUndefined();
    expect(forkPointProblem({ atMessage: -1 }, undefined)).toContain('"fork" must be');
    expect(forkPointProblem({ atMessage: 1 }, 'steer')).toContain('cannot steer');
    expect(turnProblem({ message: 'hi', fork: 3 }, undefined, false)).toContain('"fork" must be');
  });
});
