import { Task } from '@a2a-js/sdk';
import { a2aTaskEnd } from '../../src/contracts/a2a-task-json';
import { messageExcerpt, turnOutcome } from '../../src/a2a/task-events';
import type { AgentEvent } from '../../src/core/events/agent-events';
import type { ConversationTurnResult } from '../../src/core/state/run-results';

/** How a turn ends an A2A task (the JSON the worker's task record and the A2A server share), and what a refused message keeps. */
const ids = { id: 't1', contextId: 'c1' };
const at = { messageId: 'm1', timestamp: '2026-11-27T10:00:00.000Z' };
const completed = (result: Partial<ConversationTurnResult>): AgentEvent =>
  ({
    type: 'turn_completed',
    offset: 7,
    turn: 2,
    result: { status: 'completed', turn: 2, ...result },
  }) as AgentEvent;

it('ends a task with the answer as its artifact, or with why it did not answer', () => {
  expect(a2aTaskEnd(ids, completed({ content: 'Paris' }), at)).toEqual({
    status: {
      state: 'TASK_STATE_COMPLETED',
      message: {
        messageId: 'm1',
        contextId: 'c1',
        taskId: 't1',
        role: 'ROLE_AGENT',
        parts: [{ text: 'Paris', mediaType: 'text/plain' }],
      },
      timestamp: at.timestamp,
    },
    artifacts: [
      {
        artifactId: 'answer',
        name: 'answer',
        description: "the agent's answer",
        parts: [{ text: 'Paris', mediaType: 'text/plain' }],
      },
    ],
  });
  expect(a2aTaskEnd(ids, completed({ output: { city: 'Paris' } }), at).artifacts[0].parts).toEqual([
    { data: { city: 'Paris' }, mediaType: 'application/json' },
  ]);
  const spent = a2aTaskEnd(ids, completed({ status: 'budget_exceeded', content: 'partial' }), at);
  expect(spent.status.state).toBe('TASK_STATE_FAILED');
  expect(spent.status.message?.parts).toEqual([
    { text: 'the agent spent its budget before answering', mediaType: 'text/plain' },
  ]);
  expect(spent.artifacts).toEqual([]);
  expect(a2aTaskEnd(ids, completed({ status: 'guardrail_tripped' }), at).status.state).toBe('TASK_STATE_REJECTED');
  const failed = { type: 'turn_failed', error: 'no model', errorType: 'X', offset: 3, turn: 1 } as AgentEvent;
  expect(a2aTaskEnd(ids, failed, at)).toMatchObject({ status: { state: 'TASK_STATE_FAILED' }, artifacts: [] });
  expect(() => a2aTaskEnd(ids, { type: 'turn_started', offset: 0, turn: 1 } as AgentEvent, at)).toThrow(/not the end/);
});

it('is the JSON of what the A2A server makes of the same end (the SDK reads it back unchanged)', () => {
  const end = completed({ content: 'Paris' });
  const typed = turnOutcome(ids, end);
  const json = Task.toJSON({ ...ids, history: [], metadata: undefined, ...typed }) as Record<string, unknown>;
  const expected = a2aTaskEnd(ids, end, {
    messageId: (json.status as { message: { messageId: string } }).message.messageId,
    timestamp: (json.status as { timestamp: string }).timestamp,
  });
  expect({ status: json.status, artifacts: json.artifacts }).toEqual(expected);
});

it('keeps an excerpt of a refused message: text cut to 2,000 characters, files by their size', () => {
  const message = Task.fromJSON({
    id: 't',
    contextId: 'c',
    history: [
      {
        messageId: 'm',
        role: 'ROLE_USER',
        parts: [
          { text: 'x'.repeat(5_000_000) },
          { raw: Buffer.alloc(3000).toString('base64'), mediaType: 'image/png' },
        ],
      },
    ],
  }).history[0];
  const excerpt = messageExcerpt(message);
  expect(excerpt.messageId).toBe('m');
  expect(excerpt.parts).toHaveLength(1);
  expect(excerpt.parts[0].content).toEqual({ $case: 'text', value: `${'x'.repeat(2000)}… (5000000 characters, cut)` });
  const small = messageExcerpt(
    Task.fromJSON({
      id: 't',
      contextId: 'c',
      history: [
        { messageId: 'n', role: 'ROLE_USER', parts: [{ text: 'hi' }, { raw: 'AAAA', mediaType: 'image/png' }] },
      ],
    }).history[0],
  );
  expect(small.parts.map((p) => p.content)).toEqual([
    { $case: 'text', value: 'hi' },
    { $case: 'text', value: '[image/png of 3 bytes, not kept]' },
  ]);
});
