import type { AgentEvent, AgentEventBody } from './agent-events';

/** A piece of a model call's text that came by the live path (see `contracts/live-text.ts`). */
export interface LivePiece {
  call: number;
  attempt: number;
  /** The piece's position in its attempt's text. */
  at: number;
  text: string;
}

/** What one call's text has shown so far. */
interface CallText {
  turn: number;
  /** The attempt whose text is shown. */
  attempt: number;
  /** Characters of that attempt's text shown. */
  shown: number;
  /** The attempt the durable deltas belong to, and how far they have reached in its text. */
  durableAttempt: number;
  durableAt: number;
  /** Attempts announced from the live path (their durable `model_retry` is not shown again). */
  liveRetries: Set<number>;
  /** Live text of the shown attempt that starts beyond what is shown, waiting for the durable text to reach it. */
  ahead?: { at: number; text: string };
  /** The durable log voided text of the same attempt: positions no longer line up, the live path is off for the call. */
  liveOff?: boolean;
}

/** The most live pieces kept for calls the durable log has not started yet, and live events kept ahead of the log. */
const MAX_EARLY_PIECES = 1000;
const MAX_AHEAD_EVENTS = 1000;

/**
 * Merges a workflow's durable events with what the live path brings (the events its workflow
 * hands over as it records them, and the pieces of its model calls' text), so that each event
 * and each character is shown once, in order, whichever path brings it first. Events are shown
 * in offset order: a live event waits for the ones before it. Pure: it decides, the
 * reader ({@link AgentEvent}s in, {@link AgentEvent}s out) carries it out.
 *
 * The durable log decides the order: a call's live text is shown only after the log's
 * `model_call_started` for it (everything the workflow recorded before the call comes first),
 * and live pieces that come before that wait ({@link LiveTextMerge.waiting} asks the reader to
 * read the log now). Both paths carry the same text of the same attempt, so positions say what
 * was shown: a durable delta shows only what lies beyond, a live piece only what it adds. A live
 * piece of a later attempt announces the retry (`model_retry`) itself; the log's own is then
 * not shown again. Text the live path shows carries the offset of the last durable event shown.
 */
export class LiveTextMerge {
  private readonly calls = new Map<number, CallText>();
  private readonly early = new Map<number, LivePiece[]>();
  private earlyCount = 0;
  private lastOffset = -1;
  /** The offset of the next event to show, once known. */
  private next?: number;
  /** Live events beyond the next to show, until the events before them come. */
  private readonly ahead = new Map<number, AgentEvent>();
  /** Calls up to this one that this reader has not seen start began before its first event. */
  private startedBefore = 0;
  /** The latest call started: the only one whose text can be shown ahead of the log. */
  private latestCall?: number;
  /** Where each event shown leaves the reader (see {@link LiveTextMerge.positionOf}). */
  private readonly positions = new WeakMap<AgentEvent, string>();

  /**
   * A merge that goes on from where a reader was left (a {@link LiveTextMerge.positionOf} it was
   * given, e.g. as a Server-Sent Event's id): its durable events are read after `after`, and the
   * text it had seen ahead of the log is not shown again. Undefined for a malformed position.
   */
  static resume(position: string): { merge: LiveTextMerge; after: number } | undefined {
    const m = /^(\d+)(?:\.(\d+)\.(\d+)\.(\d+)\.(\d+)\.(\d+)\.(\d+))?$/.exec(position);
    if (!m) return undefined;
    const [after, turn, call, attempt, durableAttempt, durableAt, shown] = m.slice(1).map(Number);
    if (!Number.isSafeInteger(after)) return undefined;
    const merge = new LiveTextMerge();
    merge.next = after + 1;
    merge.lastOffset = after;
    if (m[2] !== undefined) {
      merge.latestCall = call;
      merge.calls.set(call, {
        turn,
        attempt,
        shown,
        durableAttempt,
        durableAt,
        liveRetries: new Set(attempt > durableAttempt ? [attempt] : []),
      });
    }
    return { merge, after };
  }

  /**
   * Where a reader that was shown `event` (an event this merge returned) stands: its offset when
   * the text shown so far is all in the log, else also how far the live text went. Give it to
   * {@link LiveTextMerge.resume} to go on without showing anything twice.
   */
  positionOf(event: AgentEvent): string {
    return this.positions.get(event) ?? String(event.offset);
  }

  /** `event`, shown now: where it leaves the reader is kept. */
  private shown(event: AgentEvent): AgentEvent {
    const c = this.latestCall === undefined ? undefined : this.calls.get(this.latestCall);
    const even = !c || (c.shown === c.durableAt && c.attempt === c.durableAttempt);
    this.positions.set(
      event,
      even
        ? String(this.lastOffset)
        : [this.lastOffset, c.turn, this.latestCall, c.attempt, c.durableAttempt, c.durableAt, c.shown].join('.'),
    );
    return event;
  }

  /** Whether live items wait for the durable log (their call's start, or events before them): read it now. */
  get waiting(): boolean {
    return this.earlyCount > 0 || this.ahead.size > 0;
  }

  /** Where the reader's events start (the offset of the first it wants), when it knows before any event came. */
  startAt(offset: number): AgentEvent[] {
    if (this.next !== undefined) return [];
    this.next = offset;
    return this.drain();
  }

  /** An event from the durable log: what to show for it. The log may skip ahead (a reader starts at a turn). */
  durable(e: AgentEvent): AgentEvent[] {
    if (this.next !== undefined && e.offset < this.next) return [];
    this.next = e.offset;
    return [...this.show(e), ...this.drain()];
  }

  /** An event the workflow handed over as it recorded it (its sink): shown in offset order, once. */
  liveEvent(e: AgentEvent): AgentEvent[] {
    if (this.next === undefined || e.offset > this.next) {
      if (this.ahead.size < MAX_AHEAD_EVENTS) this.ahead.set(e.offset, e);
      return [];
    }
    if (e.offset < this.next) return [];
    return [...this.show(e), ...this.drain()];
  }

  /** Live events that follow on from what was shown. */
  private drain(): AgentEvent[] {
    const out: AgentEvent[] = [];
    for (const offset of [...this.ahead.keys()]) if (offset < this.next!) this.ahead.delete(offset);
    for (let e = this.ahead.get(this.next!); e; e = this.ahead.get(this.next!)) {
      this.ahead.delete(e.offset);
      out.push(...this.show(e));
    }
    return out;
  }

  /** The event at the next offset, shown: what to show for it, its text merged with the live text. */
  private show(e: AgentEvent): AgentEvent[] {
    this.next = e.offset + 1;
    this.lastOffset = e.offset;
    switch (e.type) {
      case 'model_call_started': {
        // Calls before it that this reader never saw start began before its first event.
        this.dropEarly(e.call - 1);
        this.calls.set(e.call, {
          turn: e.turn,
          attempt: 1,
          shown: 0,
          durableAttempt: 1,
          durableAt: 0,
          liveRetries: new Set(),
        });
        this.latestCall = e.call;
        const out: AgentEvent[] = [this.shown(e)];
        const early = this.early.get(e.call) ?? [];
        this.early.delete(e.call);
        this.earlyCount -= early.length;
        for (const piece of early) out.push(...this.live(piece));
        return out;
      }
      case 'model_retry': {
        const c = this.calls.get(e.call);
        if (!c) {
          this.dropEarly(e.call);
          return [this.shown(e)];
        }
        // The log's first retry of an attempt the live path announced is not shown again; a second
        // one of the same attempt voids its text (it was not a beginning of the answer), below.
        const announced = c.liveRetries.has(e.attempt) && c.durableAttempt < e.attempt;
        c.durableAttempt = e.attempt;
        c.durableAt = 0;
        if (announced) return [];
        // The same attempt's text voided (it was not a beginning of the reply): durable only from here.
        if (e.attempt <= c.attempt) c.liveOff = true;
        c.attempt = Math.max(c.attempt, e.attempt);
        c.shown = 0;
        c.ahead = undefined;
        return [this.shown(e)];
      }
      case 'text_delta': {
        const c = this.calls.get(e.call);
        if (!c) {
          this.dropEarly(e.call);
          return [this.shown(e)];
        }
        if (c.durableAttempt < c.attempt) return []; // the live path shows a later attempt already
        const from = c.durableAt;
        c.durableAt += e.delta.length;
        const out: AgentEvent[] = [];
        if (c.durableAt > c.shown) {
          const delta = e.delta.slice(Math.max(0, c.shown - from));
          c.shown = c.durableAt;
          out.push(this.shown({ ...e, delta }));
        }
        const ahead = this.catchUp(c, e.call);
        if (ahead) out.push(ahead);
        return out;
      }
      default:
        return [this.shown(e)];
    }
  }

  /**
   * Forgets the live pieces kept for calls up to `call` that never started in what this reader
   * read: they started before its first event (it joined mid-answer), so their text comes from
   * the log alone, and nothing waits for them (a reader that waits reads the log at every piece).
   */
  private dropEarly(call: number): void {
    this.startedBefore = Math.max(this.startedBefore, call);
    for (const [kept, pieces] of this.early)
      if (kept <= call) {
        this.early.delete(kept);
        this.earlyCount -= pieces.length;
      }
  }

  /** A live piece of text: what to show for it now (nothing while its call has not started in the log). */
  live(piece: LivePiece): AgentEvent[] {
    const c = this.calls.get(piece.call);
    if (!c) {
      // A call that began before this reader did: the log alone shows its text.
      if (piece.call <= this.startedBefore) return [];
      if (this.earlyCount >= MAX_EARLY_PIECES) return []; // the log will show it
      const list = this.early.get(piece.call) ?? [];
      list.push(piece);
      this.early.set(piece.call, list);
      this.earlyCount += 1;
      return [];
    }
    if (c.liveOff || piece.attempt < c.attempt || !piece.text) return [];
    const out: AgentEvent[] = [];
    if (piece.attempt > c.attempt) {
      c.attempt = piece.attempt;
      c.shown = 0;
      c.ahead = undefined;
      c.liveRetries.add(piece.attempt);
      out.push(
        this.event(c, {
          type: 'model_retry',
          call: piece.call,
          attempt: piece.attempt,
          error: 'a new attempt started',
        }),
      );
    }
    const end = piece.at + piece.text.length;
    if (piece.at > c.shown) {
      // A gap (this reader joined mid-answer): kept until the durable text reaches it.
      if (c.ahead && c.ahead.at + c.ahead.text.length === piece.at) c.ahead.text += piece.text;
      else c.ahead = { at: piece.at, text: piece.text };
      return out;
    }
    if (end > c.shown) {
      const delta = piece.text.slice(c.shown - piece.at);
      c.shown = end;
      out.push(this.event(c, { type: 'text_delta', call: piece.call, delta }));
    }
    return out;
  }

  /** Live text kept ahead of what was shown, once the durable text has reached its start. */
  private catchUp(c: CallText, call: number): AgentEvent | undefined {
    const ahead = c.ahead;
    if (!ahead || ahead.at > c.shown || c.durableAttempt !== c.attempt) return undefined;
    c.ahead = undefined;
    const end = ahead.at + ahead.text.length;
    if (end <= c.shown) return undefined;
    const delta = ahead.text.slice(c.shown - ahead.at);
    c.shown = end;
    return this.event(c, { type: 'text_delta', call, delta });
  }

  private event(c: CallText, body: Extract<AgentEventBody, { type: 'text_delta' | 'model_retry' }>): AgentEvent {
    return this.shown({ ...body, turn: c.turn, offset: this.lastOffset } as AgentEvent);
  }
}
