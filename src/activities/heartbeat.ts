import { Context } from '@temporalio/activity';
import type { AttemptLedger } from './attempt-ledger';

/**
 * Heartbeats every `intervalMs` until the returned function is called. Temporal delivers
 * cancellation (time limit, cancelled run) to an activity only through heartbeats, so long LLM
 * and tool calls heartbeat while they wait and can be aborted through `cancellationSignal`.
 *
 * The first beat comes after `intervalMs`, not at the start: each recorded heartbeat is a
 * billable action and a server request, and a call that ends within the interval has nothing to
 * be cancelled or rescued from (a cancel that arrives meanwhile is delivered with the first beat).
 * `details` gives what each beat carries for a later attempt (see {@link AttemptLedger}).
 */
export function keepHeartbeating(intervalMs = 2_000, details?: () => AttemptLedger): () => void {
  const ctx = Context.current();
  const timer = setInterval(() => ctx.heartbeat(details?.()), intervalMs);
  return () => clearInterval(timer);
}

/**
 * Records `ledger` for the next attempt, right away: called as an attempt fails, so that the next
 * one knows (the SDK sends an attempt's last heartbeat details along with its failure).
 */
export function recordForNextAttempt(ledger: AttemptLedger): void {
  Context.current().heartbeat(ledger);
}
