import { Context } from '@temporalio/activity';

/**
 * Heartbeats every `intervalMs` until the returned function is called. Temporal delivers
 * cancellation (time limit, cancelled run) to an activity only through heartbeats, so long LLM
 * and tool calls heartbeat while they wait and can be aborted through `cancellationSignal`.
 *
 * The first beat comes after `intervalMs`, not at the start: each recorded heartbeat is a
 * billable action and a server request, and a call that ends within the interval has nothing to
 * be cancelled or rescued from (a cancel that arrives meanwhile is delivered with the first beat).
 */
export function keepHeartbeating(intervalMs = 2_000): () => void {
  const ctx = Context.current();
  const timer = setInterval(() => ctx.heartbeat(), intervalMs);
  return () => clearInterval(timer);
}
