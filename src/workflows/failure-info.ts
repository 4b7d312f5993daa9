import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';

/** Why a run could not go on: the original failure's type (e.g. `ModelCall.Auth`) and message. */
export function failureInfo(err: unknown): { error: string; errorType: string; cause?: Error } {
  const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
  if (err instanceof ActivityFailure && err.activityType === 'callModel' && cause instanceof TimeoutFailure) {
    // Temporal's own timeout (not one the activity reported): name the budget that ran out.
    const last = cause.cause?.message;
    const which =
      cause.timeoutType === 'SCHEDULE_TO_CLOSE' ? 'its modelCallTimeout (all attempts together; default 5m)' : `its ${(cause.timeoutType ?? 'activity').toLowerCase().replace(/_/g, '-')} timeout`;
    return { errorType: 'ModelCall.Timeout', error: `the model call ran out of time: ${which}${last ? `; last failure: ${last}` : ''}`, cause };
  }
  return {
    errorType: cause instanceof ApplicationFailure && cause.type ? cause.type : 'Agent.Failed',
    error: cause instanceof Error ? cause.message : String(cause),
    cause: cause instanceof Error ? cause : undefined,
  };
}