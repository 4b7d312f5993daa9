import type { AgentEvent, AgentEventBody } from '../../src/core/events/agent-events';
import { AgUiEncoder } from '../../src/http/ag-ui/ag-ui-events';

const events = (bodies: AgentEventBody[]): AgentEvent[] =>
  bodies.map((b, i) => ({ ...b, offset: i, turn: 3 }) as AgentEvent);

describe('AgUiEncoder', () => {
  it('opens the run, writes a step per model call, a text message per call, and tool calls with their results', () => {
    const encoder = new AgUiEncoder('thread-1', 'run-1');
    const out = [
      ...encoder.begin(),
      ...events([
        { type: 'model_call_started', call: 4, iteration: 1 },
        { type: 'text_delta', call: 4, delta: 'Looking.' },
        { type: 'tool_call_started', id: 'c1', name: 'lookup', arguments: { q: 'x' } },
        { type: 'tool_call_finished', id: 'c1', name: 'lookup', result: 'Error: down', error: true },
      ]).flatMap((e) => encoder.encode(e)),
    ];
    expect(out).toEqual([
      { type: 'RUN_STARTED', threadId: 'thread-1', runId: 'run-1' },
      { type: 'STEP_STARTED', stepName: 'model call 4' },
      { type: 'TEXT_MESSAGE_START', messageId: 'thread-1-turn-3-text-1', role: 'assistant' },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'thread-1-turn-3-text-1', delta: 'Looking.' },
      { type: 'TEXT_MESSAGE_END', messageId: 'thread-1-turn-3-text-1' },
      { type: 'TOOL_CALL_START', toolCallId: 'c1', toolCallName: 'lookup' },
      { type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: '{"q":"x"}' },
      { type: 'TOOL_CALL_END', toolCallId: 'c1' },
      {
        type: 'TOOL_CALL_RESULT',
        messageId: 'c1-result',
        toolCallId: 'c1',
        content: 'Error: down',
        role: 'tool',
        metadata: { error: true },
      },
    ]);
  });

  it('finishes a run that waits for approval with interrupts, and a finished turn with its result and usage per model', () => {
    const encoder = new AgUiEncoder('thread-1', 'run-2');
    for (const e of events([
      { type: 'model_call_started', call: 1, iteration: 1 },
      {
        type: 'approval_requested',
        callId: 'c2',
        tool: 'transfer',
        arguments: { to: 'bob' },
        summary: 'transfer(to="bob")',
        deadline: '2026-12-01T00:00:00Z',
      },
    ]))
      encoder.encode(e);
    expect(encoder.pause()).toEqual([
      { type: 'STEP_FINISHED', stepName: 'model call 1' },
      {
        type: 'STATE_SNAPSHOT',
        snapshot: { workflowId: 'thread-1', turn: 3, status: 'awaiting_approval', pendingApprovals: ['c2'] },
      },
      {
        type: 'RUN_FINISHED',
        threadId: 'thread-1',
        runId: 'run-2',
        outcome: {
          type: 'interrupt',
          interrupts: [
            expect.objectContaining({
              id: 'c2',
              reason: 'tool_approval',
              toolCallId: 'c2',
              message: 'Approve transfer(to="bob")?',
              expiresAt: '2026-12-01T00:00:00Z',
            }),
          ],
        },
      },
    ]);
    const usage = {
      promptTokens: 10,
      completionTokens: 4,
      totalTokens: 14,
      byModel: { 'gpt-x': { promptTokens: 10, completionTokens: 4, totalTokens: 14, cachedPromptTokens: 2 } },
    };
    const done = encoder.encode({
      type: 'turn_completed',
      result: {
        workflowId: 'thread-1',
        status: 'completed',
        content: 'ok',
        toolExecutions: [],
        iterations: 1,
        usage,
        turn: 3,
      },
      offset: 9,
      turn: 3,
    });
    expect(done.at(-1)).toEqual({
      type: 'RUN_FINISHED',
      threadId: 'thread-1',
      runId: 'run-2',
      result: { status: 'completed', content: 'ok' },
      usage: [{ model: 'gpt-x', inputTokens: 10, outputTokens: 4, totalTokens: 14, cachedInputTokens: 2 }],
    });
  });

  it('says a retry voids the text shown (AG-UI cannot take text back), and a failed turn is RUN_ERROR', () => {
    const encoder = new AgUiEncoder('t', 'r');
    const [first] = events([{ type: 'text_delta', call: 1, delta: 'Half' }]);
    encoder.encode(first);
    expect(encoder.encode({ type: 'model_retry', call: 1, attempt: 2, error: 'lost', offset: 1, turn: 3 })).toEqual([
      { type: 'TEXT_MESSAGE_END', messageId: 't-turn-3-text-1' },
      { type: 'CUSTOM', name: 'model_retry', value: { call: 1, attempt: 2, error: 'lost', voidsText: true } },
    ]);
    expect(
      encoder.encode({ type: 'turn_failed', error: 'no model', errorType: 'ModelCall.Auth', offset: 2, turn: 3 }),
    ).toEqual([{ type: 'RUN_ERROR', message: 'no model', code: 'ModelCall.Auth' }]);
  });
});
