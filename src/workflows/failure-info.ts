import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';

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
