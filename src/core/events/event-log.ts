import { answersMessage } from '../messages/message-ids';
import type { NextStep } from '../state/run-state';
import {
  MAX_EVENTS_PER_PAGE,
  MAX_EVENT_PAGE_CHARS,
  type AgentEvent,
  type AgentEventBody,
  type EventPage,
  type EventsRequest,
  type TextBatch,
} from './agent-events';

/** What continue-as-new carries of the log: the offset counter and the kept events. Plain JSON. */
export interface EventLogSnapshot {
  next: number;
  calls: number;
  events: AgentEvent[];
}

/** Events kept in memory at most (older ones go at a turn's start; the previous turn always stays). */
export const MAX_KEPT_EVENTS = 5000;
/** Characters of events kept in memory at most (same rule). */
export const MAX_KEPT_CHARS = 2_000_000;
/** Characters of events continue-as-new carries at most (its input must stay well under Temporal's 2 MB payload limit). */
export const MAX_CARRIED_CHARS = 256_000;

/**
 * What the log tells the workflow's own observers (see {@link EventLog.observe}), beside what
 * subscribers read: each event as it is appended, each step of a run as it begins, and a
 * conversation between turns or ended. Observers see these in order, synchronously; the run's
 * search attributes follow from them.
 */
export type LogNote =
  | { kind: 'event'; turn: number; event: AgentEventBody; offset: number }
  | { kind: 'step'; turn: number; step: NextStep }
  | { kind: 'conversation'; state: 'idle' | 'closed' | 'cancelled' | 'failed' };

/** The model call whose text is arriving. */
interface OpenCall {
  call: number;
  turn: number;
  attempt: number;
  /** Text of this attempt so far. */
  text: string;
  /** Last batch applied, of this attempt. */
  seq: number;
  /** Why the previous attempt failed, when it could say. */
  lastError?: string;
}

/**
 * The ordered event stream of a run or conversation, kept in workflow state. The workflow
 * appends what it does (turns, model calls, tool calls, approvals); the model-call activity's
 * text arrives in batches ({@link TextBatch}) and is checked here: stale attempts and duplicate
 * batches are dropped, a new attempt is announced with `model_retry`, and when the call returns
 * whatever the batches did not carry is appended, so the deltas of a call always add up to its
 * final text.
 *
 * Memory is bounded: starting a turn drops the oldest events beyond {@link MAX_KEPT_EVENTS} or
 * {@link MAX_KEPT_CHARS}, never the previous turn's.
 * Deterministic and free of IO; the workflow replays it like everything else in the core.
 */
export class EventLog {
  private next: number;
  private calls: number;
  private events: AgentEvent[];
  /** JSON length of each kept event, same order. */
  private sizes: number[];
  private open?: OpenCall;
  private observers: Array<(note: LogNote) => void> = [];

  constructor(snapshot?: EventLogSnapshot) {
    this.next = snapshot?.next ?? 0;
    this.calls = snapshot?.calls ?? 0;
    this.events = snapshot ? [...snapshot.events] : [];
    this.sizes = this.events.map((e) => JSON.stringify(e).length);
  }

  /**
   * What continue-as-new passes on: the offsets and the newest events, at most
   * {@link MAX_CARRIED_CHARS} of them (whole events).
   */
  snapshot(): EventLogSnapshot {
    let chars = 0;
    let from = this.events.length;
    while (from > 0 && chars + this.sizes[from - 1] <= MAX_CARRIED_CHARS) chars += this.sizes[--from];
    return { next: this.next, calls: this.calls, events: this.events.slice(from) };
  }

  /**
   * Rewrites the kept events (a deletion of memory taking facts out of them: see
   * `forgetInValue`); offsets stay. Events already delivered to subscribers are theirs.
   * Answers how many changed.
   */
  rewrite(change: (event: AgentEvent) => AgentEvent): number {
    let changed = 0;
    this.events = this.events.map((event, i) => {
      const next = change(event);
      if (next === event) return event;
      changed++;
      this.sizes[i] = JSON.stringify(next).length;
      return next;
    });
    return changed;
  }

  /** The offset the next event gets. */
  get nextOffset(): number {
    return this.next;
  }

  /** The oldest offset still kept (the next one when none is). */
  get firstKept(): number {
    return this.events[0]?.offset ?? this.next;
  }

  /** Appends one event. */
  emit(turn: number, body: AgentEventBody): AgentEvent {
    const event = { ...body, offset: this.next++, turn } as AgentEvent;
    this.events.push(event);
    this.sizes.push(JSON.stringify(event).length);
    this.tell({ kind: 'event', turn, event: body, offset: event.offset });
    return event;
  }

  /** A step of the run is about to be taken (not an event subscribers read: the events of the step follow). */
  stepStarted(turn: number, step: NextStep): void {
    this.tell({ kind: 'step', turn, step });
  }

  /** A conversation is between turns, or has ended (not an event subscribers read). */
  conversationState(state: Extract<LogNote, { kind: 'conversation' }>['state']): void {
    this.tell({ kind: 'conversation', state });
  }

  /**
   * Calls `observer` with every note from now on, in order, before the call that made it returns
   * (the workflow's own bookkeeping: search attributes). Observers are not carried across
   * continue-as-new; the new run observes anew.
   */
  observe(observer: (note: LogNote) => void): void {
    this.observers.push(observer);
  }

  private tell(note: LogNote): void {
    for (const observer of this.observers) observer(note);
  }

  /**
   * A new turn. Memory stays bounded: beyond {@link MAX_KEPT_EVENTS} events or
   * {@link MAX_KEPT_CHARS} characters, the oldest go, but never the previous turn's, so a
   * subscriber a few turns behind (messages queued back to back) still catches up.
   */
  startTurn(turn: number, message: string, messageId?: string, branch?: { branch: string; forkedAt?: number }): void {
    const previous = this.events.findIndex((e) => e.turn >= turn - 1);
    const protectedFrom = previous < 0 ? this.events.length : previous;
    let chars = this.sizes.reduce((a, b) => a + b, 0);
    let drop = 0;
    while (drop < protectedFrom && (this.events.length - drop > MAX_KEPT_EVENTS || chars > MAX_KEPT_CHARS))
      chars -= this.sizes[drop++];
    if (drop > 0) {
      this.events = this.events.slice(drop);
      this.sizes = this.sizes.slice(drop);
    }
    this.emit(turn, { type: 'turn_started', message, ...(messageId !== undefined ? { messageId } : {}), ...branch });
  }

  /** A model call is being scheduled; returns its call number, which its text batches name. */
  startModelCall(turn: number, iteration: number): number {
    const call = ++this.calls;
    this.open = { call, turn, attempt: 1, text: '', seq: 0 };
    this.emit(turn, { type: 'model_call_started', call, iteration });
    return call;
  }

  /** Text the model-call activity signalled. Returns whether anything was appended. */
  applyTextBatch(batch: TextBatch): boolean {
    const open = this.open;
    if (!open || batch.call !== open.call || batch.attempt < open.attempt) return false; // a stale attempt or call
    let appended = false;
    if (batch.attempt > open.attempt) {
      this.retry(open, batch.attempt);
      appended = true;
    } else if (batch.seq <= open.seq) return false; // delivered before
    open.seq = batch.seq;
    if (batch.failed !== undefined) open.lastError = batch.failed;
    if (batch.text) {
      open.text += batch.text;
      this.emit(open.turn, { type: 'text_delta', call: open.call, delta: batch.text });
      appended = true;
    }
    return appended;
  }

  /**
   * The call returned: `shown` is the text its answer shows (the content, or nothing for a ReAct
   * step that calls a tool), from attempt `attempt`. Appends what the batches did not carry; if
   * the streamed text is not a beginning of it, a `model_retry` voids the streamed text first.
   */
  finishModelCall(call: number, shown: string, attempt = 1): void {
    const open = this.open;
    if (!open || open.call !== call) return;
    this.open = undefined;
    if (attempt > open.attempt) this.retry(open, attempt);
    else if (!shown.startsWith(open.text)) {
      this.emit(open.turn, {
        type: 'model_retry',
        call,
        attempt,
        error: 'the streamed text differs from the final answer; the final answer follows',
      });
      open.text = '';
    }
    const rest = shown.slice(open.text.length);
    if (rest) this.emit(open.turn, { type: 'text_delta', call, delta: rest });
  }

  /** The call failed for good or was cancelled: late batches are dropped. Returns the text it had shown. */
  abandonModelCall(call: number): string {
    if (this.open?.call !== call) return '';
    const { text } = this.open;
    this.open = undefined;
    return text;
  }

  /**
   * Events after `after` (exclusive), in order, at most `limit` and about {@link MAX_EVENT_PAGE_CHARS}
   * of JSON (always at least one). Without `after`: from the start of the latest turn.
   */
  read(request: EventsRequest = {}): EventPage {
    const firstKept = this.firstKept;
    let from: number;
    if (request.messageId !== undefined) {
      from = findLastIndex(
        this.events,
        (e) =>
          (e.type === 'turn_started' || e.type === 'message_steered') &&
          answersMessage(e.messageId, request.messageId!),
      );
      if (from < 0) return { events: [], next: this.next, firstKept, more: false };
    } else if (request.after === undefined) {
      const turnStart = findLastIndex(this.events, (e) => e.type === 'turn_started');
      from = turnStart < 0 ? 0 : turnStart;
    } else from = Math.max(0, request.after + 1 - firstKept);
    const limit = Math.min(Math.max(1, request.limit ?? MAX_EVENTS_PER_PAGE), MAX_EVENTS_PER_PAGE);
    const events: AgentEvent[] = [];
    let chars = 0;
    for (let i = from; i < this.events.length && events.length < limit; i++) {
      const size = JSON.stringify(this.events[i]).length;
      if (events.length > 0 && chars + size > MAX_EVENT_PAGE_CHARS) break;
      events.push(this.events[i]);
      chars += size;
    }
    return { events, next: this.next, firstKept, more: from + events.length < this.events.length };
  }

  private retry(open: OpenCall, attempt: number): void {
    const error = open.lastError ?? 'the previous attempt did not finish (its worker stopped, or it timed out)';
    this.emit(open.turn, { type: 'model_retry', call: open.call, attempt, error });
    open.attempt = attempt;
    open.text = '';
    open.seq = 0;
    open.lastError = undefined;
  }
}

function findLastIndex<T>(items: readonly T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i])) return i;
  return -1;
}
