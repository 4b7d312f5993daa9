import { setHandler } from '@temporalio/workflow';
import { eventProblem, takeEvent, withEvent, type DeliveredEvent, type EventLog } from '../core';
import { deliverEventSignal } from '../common/definitions';

/**
 * The events delivered to a run or conversation, kept until a `wait_for_event` call takes one of
 * their name: an event that arrives before anything waits is not lost. Conversations carry the
 * inbox across continue-as-new.
 */
export class EventInbox {
  private events: DeliveredEvent[];

  constructor(initial: readonly DeliveredEvent[] = []) {
    this.events = [...initial];
  }

  /** Keeps an event (the signal's handler). */
  deliver(event: DeliveredEvent): void {
    this.events = withEvent(this.events, event);
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
}

/**
 * Registers the `deliverEvent` signal: the event is kept in `inbox` and announced on the event
 * stream (`event_received`) of the current turn. A signal cannot be refused, so an invalid event
 * (clients validate first) is dropped with a warning in the worker's log.
 */
export function handleDeliveredEvents(inbox: EventInbox, events: EventLog, turn: () => number): void {
  setHandler(deliverEventSignal, (event) => {
    const problem = eventProblem(event?.name, event?.payload);
    if (problem) {
      console.warn(`event dropped: ${problem}`);
      return;
    }
    inbox.deliver({ name: event.name, payload: event.payload ?? null, at: new Date().toISOString() });
    events.emit(turn(), { type: 'event_received', name: event.name });
  });
}
