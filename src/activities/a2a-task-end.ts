import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { a2aTaskEnd, type A2ATaskEndJson } from '../contracts/a2a-task-json';
import type { A2ATaskEndInput } from '../contracts/activity-interface';
import { eventsQuery } from '../contracts/definitions';
import type { AgentEvent } from '../core/events/agent-events';
import { keepHeartbeating } from './heartbeat';

/** How often the wait tells Temporal it is alive (the record schedules it with a 1-minute heartbeat timeout). */
const BEAT_MS = 15_000;

/** The pause between reads of the conversation's events: short while the turn moves, longer while it waits. */
const FIRST_PAUSE_MS = 250;
const PAUSE_MS = 10_000;
/** After this long without an event (a turn waiting for a person), the pause between reads. */
const QUIET_MS = 5 * 60_000;
const QUIET_PAUSE_MS = 30_000;

/**
 * The `awaitA2aTaskEnd` activity (see its contract): reads the conversation's durable event log
 * until the task's turn ends, then gives the task's final status and artifacts, as the A2A server
 * would have saved them. Reading only: the turn runs in its conversation whatever happens here.
 *
 * It reads with the `events` query, pausing between reads, rather than with the history long
 * polls clients use: in a worker, calls go through the worker's native connection, which cannot
 * cancel a call under way, and a long poll there would hold a worker's shutdown (and this wait's
 * cancellation) for as long as the poll lasts.
 */
export function createAwaitA2aTaskEnd(deps: { client?: Client }) {
  return async function awaitA2aTaskEnd(input: A2ATaskEndInput): Promise<A2ATaskEndJson | null> {
    const ctx = Context.current();
    const ids = { id: input.taskId, contextId: input.contextId };
    const ending = (end: AgentEvent) =>
      a2aTaskEnd(ids, end, { messageId: randomUUID(), timestamp: new Date().toISOString() });
    const handle = (deps.client ?? ctx.client).workflow.getHandle(input.workflowId ?? input.contextId);
    const signal = AbortSignal.any([ctx.cancellationSignal, AbortSignal.timeout(input.waitMs)]);
    const stop = keepHeartbeating(BEAT_MS);
    try {
      let after = -1;
      let pause = FIRST_PAUSE_MS;
      let moved = Date.now();
      while (!signal.aborted) {
        const page = await handle.query(eventsQuery, { after });
        const end = page.events.find(
          (e: AgentEvent) => (e.type === 'turn_completed' || e.type === 'turn_failed') && e.turn === input.turn,
        );
        if (end) return ending(end);
        if (page.events.length) {
          after = page.events[page.events.length - 1].offset;
          moved = Date.now();
          pause = FIRST_PAUSE_MS;
          if (page.more) continue;
        } else if ((await handle.describe()).status.name !== 'RUNNING') {
          // The conversation closed without ending the turn: the task never will.
          const error = 'the conversation closed before the task ended';
          return ending({
            type: 'turn_failed',
            error,
            errorType: 'A2A.ConversationClosed',
            turn: input.turn,
            offset: -1,
          });
        }
        await pauseFor(Date.now() - moved > QUIET_MS ? QUIET_PAUSE_MS : pause, signal);
        pause = Math.min(pause * 2, PAUSE_MS);
      }
      ctx.cancellationSignal.throwIfAborted();
      return null; // out of time, the turn goes on: the record asks again
    } finally {
      stop();
    }
  };
}

function pauseFor(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
