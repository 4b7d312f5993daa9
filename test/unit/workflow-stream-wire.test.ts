import { temporal } from '@temporalio/proto';
import { EventLog } from '../../src/core/events/event-log';
import {
  encodeBase64,
  jsonPayloadProto,
  streamPollProblem,
  streamPollReady,
  streamPollResult,
  truncatedPoll,
} from '../../src/core/events/workflow-stream-wire';

/** A wire item's data as Temporal's own protobuf decodes it. */
function decoded(data: string) {
  const payload = temporal.api.common.v1.Payload.decode(Buffer.from(data, 'base64'));
  return {
    encoding: Buffer.from(payload.metadata!.encoding).toString(),
    value: JSON.parse(Buffer.from(payload.data!).toString()),
  };
}

it('encodes an event as the default converter’s json/plain Payload, in protobuf and base64', () => {
  for (const value of [{ type: 'text_delta', delta: 'héllo ✓', offset: 7 }, { long: 'x'.repeat(70_000) }, 'a', null]) {
    const bytes = jsonPayloadProto(value);
    expect(encodeBase64(bytes)).toBe(Buffer.from(bytes).toString('base64'));
    expect(decoded(encodeBase64(bytes))).toEqual({ encoding: 'json/plain', value });
  }
  for (let n = 0; n < 5; n++) {
    const bytes = Uint8Array.from({ length: n }, (_, i) => 250 - i);
    expect(encodeBase64(bytes)).toBe(Buffer.from(bytes).toString('base64'));
  }
});

it('answers a poll with the events from its offset, topics as event types, offsets moving past skipped ones', () => {
  const log = new EventLog();
  log.startTurn(1, 'hi');
  const call = log.startModelCall(1, 1);
  log.applyTextBatch({ call, attempt: 1, seq: 1, text: 'Hel' });
  log.applyTextBatch({ call, attempt: 1, seq: 2, text: 'lo' });
  const all = streamPollResult(log.read({ after: -1 }), [], 0);
  expect(all).toMatchObject({ next_offset: 4, more_ready: false });
  expect(all.items.map((i) => [i.topic, i.offset])).toEqual([
    ['turn_started', 0],
    ['model_call_started', 1],
    ['text_delta', 2],
    ['text_delta', 3],
  ]);
  expect(decoded(all.items[3].data).value).toEqual({ type: 'text_delta', call, delta: 'lo', offset: 3, turn: 1 });
  const texts = streamPollResult(log.read({ after: 0 }), ['text_delta'], 1);
  expect(texts.items.map((i) => i.offset)).toEqual([2, 3]);
  expect(texts.next_offset).toBe(4);
  // Nothing of its topics yet: it still moves on, and a poll from beyond the end never goes back.
  expect(streamPollResult(log.read({ after: -1 }), ['turn_completed'], 0)).toEqual({
    items: [],
    next_offset: 4,
    more_ready: false,
  });
  expect(streamPollResult(log.read({ after: 8 }), [], 9).next_offset).toBe(9);
});

it('stops a long page short and says more is ready', () => {
  const log = new EventLog();
  log.startTurn(1, 'hi');
  const call = log.startModelCall(1, 1);
  for (let seq = 1; seq <= 1200; seq++) log.applyTextBatch({ call, attempt: 1, seq, text: 'w ' });
  const first = streamPollResult(log.read({ after: -1 }), [], 0);
  expect(first.more_ready).toBe(true);
  expect(first.items).toHaveLength(1000);
  expect(first.next_offset).toBe(1000);
  const rest = streamPollResult(log.read({ after: first.next_offset - 1 }), [], first.next_offset);
  expect(rest).toMatchObject({ more_ready: false, next_offset: 1202 });
  expect(rest.items[0].offset).toBe(1000);
});

it('waits until there is something past the offset; refuses offsets the log dropped, never 0', () => {
  expect(streamPollReady(0, 0, 0)).toBe(false);
  expect(streamPollReady(0, 0, 1)).toBe(true);
  expect(streamPollReady(5, 0, 5)).toBe(false);
  expect(streamPollReady(5, 0, 6)).toBe(true);
  expect(streamPollReady(9, 0, 5)).toBe(false);
  expect(streamPollReady(3, 10, 10)).toBe(true); // refused at once
  expect(streamPollReady(0, 10, 10)).toBe(false);
  expect(streamPollReady(0, 10, 11)).toBe(true);
  expect(truncatedPoll(3, 10)).toMatchObject({ type: 'TruncatedOffset' });
  expect(truncatedPoll(0, 10)).toBeUndefined();
  expect(truncatedPoll(10, 10)).toBeUndefined();
});

it('says what is wrong with a malformed poll', () => {
  expect(streamPollProblem({ topics: [], from_offset: 0 })).toBeUndefined();
  expect(streamPollProblem({ from_offset: 2 })).toBeUndefined();
  expect(streamPollProblem(null)).toMatch(/topics, from_offset/);
  expect(streamPollProblem({ topics: [], from_offset: -1 })).toMatch(/from_offset/);
  expect(streamPollProblem({ topics: [], from_offset: '1' })).toMatch(/from_offset/);
  expect(streamPollProblem({ topics: [1], from_offset: 0 })).toMatch(/topics/);
});
