import { carriedRunState, shouldContinueAsNew } from '../../src/core/run/run-carry';
import { runTranscriptPage } from '../../src/core/conversation/conversation-status';
import { startRun } from '../../src/core/run/agent-loop';
import { validateAgentInput } from '../../src/core/run/run-input';
import type { ChatMessage } from '../../src/core/messages/chat-message';
import type { RunState } from '../../src/core/state/run-state';

const page = (messages: ChatMessage[], range: { offset: number; limit?: number }) =>
  messages.slice(range.offset, range.limit === undefined ? undefined : range.offset + range.limit);

/** A run of `steps` tool steps (assistant call, tool output), with a summary at `summaryAt` if given. */
function longRun(steps: number, summaryAt?: number): RunState {
  const state = startRun({ message: 'Count.', system: 'Be exact.' }, []);
  const messages: ChatMessage[] = [...state.messages];
  const toolExecutions: RunState['toolExecutions'] = [];
  for (let n = 1; n <= steps; n++) {
    if (n === summaryAt) messages.push({ role: 'system', content: 'Counted so far.', summary: { from: 1, to: 2 * n } });
    const id = `c${n}`;
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: 'count', arguments: '{}' } }],
    });
    messages.push({ role: 'tool', tool_call_id: id, content: `counted ${n}` });
    toolExecutions.push({
      id,
      name: 'count',
      arguments: {},
      result: `counted ${n}`,
      error: false,
      immediate: false,
      resultInHistory: true,
    });
  }
  const summary = summaryAt === undefined ? undefined : messages.findIndex((m) => m.role === 'system' && m.summary);
  return {
    ...state,
    messages,
    toolExecutions,
    iterations: steps,
    ...(summary !== undefined ? { context: { from: summary + 1, summary } } : {}),
  };
}

it("continues as new when Temporal suggests it or past the run's own threshold, never as the run ends", () => {
  const run = longRun(3);
  expect(shouldContinueAsNew(run, { continueAsNewSuggested: true, historyLength: 10 })).toBe(true);
  expect(shouldContinueAsNew(run, { continueAsNewSuggested: false, historyLength: 4000 })).toBe(false);
  expect(shouldContinueAsNew(run, { continueAsNewSuggested: false, historyLength: 500 }, 500)).toBe(true);
  const done: RunState = { ...run, phase: { kind: 'done', status: 'completed', content: 'x' } as RunState['phase'] };
  expect(shouldContinueAsNew(done, { continueAsNewSuggested: true, historyLength: 10 })).toBe(false);
  expect(validateAgentInput({ message: 'x', continueAsNewAfter: 10 })).toEqual([
    '"continueAsNewAfter" must be a whole number >= 100 (history events), got 10',
  ]);
});

it('carries the system message and what the model sees after the summary; clients read the rest from earlier runs', () => {
  const run = longRun(10, 6);
  const carried = carriedRunState(run);
  // The system message, the summary, and the steps after it; 11 messages before it (user + 5 steps).
  expect(carried.messages[0]).toMatchObject({ role: 'system', content: 'Be exact.' });
  expect(carried.messages[1]).toMatchObject({ summary: { from: 1, to: 12 } });
  expect(carried.messagesBefore).toBe(11);
  expect(carried.messages).toHaveLength(1 + 1 + 2 * 5);
  expect(carried.context).toEqual({ from: 2, summary: 1 });
  // Outputs the history holds go; counters stay.
  expect(carried.toolExecutions.map((e) => e.result)).toEqual(Array(10).fill(''));
  expect(carried.iterations).toBe(10);

  const first = runTranscriptPage(carried, 'run-1', {}, page);
  expect(first).toMatchObject({ system: 'Be exact.', offset: 11, heldFrom: 11, total: 22, previousRunId: 'run-1' });
  expect(first.messages[0]).toMatchObject({ summary: { from: 1, to: 12 } });
  // Without a summary the model sees every message: all of them are carried.
  const unsummarised = carriedRunState(longRun(4));
  expect(unsummarised.messages).toHaveLength(1 + 1 + 8);
  expect(unsummarised.messagesBefore).toBeUndefined();
  expect(runTranscriptPage(unsummarised, undefined, { offset: 2, limit: 2 }, page)).toMatchObject({
    offset: 2,
    total: 9,
    heldFrom: 0,
    messages: [{ role: 'tool', content: 'counted 1' }, { role: 'assistant' }],
  });
});

it("moves the turn's recalled memory with the turn's message, and drops it when the message stays behind", () => {
  const run = longRun(10, 6);
  // The recall goes after the turn's message (index 1), which the carried run leaves to the older one.
  expect(carriedRunState({ ...run, recall: { text: 'Lives in Lyon', after: 1 } }).recall).toBeUndefined();
  // After a message the new run keeps (index 14, the 7th step's tool result): moved as it moves.
  const carried = carriedRunState({ ...run, recall: { text: 'Lives in Lyon', after: 14 } });
  expect(carried.recall).toEqual({ text: 'Lives in Lyon', after: 14 - 11 });
  expect(carried.messages[3]).toEqual(run.messages[14]);
  // Nothing dropped: nothing moves.
  expect(carriedRunState({ ...longRun(4), recall: { text: 'x', after: 1 } }).recall).toEqual({ text: 'x', after: 1 });
});
