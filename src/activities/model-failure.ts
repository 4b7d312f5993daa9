import { ApplicationFailure } from '@temporalio/common';
import { isModelCallError } from '../models/model-error';

/**
 * A model call's failure as Temporal sees it, made once, at the activity edge: a
 * `ModelCallError` (the model seam's, no Temporal in it) becomes an `ApplicationFailure` of its
 * type (`ModelCall.Auth`, `ModelCall.RateLimit`, ...), not retryable where its kind says another
 * attempt would fail the same way, with the server's Retry-After as the next retry's delay.
 * Anything else (a cancellation, a failure made here) is returned as it is.
 */
export function modelCallFailure(err: unknown): unknown {
  if (!isModelCallError(err)) return err;
  return ApplicationFailure.create({
    message: err.message,
    type: err.type,
    nonRetryable: !err.retryable,
    cause: err,
    ...(err.retryAfterMs !== undefined ? { nextRetryDelay: err.retryAfterMs } : {}),
  });
}
