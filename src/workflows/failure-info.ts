import { ActivityFailure, ApplicationFailure, isCancellation, TimeoutFailure } from '@temporalio/workflow';
import { withoutHistoryMark } from '../core/run/run-result';
import type { AgentResult } from '../core/state/run-results';
import type { RunState } from '../core/state/run-state';

/** Why a run could not go on: the original failure's type (e.g. `ModelCall.Auth`) and message. */
export function failureInfo(err: unknown): { error: string; errorType: string; cause?: Error } {
  const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
  if (err instanceof ActivityFailure && err.activityType === 'callModel' && cause instanceof TimeoutFailure) {
    // Temporal's own timeout (not one the activity reported): name the budget that ran out.
    const last = cause.cause?.message;
    // SCHEDULE_TO_CLOSE: runs that scheduled their model calls before the budget moved into the activity.
    const which =
      cause.timeoutType === 'SCHEDULE_TO_CLOSE'
        ? 'its modelCallTimeout (all attempts together; default 5m)'
        : cause.timeoutType === 'HEARTBEAT'
          ? 'its worker stopped responding on every attempt (no heartbeat; the worker was lost, or its event loop blocked)'
          : `its ${(cause.timeoutType ?? 'activity').toLowerCase().replace(/_/g, '-')} timeout`;
    return {
      errorType: 'ModelCall.Timeout',
      error: `the model call ran out of time: ${which}${last ? `; last failure: ${last}` : ''}`,
      cause,
    };
  }
  return {
    errorType: cause instanceof ApplicationFailure && cause.type ? cause.type : 'Agent.Failed',
    error: cause instanceof Error ? cause.message : String(cause),
    cause: cause instanceof Error ? cause : undefined,
  };
}

/** The first detail of the application failure under `err` (an activity's failure), if any. */
export function failureDetails(err: unknown): unknown {
  const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
  return cause instanceof ApplicationFailure ? cause.details?.[0] : undefined;
}

/** What the LLM reads when a tool call ended without a result, in words that say what happened. */
export function toolFailureMessage(err: unknown, timeoutMs: number, heartbeatTimeout: string): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof TimeoutFailure && cause.timeoutType === 'HEARTBEAT') {
    return (
      `the tool call was given up: the worker running it stopped responding (no heartbeat for ${heartbeatTimeout}: it crashed, was stopped, ` +
      'or was blocked) on every attempt. It may or may not have taken effect; check before calling it again'
    );
  }
  if (cause instanceof TimeoutFailure) return `the tool did not finish within its ${timeoutMs} ms timeout`;
  return cause instanceof Error ? cause.message : String(cause);
}

/** How a run that threw ended: cancelled, or failed with the original failure's type and message. */
export function runEnding(err: unknown): { error: string; errorType: string; status: 'cancelled' | 'failed' } {
  if (isCancellation(err)) return { error: 'the run was cancelled', errorType: 'Cancelled', status: 'cancelled' };
  const { error, errorType } = failureInfo(err);
  return { error, errorType, status: 'failed' };
}

/**
 * A run that cannot go on (a non-retryable model error, retries exhausted) fails the workflow, so
 * the Temporal UI shows it failed. The failure keeps the original type (e.g. `ModelCall.Auth`)
 * and carries the partial result as details for clients.
 */
export function runFailure(err: unknown, state: RunState, workflowId: string): unknown {
  if (isCancellation(err)) return err;
  const { error, errorType, cause } = failureInfo(err);
  const partial: Omit<AgentResult, 'status' | 'content'> = {
    workflowId,
    toolExecutions: state.toolExecutions.map(withoutHistoryMark),
    iterations: state.iterations,
    usage: state.usage,
  };
  return ApplicationFailure.create({ message: error, type: errorType, nonRetryable: true, details: [partial], cause });
}
