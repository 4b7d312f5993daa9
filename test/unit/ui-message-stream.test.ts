import type { UIMessageChunk, UIMessage } from 'ai';
import { expectTypeOf } from 'expect-type';
import type { AgentEvent, AgentEventBody } from '../../src/core/events/agent-events';
import type { ChatMessage } from '../../src/core/messages/chat-message';
import type { ConversationTurnResult } from '../../src/core/state/run-results';
import { UiMessageEncoder, type UiMessageChunk } from '../../src/http/use-chat/ui-message-chunks';
import { chatRequest, uiMessages, type UiMessage } from '../../src/http/use-chat/ui-messages';
import { HttpError } from '../../src/http/http-io';

const usage = { promptTokens: 10, completionTokens: 5, totalTokens: 15, costUsd: 0.01 };

function turn(bodies: AgentEventBody[], number = 2, first = 0): AgentEvent[] {
  return bodies.map((b, i) => ({ ...b, offset: first + i, turn: number }) as AgentEvent);
}

function result(content: string | null, extra: Partial<ConversationTurnResult> = {}): ConversationTurnResult {
  return {
    workflowId: 'chat-1',
    status: 'completed',
    content,
    toolExecutions: [],
    iterations: 2,
    usage,
    turn: 2,
    ...extra,
  };
}

function encodeAll(events: AgentEvent[], encoder = new UiMessageEncoder('chat-1', 2)): UiMessageChunk[] {
  return [...encoder.begin(), ...events.flatMap((e) => encoder.encode(e))];
}

it('writes only chunks the AI SDK defines, and reads back messages the AI SDK holds', () => {
  expectTypeOf<UiMessageChunk>().toMatchTypeOf<UIMessageChunk>();
  expectTypeOf<UiMessage>().toMatchTypeOf<UIMessage>();
});

describe('UiMessageEncoder', () => {
  it('writes a tool-calling turn as one message: a step per model call, static tool parts, the answer, finish metadata', () => {
    const chunks = encodeAll(
      turn([
        { type: 'turn_started', message: 'weather in Paris?' },
        { type: 'model_call_started', call: 1, iteration: 1 },
        { type: 'text_delta', call: 1, delta: 'Let me look.' },
        { type: 'tool_call_started', id: 'c1', name: 'get_weather', arguments: { city: 'Paris' } },
        { type: 'tool_call_finished', id: 'c1', name: 'get_weather', result: '18°C', error: false },
        { type: 'model_call_started', call: 2, iteration: 2 },
        { type: 'text_delta', call: 2, delta: 'It is ' },
        { type: 'text_delta', call: 2, delta: '18°C.' },
        { type: 'turn_completed', result: result('It is 18°C.') },
      ]),
    );
    expect(chunks).toEqual([
      { type: 'start', messageId: 'chat-1-turn-2' },
      { type: 'start-step' },
      { type: 'text-start', id: 'text-1' },
      { type: 'text-delta', id: 'text-1', delta: 'Let me look.' },
      { type: 'text-end', id: 'text-1' },
      { type: 'tool-input-available', toolCallId: 'c1', toolName: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool-output-available', toolCallId: 'c1', output: '18°C' },
      { type: 'finish-step' },
      { type: 'start-step' },
      { type: 'text-start', id: 'text-2' },
      { type: 'text-delta', id: 'text-2', delta: 'It is ' },
      { type: 'text-delta', id: 'text-2', delta: '18°C.' },
      { type: 'text-end', id: 'text-2' },
      { type: 'finish-step' },
      {
        type: 'finish',
        finishReason: 'stop',
        messageMetadata: { workflowId: 'chat-1', turn: 2, status: 'completed', usage, costUsd: 0.01 },
      },
    ]);
  });

  it('voids the text of a failed attempt with reset-step, and the new attempt writes a new text part', () => {
    const chunks = encodeAll(
      turn([
        { type: 'model_call_started', call: 1, iteration: 1 },
        { type: 'text_delta', call: 1, delta: 'Once upon' },
        { type: 'model_retry', call: 1, attempt: 2, error: 'worker lost' },
        { type: 'text_delta', call: 1, delta: 'Once upon a time.' },
      ]),
    );
    // The new attempt's part has an id of its own: a stream resumed from the durable log, which
    // may not hold the failed attempt's text, names it the same way.
    expect(chunks.slice(4)).toEqual([
      { type: 'text-end', id: 'text-1' },
      { type: 'reset-step' },
      { type: 'data-model-retry', data: { call: 1, attempt: 2, error: 'worker lost' }, transient: true },
      { type: 'text-start', id: 'text-1-2' },
      { type: 'text-delta', id: 'text-1-2', delta: 'Once upon a time.' },
    ]);
    const resumed = encodeAll(
      turn([
        { type: 'model_call_started', call: 1, iteration: 1 },
        { type: 'model_retry', call: 1, attempt: 2, error: 'worker lost' },
        { type: 'text_delta', call: 1, delta: 'Once upon a time.' },
      ]),
    );
    expect(resumed).toContainEqual({ type: 'text-start', id: 'text-1-2' });
  });

  it("resets the failed call's step when a fallback model answers, and shows reasoning in its step", () => {
    const chunks = encodeAll(
      turn([
        { type: 'model_call_started', call: 1, iteration: 1 },
        { type: 'text_delta', call: 1, delta: 'Half an ans' },
        { type: 'model_call_started', call: 2, iteration: 1 },
        { type: 'model_fallback', call: 2, from: 'a', to: 'b', error: 'overloaded' },
        { type: 'text_delta', call: 2, delta: 'Whole answer.' },
        { type: 'reasoning', call: 2, text: 'I thought.' },
      ]),
    );
    expect(chunks.slice(4)).toEqual([
      { type: 'text-end', id: 'text-1' },
      { type: 'reset-step' },
      { type: 'data-model-fallback', data: { call: 2, from: 'a', to: 'b', error: 'overloaded' } },
      { type: 'text-start', id: 'text-2' },
      { type: 'text-delta', id: 'text-2', delta: 'Whole answer.' },
      { type: 'text-end', id: 'text-2' },
      { type: 'reasoning-start', id: 'reasoning-2' },
      { type: 'reasoning-delta', id: 'reasoning-2', delta: 'I thought.' },
      { type: 'reasoning-end', id: 'reasoning-2' },
    ]);
  });

  it('asks for approval, pauses the message there, and a denial shows as output-denied without the error text', () => {
    const encoder = new UiMessageEncoder('chat-1', 2);
    const asked = encodeAll(
      turn([
        { type: 'model_call_started', call: 1, iteration: 1 },
        { type: 'approval_requested', callId: 'c9', tool: 'send_email', arguments: { to: 'bob' }, summary: 's' },
      ]),
      encoder,
    );
    expect(asked.slice(-2)).toEqual([
      { type: 'tool-input-available', toolCallId: 'c9', toolName: 'send_email', input: { to: 'bob' } },
      { type: 'tool-approval-request', approvalId: 'c9', toolCallId: 'c9' },
    ]);
    expect(encoder.pause()).toEqual([
      { type: 'finish-step' },
      {
        type: 'finish',
        finishReason: 'tool-calls',
        messageMetadata: { workflowId: 'chat-1', turn: 2, status: 'awaiting_approval' },
      },
    ]);
    const after = turn(
      [
        { type: 'approval_decided', callId: 'c9', approved: false, reason: 'not now' },
        { type: 'tool_call_finished', id: 'c9', name: 'send_email', result: 'Error: the user rejected', error: true },
        { type: 'model_call_started', call: 2, iteration: 2 },
      ],
      2,
      2,
    ).flatMap((e) => encoder.encode(e));
    expect(after).toEqual([
      { type: 'tool-approval-response', approvalId: 'c9', approved: false, reason: 'not now' },
      { type: 'tool-output-denied', toolCallId: 'c9' },
      { type: 'start-step' },
    ]);
  });

  it('writes an answer that was not streamed, maps limits to finish reasons, and a failed turn to an error', () => {
    const limited = encodeAll(
      turn([
        { type: 'model_call_started', call: 1, iteration: 1 },
        { type: 'turn_completed', result: result('partial', { status: 'max_iterations' }) },
      ]),
    );
    expect(limited.slice(2)).toEqual([
      { type: 'text-start', id: 'text-answer' },
      { type: 'text-delta', id: 'text-answer', delta: 'partial' },
      { type: 'text-end', id: 'text-answer' },
      { type: 'finish-step' },
      expect.objectContaining({ type: 'finish', finishReason: 'length' }),
    ]);
    const failed = new UiMessageEncoder('chat-1', 2);
    expect(
      failed.encode(turn([{ type: 'turn_failed', error: 'the model is unreachable', errorType: 'X' }])[0]),
    ).toEqual([{ type: 'error', errorText: 'the model is unreachable' }]);
    expect(failed.done).toBe(true);
  });

  it('ignores the events of other turns, and shows our own events as data parts (a wait as one part, updated)', () => {
    const encoder = new UiMessageEncoder('chat-1', 2);
    expect(encoder.encode({ type: 'text_delta', call: 1, delta: 'x', offset: 0, turn: 1 })).toEqual([]);
    const [started] = encoder.encode({
      type: 'wait_started',
      callId: 'w1',
      kind: 'event',
      name: 'payment',
      until: '2026-12-01T00:00:00Z',
      offset: 1,
      turn: 2,
    });
    const [ended] = encoder.encode({
      type: 'wait_ended',
      callId: 'w1',
      kind: 'event',
      outcome: 'event',
      offset: 2,
      turn: 2,
    });
    expect(started).toMatchObject({ type: 'data-wait', id: 'w1', data: { name: 'payment', state: 'waiting' } });
    expect(ended).toMatchObject({ type: 'data-wait', id: 'w1', data: { outcome: 'event', state: 'ended' } });
  });
});

describe('chatRequest', () => {
  const user = (parts: unknown[]) => ({ id: 'chat-1', messages: [{ id: 'm1', role: 'user', parts }] });

  it('names the text parts, which useChat sends, when a message is too long', () => {
    expect(() =>
      chatRequest(
        user([
          { type: 'text', text: 'x'.repeat(60_000) },
          { type: 'text', text: 'y'.repeat(60_000) },
        ]),
      ),
    ).toThrow("the newest user message's text parts hold 120001 characters, more than the 100000 a message may have");
  });

  it('refuses a message id it cannot take, rather than dropping it (a retried POST would be answered twice)', () => {
    const withId = (id: string, extra: Record<string, unknown> = {}) => ({
      id: 'chat-1',
      messages: [{ id, role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
      ...extra,
    });
    expect(() => chatRequest(withId('x'.repeat(201)))).toThrow(`the newest message's "id" must be a string of 1-200`);
    expect(() => chatRequest(withId('a\u0000b'))).toThrow(`the newest message's "id" must not contain control`);
    // A fork's message adds 9 characters to its id.
    expect(() => chatRequest(withId('x'.repeat(195), { trigger: 'regenerate-message' }))).toThrow(
      /to regenerate or edit, the message's "id" must be at most 191 characters/,
    );
    expect(chatRequest(withId('x'.repeat(191), { trigger: 'regenerate-message' })).action).toMatchObject({
      kind: 'message',
    });
  });

  it('takes the newest user message, its images, and the agent from the transport body', () => {
    expect(
      chatRequest({
        ...user([
          { type: 'text', text: 'what is in this picture?' },
          { type: 'file', mediaType: 'image/png', url: 'data:image/png;base64,AAAA', filename: 'a.png' },
        ]),
        trigger: 'submit-message',
        agent: 'support',
      }),
    ).toEqual({
      id: 'chat-1',
      agent: 'support',
      action: {
        kind: 'message',
        // The UI message's id is the message's: the same message sent again is answered once.
        message: {
          message: 'what is in this picture?',
          images: [{ url: 'data:image/png;base64,AAAA', name: 'a.png' }],
          messageId: 'm1',
        },
      },
      extras: {},
    });
  });

  it('takes approval answers from the assistant message the client sends back', () => {
    const body = {
      id: 'chat-1',
      messages: [
        {
          id: 'a',
          role: 'assistant',
          parts: [
            {
              type: 'tool-send_email',
              toolCallId: 'c1',
              state: 'approval-responded',
              approval: { id: 'c1', approved: true },
            },
            {
              type: 'tool-delete',
              toolCallId: 'c2',
              state: 'approval-responded',
              approval: { id: 'c2', approved: false, reason: 'no' },
            },
            { type: 'tool-x', toolCallId: 'c0', state: 'output-available', output: 1 },
          ],
        },
      ],
    };
    expect(chatRequest(body).action).toEqual({
      kind: 'approvals',
      decisions: [
        { callId: 'c1', approve: true },
        { callId: 'c2', approve: false, reason: 'no' },
      ],
    });
  });

  it('reads regenerate and an edited earlier message as a fork at that user message, sent under an id of its own', () => {
    for (const body of [
      { ...user([{ type: 'text', text: 'x' }]), trigger: 'regenerate-message', messageId: 'chat-1-turn-3' },
      { ...user([{ type: 'text', text: 'x' }]), trigger: 'submit-message', messageId: 'm1' },
    ]) {
      const { action } = chatRequest(body);
      expect(action).toEqual({
        kind: 'message',
        message: { message: 'x', fork: { atMessageId: 'm1' }, messageId: expect.stringMatching(/^m1~[0-9a-f]{8}$/) },
      });
    }
    // A plain message keeps its id: the same message sent again is answered once.
    expect(chatRequest(user([{ type: 'text', text: 'x' }])).action).toEqual({
      kind: 'message',
      message: { message: 'x', messageId: 'm1' },
    });
  });

  it.each([
    [{ messages: [] }, /"id" must be the chat's id/],
    [{ id: 'a\nb', messages: [] }, /chat id must not contain control/],
    [{ id: 'c', messages: [] }, /"messages" must be/],
    [
      { id: 'c', messages: [{ role: 'user', parts: [{ type: 'text', text: 'x' }] }], trigger: 'regenerate-message' },
      /to regenerate or edit, the newest message must be the user message to answer again, with its "id"/,
    ],
    [{ ...user([{ type: 'text', text: 'x' }]), trigger: 'resume-stream' }, /"trigger" must be "submit-message" or/],
    [user([{ type: 'file', mediaType: 'application/pdf', url: 'data:,x' }]), /application\/pdf are not supported/],
    [user([{ type: 'text', text: '  ' }]), /no text and no image/],
    [{ id: 'c', messages: [{ role: 'assistant', parts: [{ type: 'text', text: 'hi' }] }] }, /answers no approval/],
    [{ id: 'c', messages: [{ role: 'system', parts: [] }] }, /must be the user's/],
  ])('refuses %j with a clear 400', (body, message) => {
    let error: unknown;
    try {
      chatRequest(body as Record<string, unknown>);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(400);
    expect((error as HttpError).message).toMatch(message);
  });
});

describe('uiMessages', () => {
  const transcript: ChatMessage[] = [
    { role: 'user', content: 'weather?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'c2', type: 'function', function: { name: 'send_email', arguments: '{}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: '18°C' },
    { role: 'tool', tool_call_id: 'c2', content: 'Error: the user rejected this call to send_email. Reason: spam' },
    { role: 'assistant', content: 'It is 18°C.' },
    { role: 'user', content: 'thanks' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c3', type: 'function', function: { name: 'f', arguments: '{}' } }],
    },
  ];

  it('gives each turn one assistant message with the id its stream has, tool parts in their final state', () => {
    const messages = uiMessages('chat-1', transcript, false);
    expect(messages.map((m) => [m.id, m.role])).toEqual([
      ['chat-1-user-0', 'user'],
      ['chat-1-turn-1', 'assistant'],
      ['chat-1-user-5', 'user'],
      ['chat-1-turn-2', 'assistant'],
    ]);
    expect(messages[1].parts).toEqual([
      { type: 'step-start' },
      {
        type: 'tool-get_weather',
        toolCallId: 'c1',
        state: 'output-available',
        input: { city: 'Paris' },
        output: '18°C',
      },
      {
        type: 'tool-send_email',
        toolCallId: 'c2',
        state: 'output-denied',
        input: {},
        approval: { id: 'c2', approved: false, reason: 'spam' },
      },
      { type: 'step-start' },
      { type: 'text', text: 'It is 18°C.', state: 'done' },
    ]);
  });

  it("numbers the turns back from the conversation's count, so recent turns have their streams' ids", () => {
    expect(uiMessages('chat-1', transcript, false, 7).map((m) => m.id)).toEqual([
      'chat-1-user-0',
      'chat-1-turn-6',
      'chat-1-user-5',
      'chat-1-turn-7',
    ]);
    expect(uiMessages('chat-1', [...transcript, { role: 'user', content: 'more' }], true, 7)[3].id).toBe(
      'chat-1-turn-7',
    );
  });

  it('leaves out the replies of a turn still running (resume streams it whole)', () => {
    expect(uiMessages('chat-1', transcript, true).map((m) => m.id)).toEqual([
      'chat-1-user-0',
      'chat-1-turn-1',
      'chat-1-user-5',
    ]);
  });
});

describe('tool outputs', () => {
  it('give the value the tool returned: an object as an object, a string as a string, a cut preview as text', () => {
    const chunks = encodeAll(
      turn([
        { type: 'turn_started', message: 'weather?' },
        { type: 'model_call_started', call: 1, iteration: 1 },
        {
          type: 'tool_call_finished',
          id: 'a',
          name: 'w',
          result: '{"city":"Paris","celsius":18}',
          error: false,
          json: true,
        },
        { type: 'tool_call_finished', id: 'b', name: 'w', result: '{"looks":"like json"}', error: false },
        { type: 'tool_call_finished', id: 'c', name: 'w', result: '42', error: false, json: true },
        { type: 'tool_call_finished', id: 'd', name: 'w', result: '{"cut":', error: false, json: true },
      ]),
    );
    expect(
      chunks.filter((c) => c.type === 'tool-output-available').map((c) => (c as { output: unknown }).output),
    ).toEqual([{ city: 'Paris', celsius: 18 }, '{"looks":"like json"}', 42, '{"cut":']);
    const loaded = uiMessages(
      'chat-1',
      [
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'a', type: 'function', function: { name: 'w', arguments: '{}' } },
            { id: 'b', type: 'function', function: { name: 'w', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'a', content: '{"city":"Paris","celsius":18}', json: true },
        { role: 'tool', tool_call_id: 'b', content: '{"looks":"like json"}' },
      ],
      false,
    );
    expect(loaded[1].parts.filter((p) => 'output' in p).map((p) => (p as { output: unknown }).output)).toEqual([
      { city: 'Paris', celsius: 18 },
      '{"looks":"like json"}',
    ]);
  });
});
