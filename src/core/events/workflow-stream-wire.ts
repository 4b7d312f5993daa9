import type { AgentEvent, EventPage } from './agent-events';

/**
 * Temporal's Workflow Streams protocol, spoken over an agent's event log, so that a subscriber
 * from any Temporal SDK (`temporalio.contrib.workflow_streams` in Python, its TypeScript, Go and
 * Java counterparts) follows our runs and conversations as it follows any workflow stream.
 *
 * Why by hand: the TypeScript package `@temporalio/workflow-streams` pins every `@temporalio/*`
 * package of its own release exactly, and one workflow bundle cannot hold two SDKs; its protocol
 * (three fixed handler names and JSON envelopes, below) is small and the same in every SDK. Our
 * own readers keep the history long poll and the `events` query: a poll here is an Update, which
 * the workflow's history records with its result, so a subscriber copies what it reads into the
 * history (bench/README.md has the figures).
 *
 * Each event is one item: its topic is its `type` (`text_delta`, `tool_call_started`, …), its
 * offset its offset in the log (the same across continue-as-new), its data the event as JSON.
 */

/** The Update a subscriber polls with. */
export const STREAM_POLL_UPDATE = '__temporal_workflow_stream_poll';
/** The Query of the log's next offset. */
export const STREAM_OFFSET_QUERY = '__temporal_workflow_stream_offset';
/** The Signal publishers send batches with (agents' logs take none: see the workflow's handler). */
export const STREAM_PUBLISH_SIGNAL = '__temporal_workflow_stream_publish';

/** A poll's input (the protocol's field names). */
export interface StreamPollInput {
  topics: string[];
  from_offset: number;
}

/** One item of a poll's result: `data` is a base64 `temporal.api.common.v1.Payload` protobuf. */
export interface StreamWireItem {
  topic: string;
  data: string;
  offset: number;
}

/** A poll's result (the protocol's field names). */
export interface StreamPollResult {
  items: StreamWireItem[];
  next_offset: number;
  /** The result stopped short (its size): poll again at once. */
  more_ready: boolean;
}

/** Why a poll is refused, as the protocol's subscribers recognise it (an ApplicationFailure's type). */
export type StreamPollRefusal =
  { type: 'TruncatedOffset'; message: string } | { type: 'StreamDraining'; message: string };

/** A poll's input as a problem sentence, or undefined when it is well formed. */
export function streamPollProblem(input: unknown): string | undefined {
  const i = input as Partial<StreamPollInput> | undefined;
  if (!i || typeof i !== 'object') return 'a poll takes {topics, from_offset}';
  if (!Number.isSafeInteger(i.from_offset) || (i.from_offset as number) < 0)
    return 'from_offset must be a whole number, 0 or more';
  if (i.topics !== undefined && (!Array.isArray(i.topics) || i.topics.some((t) => typeof t !== 'string')))
    return 'topics must be a list of event types';
  return undefined;
}

/**
 * Whether a poll from `fromOffset` has something to answer now: events at or past it, or it asks
 * for what the log no longer keeps (refused at once). 0 means "from the oldest event kept".
 */
export function streamPollReady(fromOffset: number, firstKept: number, nextOffset: number): boolean {
  if (fromOffset !== 0 && fromOffset < firstKept) return true;
  return nextOffset > Math.max(fromOffset, firstKept);
}

/** A poll from an offset the log dropped (older turns go: see `EventLog`); 0 is never truncated. */
export function truncatedPoll(fromOffset: number, firstKept: number): StreamPollRefusal | undefined {
  if (fromOffset === 0 || fromOffset >= firstKept) return undefined;
  return {
    type: 'TruncatedOffset',
    message: `Requested offset ${fromOffset} has been truncated. Current base offset is ${firstKept}.`,
  };
}

/**
 * A page of the log (read after `fromOffset - 1`) as a poll's result. Events of other topics
 * are skipped but counted: `next_offset` always moves past what was read, and never back before
 * `fromOffset` (a poll from beyond the end, answered empty when the workflow detaches it).
 */
export function streamPollResult(page: EventPage, topics: readonly string[], fromOffset: number): StreamPollResult {
  const wanted = topics.length > 0 ? new Set(topics) : undefined;
  const items = page.events
    .filter((e) => !wanted || wanted.has(e.type))
    .map((e) => ({ topic: e.type, data: encodeBase64(jsonPayloadProto(e)), offset: e.offset }));
  const last = page.events.at(-1);
  return {
    items,
    next_offset: page.more && last ? last.offset + 1 : Math.max(page.next, fromOffset),
    more_ready: page.more,
  };
}

const utf8 = new TextEncoder();

/**
 * `temporal.api.common.v1.Payload { map<string, bytes> metadata = 1; bytes data = 2; }` of a
 * JSON value, as Temporal's default payload converter makes it (`encoding: json/plain`), in
 * protobuf's binary form. Hand-written: pulling protobufjs into the workflow sandbox for one
 * message of two fields is not worth it.
 */
export function jsonPayloadProto(value: AgentEvent | unknown): Uint8Array {
  const entry = [...field(1, utf8.encode('encoding')), ...field(2, utf8.encode('json/plain'))];
  return Uint8Array.from([...field(1, entry), ...field(2, utf8.encode(JSON.stringify(value)))]);
}

/** A length-delimited protobuf field (wire type 2). */
function field(number: number, bytes: ArrayLike<number>): number[] {
  const out = [(number << 3) | 2];
  let n = bytes.length;
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  for (let i = 0; i < bytes.length; i++) out.push(bytes[i]);
  return out;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Standard padded base64 (the workflow sandbox has no `Buffer`). */
export function encodeBase64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += ALPHABET[(n >> 18) & 63] + ALPHABET[(n >> 12) & 63];
    out += i + 1 < bytes.length ? ALPHABET[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.length ? ALPHABET[n & 63] : '=';
  }
  return out;
}
