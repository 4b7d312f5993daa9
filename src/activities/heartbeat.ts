import { Context } from '@temporalio/activity';

/**
 * Heartbeats every `intervalMs` until the returned function is called. Temporal delivers
 * cancellation (time limit, cancelled run) to an activity only through heartbeats, so long LLM
 * and tool calls heartbeat while they wait and can be aborted through `cancellationSignal`.
 */
export function keepHeartbeating(intervalMs = 2_000): () => void {
  const ctx = Context.current();
  ctx.heartbeat();
  const timer = setInterval(() => ctx.heartbeat(), intervalMs);
  return () => clearInterval(timer);
}
