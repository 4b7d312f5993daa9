import { log, setHandler } from '@temporalio/workflow';
import { forgetInValue, type MemoryForgotten } from '../core/conversation/forgetting';
import type { EventLog } from '../core/events/event-log';
import { memoryForgottenSignal } from '../contracts/definitions';
import type { RunRef } from './run-context';

/**
 * A deletion of memory reaching a workflow that holds copies of the deleted facts (see
 * `forgetQuotes`): `apply` takes them out of the workflow's state. A signal handler adds no
 * command, and histories recorded before it never had the signal: no patch.
 */
export function handleForgetting(events: EventLog, apply: (forgotten: MemoryForgotten) => number): void {
  setHandler(memoryForgottenSignal, (forgotten) => {
    // The workflow's state, then the events it keeps for readers (`events`, `history`).
    const changed = apply(forgotten) + events.rewrite((event) => forgetInValue(event, forgotten).value);
    log.info('facts deleted from memory taken out of the messages', { facts: forgotten.facts.length, changed });
  });
}

/**
 * Has the run's loop take the facts out of each state its steps return from now on too (a step
 * under way began with the facts still there).
 */
export function keepForgetting(run: RunRef, forgotten: MemoryForgotten): void {
  run.forgotten = run.forgotten ? { at: forgotten.at, facts: [...run.forgotten.facts, ...forgotten.facts] } : forgotten;
}
