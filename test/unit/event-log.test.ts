import { EventLog, MAX_KEPT_CHARS } from '../../src/core/events/event-log';
import type { AgentEvent } from '../../src/core/events/agent-events';

const texts = (events: AgentEvent[], call: number) =>
  events.filter((e) => e.type === 'text_delta' && e.call === call).map((e) => (e as { delta: string }).delta);
const types = (events: AgentEvent[]) => events.map((e) => e.type);

describe('EventLog', () => {
  it('numbers events from 0 and reads after an offset', () => {
    const log = new EventLog();
    log.startTurn(1, 'hi');
    const call = log.startModelCall(1, 1);
    log.applyTextBatch({ call, attempt: 1, seq: 1, text: 'Hel' });
    log.applyTextBatch({ call, attempt: 1, seq: 2, text: 'lo' });
    log.finishModelCall(call, 'Hello world');
    const all = log.read({ after: -1 }).events;
    expect(all.map((e) => e.offset)).toEqual([0, 1, 2, 3, 4]);
    expect(texts(all, call).join('')).toBe('Hello world');
    expect(log.read({ after: 2 }).events.map((e) => e.offset)).toEqual([3, 4]);
    expect(log.read({ after: 4 })).toEqual({ events: [], next: 5, firstKept: 0, more: false });
  });

  it('applies a batch delivered twice once, and drops stale calls and attempts', () => {
    const log = new EventLog();
    log.startTurn(1, 'hi');
    const first = log.startModelCall(1, 1);
    log.finishModelCall(first, '');
    const call = log.startModelCall(1, 2);
    expect(log.applyTextBatch({ call: first, attempt: 1, seq: 1, text: 'late' })).toBe(false);
    expect(log.applyTextBatch({ call, attempt: 2, seq: 1, text: 'A' })).toBe(true);
    expect(log.applyTextBatch({ call, attempt: 2, seq: 1, text: 'A' })).toBe(false);
    expect(log.applyTextBatch({ call, attempt: 1, seq: 5, text: 'old' })).toBe(false);
    log.finishModelCall(call, 'AB', 2);
    expect(texts(log.read({ after: -1 }).events, call)).toEqual(['A', 'B']);
  });

  it('announces a new attempt with model_retry and the reason the last one gave, then its text from the start', () => {
    const log = new EventLog();
    log.startTurn(1, 'hi');
    const call = log.startModelCall(1, 1);
    log.applyTextBatch({ call, attempt: 1, seq: 1, text: 'Hel' });
    log.applyTextBatch({ call, attempt: 1, seq: 2, failed: 'connection reset' });
    log.applyTextBatch({ call, attempt: 2, seq: 1, text: 'Hi' });
    log.finishModelCall(call, 'Hi there', 2);
    const events = log.read({ after: -1 }).events;
    expect(types(events)).toEqual([
      'turn_started',
      'model_call_started',
      'text_delta',
      'model_retry',
      'text_delta',
      'text_delta',
    ]);
    expect(events[3]).toMatchObject({ type: 'model_retry', call, attempt: 2, error: 'connection reset' });
    expect(texts(events.slice(4), call).join('')).toBe('Hi there');
  });

  it('announces a retry whose attempt streamed nothing when its reply arrives', () => {
    const log = new EventLog();
    log.startTurn(1, 'hi');
    const call = log.startModelCall(1, 1);
    log.applyTextBatch({ call, attempt: 1, seq: 1, text: 'Hel' });
    log.finishModelCall(call, 'Good day', 3);
    const events = log.read({ after: -1 }).events;
    expect(events.slice(3)).toMatchObject([
      { type: 'model_retry', attempt: 3, error: expect.stringContaining('did not finish') },
      { type: 'text_delta', delta: 'Good day' },
    ]);
  });

  it('voids streamed text that the final answer does not start with', () => {
    const log = new EventLog();
    log.startTurn(1, 'hi');
    const call = log.startModelCall(1, 1);
    log.applyTextBatch({ call, attempt: 1, seq: 1, text: 'Thought: ' });
    log.finishModelCall(call, '42');
    const events = log.read({ after: -1 }).events;
    expect(types(events).slice(2)).toEqual(['text_delta', 'model_retry', 'text_delta']);
    expect(texts(events.slice(3), call).join('')).toBe('42');
  });

  it('starts a new subscriber at the latest turn; drops old turns only beyond its bounds, never the previous turn', () => {
    const log = new EventLog();
    for (let turn = 1; turn <= 3; turn++) {
      log.startTurn(turn, `m${turn}`);
      log.finishModelCall(log.startModelCall(turn, 1), `a${turn}`);
    }
    const fresh = log.read();
    expect(fresh.events[0]).toMatchObject({ type: 'turn_started', turn: 3, message: 'm3' });
    expect(log.read({ after: -1 }).firstKept).toBe(0);
    // Past MAX_KEPT_CHARS: the oldest turns go, the previous one stays even though it is big.
    const big = 'x'.repeat(MAX_KEPT_CHARS);
    log.finishModelCall(log.startModelCall(3, 2), big);
    log.startTurn(4, 'm4');
    const kept = log.read({ after: -1, limit: 1 });
    expect(kept.events[0]).toMatchObject({ turn: 3, type: 'turn_started' });
    expect(kept.firstKept).toBe(kept.events[0].offset);
    // Continue-as-new carries only the newest events that fit.
    const carried = log.snapshot();
    expect(carried.events.map((e) => e.type)).toEqual(['turn_started']);
    expect(carried.next).toBe(log.nextOffset);
  });

  it("reads from the start of a message's turn by the message's id, or nothing yet (with where to wait from)", () => {
    const log = new EventLog();
    log.startTurn(1, 'first', 'm-1');
    log.emit(1, { type: 'model_call_started', call: 1, iteration: 1 });
    log.startTurn(2, 'second', 'm-2');
    log.emit(2, { type: 'model_call_started', call: 2, iteration: 1 });
    expect(log.read({ messageId: 'm-1' }).events.map((e) => [e.offset, e.type, e.turn])).toEqual([
      [0, 'turn_started', 1],
      [1, 'model_call_started', 1],
      [2, 'turn_started', 2],
      [3, 'model_call_started', 2],
    ]);
    expect(log.read({ messageId: 'm-2' }).events[0]).toMatchObject({
      type: 'turn_started',
      message: 'second',
      messageId: 'm-2',
    });
    expect(log.read({ messageId: 'm-3' })).toEqual({ events: [], next: 4, firstKept: 0, more: false });
    // A turn without a message id says none.
    log.startTurn(3, 'third');
    expect(log.read({ after: 3 }).events[0]).toEqual({ type: 'turn_started', message: 'third', offset: 4, turn: 3 });
  });

  it('pages by count and size, and carries offsets across a snapshot', () => {
    const log = new EventLog();
    log.startTurn(1, 'x');
    const call = log.startModelCall(1, 1);
    for (let i = 1; i <= 5; i++) log.applyTextBatch({ call, attempt: 1, seq: i, text: 'y'.repeat(400_000) });
    const page = log.read({ after: -1, limit: 3 });
    expect(page.events).toHaveLength(3);
    expect(page.more).toBe(true);
    const big = log.read({ after: 1 });
    expect(big.events.length).toBeLessThan(5);
    expect(big.more).toBe(true);
    const continued = new EventLog(JSON.parse(JSON.stringify(log.snapshot())));
    expect(continued.emit(2, { type: 'turn_started', message: 'z' }).offset).toBe(7);
    expect(continued.startModelCall(2, 1)).toBe(2);
  });
});
