import type { TextBatch } from '../../src/core/events/agent-events';
import { baseBatchInterval, batchInterval, TextPublisher } from '../../src/activities/text-publisher';

// Outside an activity: its logger is the only part of the activity's context the publisher uses.
jest.mock('@temporalio/activity', () => ({ log: { warn: jest.fn() } }));

beforeEach(() => jest.useFakeTimers({ now: 0 }));
afterEach(() => jest.useRealTimers());

/** A publisher whose batches are recorded with the fake clock's time. */
function publisher(interval: number | (() => number)) {
  const sent: Array<TextBatch & { sentAt: number }> = [];
  const p = new TextPublisher(async (batch) => void sent.push({ ...batch, sentAt: Date.now() }), 3, 2, interval);
  return { p, sent };
}

it('each batch says where its text starts in the attempt, so a reader of its Signal can place it', async () => {
  const { p, sent } = publisher(100);
  p.push('Hello');
  p.push(', ');
  await jest.advanceTimersByTimeAsync(100);
  p.push('world');
  await jest.advanceTimersByTimeAsync(100);
  p.push('!');
  await p.close();
  expect(sent.map(({ sentAt: _, ...b }) => b)).toEqual([
    { call: 3, attempt: 2, seq: 1, text: 'Hello, ', at: 0 },
    { call: 3, attempt: 2, seq: 2, text: 'world', at: 7 },
  ]);
});

it('asks for its interval before each batch: batches come sooner while no live path reaches the readers', async () => {
  let live = true;
  const { p, sent } = publisher(() => (live ? 100 : 50));
  p.push('a');
  await jest.advanceTimersByTimeAsync(100);
  expect(sent.map((b) => b.sentAt)).toEqual([100]);
  live = false;
  p.push('b');
  await jest.advanceTimersByTimeAsync(50);
  expect(sent.map((b) => b.sentAt)).toEqual([100, 150]);
  live = true;
  p.push('c');
  await jest.advanceTimersByTimeAsync(50);
  expect(sent).toHaveLength(2);
  await jest.advanceTimersByTimeAsync(50);
  expect(sent.map((b) => [b.text, b.at])).toEqual([
    ['a', 0],
    ['b', 1],
    ['c', 2],
  ]);
  await p.close();
});

it('a batch that failed to send goes again unchanged, its position included', async () => {
  let fail = true;
  const sent: TextBatch[] = [];
  const p = new TextPublisher(
    async (batch) => {
      if (fail) throw new Error('unreachable');
      sent.push(batch);
    },
    1,
    1,
    100,
  );
  p.push('one ');
  await jest.advanceTimersByTimeAsync(100);
  fail = false;
  p.push('two ');
  await jest.advanceTimersByTimeAsync(100);
  await jest.advanceTimersByTimeAsync(100);
  await p.close();
  expect(sent).toEqual([
    { call: 1, attempt: 1, seq: 1, text: 'one ', at: 0 },
    { call: 1, attempt: 1, seq: 2, text: 'two ', at: 4 },
  ]);
});

it('spaces the batches of a long answer further apart', () => {
  expect(batchInterval(0, 50)).toBe(50);
  expect(batchInterval(10_000, 50)).toBe(500);
});

it('batches come every 50 ms while no live path reaches the readers, 100 ms otherwise, each as the worker sets it', () => {
  expect(baseBatchInterval(undefined, true)).toBe(100);
  expect(baseBatchInterval(undefined, false)).toBe(50);
  // A worker that spaced its batches keeps that spacing on the durable path too.
  expect(baseBatchInterval({ batchIntervalMs: 250 }, false)).toBe(250);
  // Set to save Signals while Redis is away: taken as given, not capped at the live interval.
  expect(baseBatchInterval({ durableBatchIntervalMs: 500 }, false)).toBe(500);
  expect(baseBatchInterval({ durableBatchIntervalMs: 500 }, true)).toBe(100);
});
