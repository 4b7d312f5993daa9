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
 * Memory is bounded by turns: starting a turn drops the events of turns before the previous one.
 * Deterministic and free of IO; the workflow replays it like everything else in the core.
 */
export class EventLog {
  private next: number;
  private calls: number;
  private events: AgentEvent[];
  private open?: OpenCall;

  constructor(snapshot?: EventLogSnapshot) {
    this.next = snapshot?.next ?? 0;
    this.calls = snapshot?.calls ?? 0;
    this.events = snapshot ? [...snapshot.events] : [];
  }

  /** What continue-as-new passes on. */
  snapshot(): EventLogSnapshot {
    return { next: this.next, calls: this.calls, events: [...this.events] };
  }

  /** The offset the next event gets. */
  get nextOffset(): number {
    return this.next;
  }

  /** Appends one event. */
  emit(turn: number, body: AgentEventBody): AgentEvent {
    const event = { ...body, offset: this.next++, turn } as AgentEvent;
    this.events.push(event);
    return event;
  }

  /** A new turn: events of turns before the previous one are dropped. */
  startTurn(turn: number, message: string): void {
    const keepFrom = this.events.findIndex((e) => e.turn >= turn - 1);
    this.events = keepFrom < 0 ? [] : this.events.slice(keepFrom);
    this.emit(turn, { type: 'turn_started', message });
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
      this.emit(open.turn, { type: 'model_retry', call, attempt, error: 'the streamed text differs from the final answer; the final answer follows' });
      open.text = '';
    }
    const rest = shown.slice(open.text.length);
    if (rest) this.emit(open.turn, { type: 'text_delta', call, delta: rest });
  }

  /** The call failed for good or was cancelled: late batches are dropped. */
  abandonModelCall(call: number): void {
    if (this.open?.call === call) this.open = undefined;
  }

  /**
   * Events after `after` (exclusive), in order, at most `limit` and about {@link MAX_EVENT_PAGE_CHARS}
   * of JSON (always at least one). Without `after`: from the start of the latest turn.
   */
  read(request: EventsRequest = {}): EventPage {
    const firstKept = this.events[0]?.offset ?? this.next;
    let from: number;
    if (request.after === undefined) {
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
