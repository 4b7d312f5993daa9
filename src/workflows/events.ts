import { setHandler } from '@temporalio/workflow';
import { eventIdProblem, eventProblem, receiveEvent, takeEvent, type DeliveredEvent } from '../core/time/durable-waits';
import type { EventLog } from '../core/events/event-log';
import {
  deliverEventSignal,
  eventsQuery,
  textBatchSignal,
  toolProgressSignal,
  toolRetriedSignal,
} from '../contracts/definitions';

/**
 * The events delivered to a run or conversation, kept until a `wait_for_event` call takes one of
 * their name: an event that arrives before anything waits is not lost. Conversations carry the
 * inbox across continue-as-new.
 */
export class EventInbox {
  private events: DeliveredEvent[];
  private seenIds: string[];

  constructor(initial: readonly DeliveredEvent[] = [], seenIds: readonly string[] = []) {
    this.events = [...initial];
    this.seenIds = [...seenIds];
  }

  /** Keeps an event (the signal's handler); false when its id was seen already (a repeated delivery, dropped). */
  deliver(event: DeliveredEvent): boolean {
    const received = receiveEvent(this.events, this.seenIds, event);
    this.events = received.inbox;
    this.seenIds = received.seenIds;
    return !received.duplicate;
  }

  /** Whether an event of that name is kept. */
  has(name: string): boolean {
    return this.events.some((e) => e.name === name);
  }

  /** Takes the first event of that name, if one is kept. */
  take(name: string): DeliveredEvent | undefined {
    const taken = takeEvent(this.events, name);
    if (!taken) return undefined;
    this.events = taken.rest;
    return taken.event;
  }

  /** The events kept, for continue-as-new. */
  snapshot(): DeliveredEvent[] {
    return [...this.events];
  }

  /** The ids remembered, for continue-as-new. */
  ids(): string[] {
    return [...this.seenIds];
  }
}

/**
 * Registers the `deliverEvent` signal: the event is kept in `inbox` and announced on the event
 * stream (`event_received`) of the current turn. A signal cannot be refused, so an invalid event
 * (clients validate first) is dropped with a warning in the worker's log.
 */
export function handleDeliveredEvents(inbox: EventInbox, events: EventLog, turn: () => number): void {
  setHandler(deliverEventSignal, (event) => {
    const problem =
      eventProblem(event?.name, event?.payload) ?? (event?.id === undefined ? undefined : eventIdProblem(event.id));
    if (problem) {
      console.warn(`event dropped: ${problem}`);
      return;
    }
    const { name, id } = event;
    const kept = inbox.deliver({
      name,
      payload: event.payload ?? null,
      at: new Date().toISOString(),
      ...(id !== undefined ? { id } : {}),
    });
    // A repeated delivery (the same id, e.g. a webhook's retry) is shown, and no wait takes it.
    events.emit(turn(), {
      type: 'event_received',
      name,
      ...(id !== undefined ? { id } : {}),
      ...(kept ? {} : { duplicate: true as const }),
    });
  });
}

/**
 * Registers the `events` query and the text-batch signal of a workflow's event stream. The signal
 * cannot be refused; the log itself drops batches of calls and attempts that are over.
 */
export function handleEvents(events: EventLog, turn: () => number = () => 1): void {
  setHandler(eventsQuery, (request) => events.read(request));
  setHandler(textBatchSignal, (batch) => void events.applyTextBatch(batch));
  // A tool call tried again: said on the stream as it starts (the result says how many attempts it took).
  setHandler(toolRetriedSignal, ({ callId, name, attempt, reason }) => {
    events.emit(turn(), { type: 'tool_retried', id: callId, name, attempt, reason });
  });
  // A running tool's progress: said on the stream (the activity sends at most one a second).
  setHandler(toolProgressSignal, ({ callId, name, progress, total, message }) => {
    events.emit(turn(), {
      type: 'tool_progress',
      id: callId,
      name,
      progress,
      ...(total !== undefined ? { total } : {}),
      ...(message ? { message: message.slice(0, 500) } : {}),
    });
  });
}
