import { applyModelReply, nextStep, startRun } from '../../src/core/run/agent-loop';
import { applyDroppedMessages, applySummary, contextRange, contextTokens } from '../../src/core/context/run-context';
import { calibration, compactionPlan, contextView, estimateTokens } from '../../src/core/context/compaction';
import {
  carryOver,
  finishTurn,
  startConversation,
  startTurn,
  validateConversationOptions,
} from '../../src/core/conversation/conversation';
import { conversationStatus } from '../../src/core/conversation/conversation-status';
import { runStatus } from '../../src/core/run/run-result';
import type { ChatMessage } from '../../src/core/messages/chat-message';
import type { ConversationState } from '../../src/core/conversation/conversation-state';
import type { ModelReply } from '../../src/core/messages/model-reply';
import type { RunState } from '../../src/core/state/run-state';

/** Compaction as pure decisions: when, what, and what the model sees afterwards. */

const words = (n: number) => 'word '.repeat(n).trim(); // about n * 1.25 tokens by the estimate
const usage = (promptTokens: number) => ({ promptTokens, completionTokens: 10, totalTokens: promptTokens + 10 });
const answer = (content: string, promptTokens = 100): ModelReply => ({
  content,
  toolCalls: [],
  finishReason: 'stop',
  usage: usage(promptTokens),
});

describe('estimates', () => {
  it('count characters over four, images and tool calls included, and calibrate by what the provider reported', () => {
    expect(estimateTokens([{ role: 'user', content: 'x'.repeat(400) }])).toBe(104);
    expect(estimateTokens([{ role: 'user', content: 'x', images: [{ url: 'https://a/b.png' }] }])).toBe(1505);
    expect(calibration(undefined)).toEqual({ scale: 1, offset: 0 });
    // The ratio scales messages up to 1.5; what the provider counted beyond that is added once.
    expect(calibration({ tokens: 1200, estimated: 1000 })).toEqual({ scale: 1.2, offset: 0 });
    expect(calibration({ tokens: 2000, estimated: 1000 })).toEqual({ scale: 1.5, offset: 500 });
    // A first request of 10 tokens with 500 tokens of tools: the next estimates are 495 more, not 4 times as large.
    expect(calibration({ tokens: 510, estimated: 10 })).toEqual({ scale: 1.5, offset: 495 });
    // A count under the estimate still scales (bounded): the rule of thumb over-counts everywhere alike.
    expect(calibration({ tokens: 800, estimated: 1000 })).toEqual({ scale: 0.8, offset: 0 });
    expect(calibration({ tokens: 1, estimated: 1000 })).toEqual({ scale: 0.25, offset: 0 });
  });
});

describe('planning a compaction', () => {
  const conversation = (turns: number): ChatMessage[] => {
    const messages: ChatMessage[] = [{ role: 'system', content: 'Be helpful.' }];
    for (let i = 0; i < turns; i++)
      messages.push(
        { role: 'user', content: `q${i} ${words(200)}` },
        { role: 'assistant', content: `a${i} ${words(200)}` },
      );
    return messages;
  };

  it('does nothing while the request fits', () => {
    expect(compactionPlan(conversation(2), { pinned: 1, from: 1 }, 4000)).toBeUndefined();
  });

  it('summarises the oldest messages down to about half the budget, never the system message', () => {
    const messages = [...conversation(10), { role: 'user' as const, content: 'and now?' }];
    const plan = compactionPlan(messages, { pinned: 1, from: 1 }, 4000)!;
    expect(plan.from).toBe(1);
    const kept = estimateTokens(messages.slice(plan.to));
    expect(kept).toBeLessThanOrEqual(2000);
    expect(kept).toBeGreaterThan(1000);
    expect(messages[plan.to].role).toBe('user'); // the kept part starts an exchange
  });

  it('never cuts between tool calls and their results, and always keeps the newest user message', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: words(3000) },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: words(100) },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: words(3000) },
    ];
    // The newest user message alone is over the budget: it stays, with everything after it.
    const plan = compactionPlan(messages, { pinned: 0, from: 0 }, 2000)!;
    expect(plan).toEqual({ from: 0, to: 4 });
    const withTools: ChatMessage[] = [...messages.slice(0, 4), { role: 'user', content: 'short' }];
    const cut = compactionPlan(withTools, { pinned: 0, from: 0 }, 2000)!;
    expect(withTools[cut.to].role).not.toBe('tool');
  });
});

describe('a run with maxPromptTokens', () => {
  function longRun(): RunState {
    let state = startRun({ message: words(1000), system: 'Be helpful.', maxPromptTokens: 2000 }, []);
    // A long tool-less exchange: the run's messages grow past the budget.
    for (let i = 0; i < 4; i++) {
      state = { ...state, phase: { kind: 'model' } };
      state = applyModelReply(
        state,
        { type: 'call_model', iteration: i + 1, toolNames: [], final: false },
        answer(words(400), 0),
      );
      state = {
        ...state,
        messages: [...state.messages, { role: 'user', content: words(300) }],
        phase: { kind: 'model' },
      };
    }
    return state;
  }

  it('drops the messages a summary could not be written for, keeping the previous summary and a note', () => {
    const state = longRun();
    const step = nextStep(state);
    if (step.type !== 'compact') throw new Error('no compaction');
    const dropped = applyDroppedMessages(state, step);
    expect(dropped.messages.at(-1)).toEqual({
      role: 'system',
      content: `Summary of the earlier conversation (messages 1-${step.to - 1}):\n(${step.to - 1} earlier messages were dropped here: no summary of them could be written.)`,
      summary: { from: 1, to: step.to },
    });
    expect(dropped.usage).toEqual(state.usage);
    expect(contextRange(dropped)).toMatchObject({ from: step.to, summary: dropped.messages.length - 1 });
    // A later failure keeps the earlier summary's text, under the new heading.
    const summarised = applySummary(state, step, { text: 'They talked at length.', usage: usage(10) });
    const later = { ...summarised, messages: [...summarised.messages, ...summarised.messages.slice(1, 9)] };
    const next = applyDroppedMessages(later, { ...step, from: step.to, to: step.to + 2 });
    expect(next.messages.at(-1)!.content).toBe(
      `Summary of the earlier conversation (messages ${step.to}-${step.to + 1}):\nThey talked at length.\n\n(2 earlier messages were dropped here: no summary of them could be written.)`,
    );
  });

  it('compacts before the model call that would pass the budget, then the model sees system, summary, recent', () => {
    const state = longRun();
    const step = nextStep(state);
    expect(step).toMatchObject({ type: 'compact', from: 1 });
    if (step.type !== 'compact') throw new Error('no compaction');
    const after = applySummary(state, step, { text: 'They talked at length.', usage: usage(2000) });
    expect(after.messages.length).toBe(state.messages.length + 1);
    expect(after.messages.at(-1)).toEqual({
      role: 'system',
      content: `Summary of the earlier conversation (messages 1-${step.to - 1}):\nThey talked at length.`,
      summary: { from: 1, to: step.to },
    });
    expect(after.usage.totalTokens).toBe(state.usage.totalTokens + 2010);
    const range = contextRange(after);
    expect(range).toEqual({
      messageCount: after.messages.length,
      pinned: 1,
      from: step.to,
      summary: after.messages.length - 1,
    });
    const view = contextView(after.messages, range);
    expect(view[0]).toEqual({ role: 'system', content: 'Be helpful.' });
    expect(view[1].content).toMatch(/^Summary of the earlier conversation/);
    expect(view.slice(2)).toEqual(state.messages.slice(step.to));
    // Fits now: the model is called.
    expect(nextStep(after)).toMatchObject({ type: 'call_model' });
    expect(runStatus(after).memory).toEqual({
      maxPromptTokens: 2000,
      promptTokens: contextTokens(after),
      compactions: 1,
    });
    expect(contextTokens(after)).toBeLessThan(2000);
  });

  it('counts the tools the provider saw once, not as a ratio: a large tool result after a small first request fits', () => {
    // A first request of ~10 estimated tokens that the provider counted at 1,010 (1,000 tokens of tool definitions).
    const state = startRun({ message: 'Read the log.', maxPromptTokens: 8000 }, []);
    const called = applyModelReply(
      state,
      { type: 'call_model', iteration: 1, toolNames: [], final: false },
      {
        content: null,
        toolCalls: [{ id: 'c1', type: 'function', function: { name: 'read_log', arguments: '{}' } }],
        finishReason: 'tool_calls',
        usage: usage(1010),
      },
    );
    // The log: about 4,000 tokens by the estimate.
    const after = {
      ...called,
      messages: [...called.messages, { role: 'tool' as const, tool_call_id: 'c1', content: 'x'.repeat(16_000) }],
      phase: { kind: 'model' as const },
    };
    expect(after.lastPrompt).toMatchObject({ tokens: 1010 });
    // About 4,000 (at most 1.5 times that) + the 1,000 of tools: under 8,000, so the model is called.
    // (A ratio, bounded at 4, would have made it 16,000 tokens and a compaction.)
    expect(contextTokens(after)).toBeGreaterThan(5000);
    expect(contextTokens(after)).toBeLessThan(7200);
    expect(nextStep(after)).toMatchObject({ type: 'call_model' });
  });

  it('carries the summary across conversation turns and continue-as-new', () => {
    let conv: ConversationState = { ...startConversation({ system: 'Be helpful.', maxPromptTokens: 2000 }), tools: [] };
    for (let i = 0; i < 6; i++) {
      let turn = startTurn(conv, { message: `q${i} ${words(300)}` });
      expect(turn.memoryWindow).toBeUndefined();
      let step = nextStep(turn);
      if (step.type === 'compact') {
        turn = applySummary(turn, step, { text: `summary ${i}`, usage: usage(100) });
        step = nextStep(turn);
      }
      if (step.type !== 'call_model') throw new Error(`unexpected ${step.type}`);
      turn = applyModelReply(turn, step, answer(`a${i} ${words(300)}`, 1000));
      conv = finishTurn(conv, turn);
    }
    expect(conv.context).toBeDefined();
    expect(conversationStatus('c', conv, undefined, 0, undefined).memory).toMatchObject({
      maxPromptTokens: 2000,
      compactions: conv.compactions,
    });
    expect(conv.compactions).toBeGreaterThanOrEqual(1);
    const summary = conv.messages[conv.context!.summary];
    expect(summary).toMatchObject({ role: 'system', summary: expect.any(Object) });
    const next = startTurn(conv, { message: 'again' });
    expect(contextView(next.messages, contextRange(next))[1]).toEqual(summary);
    const carried = startConversation({ system: 'Be helpful.', maxPromptTokens: 2000, carry: carryOver(conv, 'r1') });
    expect(carried.messages[carried.context!.summary]).toEqual(summary);
    expect(carried.messages.length).toBeLessThan(conv.messages.length);
    const resumed = startTurn(carried, { message: 'again' });
    expect(contextView(resumed.messages, contextRange(resumed)).slice(1)).toEqual(
      contextView(next.messages, contextRange(next)).slice(1),
    );
  });
});

describe('the summary on the wire', () => {
  it('follows the instructions in Anthropic’s system, both with cache breakpoints', async () => {
    const { toAnthropicPrompt } = await import('../../src/models/anthropic/messages-format');
    const prompt = toAnthropicPrompt(
      [
        { role: 'system', content: 'Be helpful.' },
        { role: 'system', content: 'Summary of the earlier conversation:\nthings', summary: { from: 1, to: 5 } },
        { role: 'user', content: 'and now?' },
      ],
      [],
    );
    expect(prompt.system).toEqual([
      { type: 'text', text: 'Be helpful.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'Summary of the earlier conversation:\nthings', cache_control: { type: 'ephemeral' } },
    ]);
  });
});

it('refuses a conversation with both a message window and a token budget', async () => {
  expect(validateConversationOptions({ memoryWindow: 10, maxPromptTokens: 4000 })).toEqual([
    expect.stringMatching(/"memoryWindow" and "maxPromptTokens" exclude each other/),
  ]);
  expect(validateConversationOptions({ maxPromptTokens: 500 })).toEqual([expect.stringMatching(/>= 1000/)]);
});

it('keeps the newest message even when it alone passes the budget, and never summarises it into nothing', () => {
  const big = 'x'.repeat(40_000); // about 10,000 tokens
  let state = startRun({ message: 'read', maxPromptTokens: 8000 }, []);
  state = applyModelReply(
    state,
    { type: 'call_model', iteration: 1, toolNames: [], final: false },
    {
      content: null,
      toolCalls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{}' } }],
      finishReason: 'tool_calls',
      usage: { promptTokens: 0, completionTokens: 1, totalTokens: 1 },
    },
  );
  state = {
    ...state,
    messages: [...state.messages, { role: 'tool', tool_call_id: 'c1', content: big }],
    phase: { kind: 'model' },
  };
  for (let i = 0; i < 3; i++) {
    const step = nextStep(state);
    if (step.type !== 'compact') break;
    state = applySummary(state, step, { text: 'read', usage: usage(1) });
  }
  const view = contextView(state.messages, contextRange(state));
  expect(view.some((m) => m.role === 'tool')).toBe(true);
  expect(nextStep(state)).toMatchObject({ type: 'call_model' });
});
