import { ApplicationFailure } from '@temporalio/common';
import type { ChatMessage } from '../core/messages/chat-message';
import type { ModelRoute } from '../models/chat-model';
import { imageRefusalHint } from '../models/image-support';
import { isModelCallError } from '../models/model-error';

/**
 * A model call's failure as Temporal sees it, made once, at the activity edge: a
 * `ModelCallError` (the model seam's, no Temporal in it) becomes an `ApplicationFailure` of its
 * type (`ModelCall.Auth`, `ModelCall.RateLimit`, ...), not retryable where its kind says another
 * attempt would fail the same way, with the server's Retry-After as the next retry's delay, and
 * with its message only.
 * Anything else (a cancellation, a failure made here) is returned as it is.
 */
export function modelCallFailure(
  thrown: unknown,
  /** The request that failed, for the likely reason of a refusal (a model that takes no images). */
  request?: { sent: readonly ChatMessage[]; route: ModelRoute },
): unknown {
  const err = request ? imageRefusalHint(thrown, request.sent, request.route.name) : thrown;
  if (!isModelCallError(err)) return err;
  return ApplicationFailure.create({
    message: err.message,
    type: err.type,
    nonRetryable: !err.retryable,
    // No cause: the SDK's error chain (four stack traces deep for a refused connection) would pass
    // the server's 4 KB for an activity failure, which then records only "Failure exceeds size
    // limit." The message already says what went wrong and what to fix.
    ...(err.retryAfterMs !== undefined ? { nextRetryDelay: err.retryAfterMs } : {}),
  });
}
