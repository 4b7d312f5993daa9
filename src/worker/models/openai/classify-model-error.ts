import { ApplicationFailure } from '@temporalio/common';
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';

/** Where the failing request went, so messages can say what to fix. */
export interface ModelEndpoint {
  baseURL: string;
  model: string;
}

/**
 * Turns whatever the `openai` client threw into a typed Temporal failure, once, at the activity
 * edge. Retryable: 408, 409, 429, 5xx, timeouts and connection errors (Temporal's retry policy
 * owns the back-off; a server's Retry-After overrides it). Everything else in 4xx is
 * non-retryable: another attempt would get the same answer, so the run fails fast with a message
 * that names the setting to fix.
 */
export function classifyModelError(err: unknown, endpoint: ModelEndpoint): unknown {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof APIUserAbortError) return err; // our own cancellation: let Temporal see it as such
  const where = `the model server at ${endpoint.baseURL}`;
  if (err instanceof APIConnectionTimeoutError) {
    return retryable(`${where} did not answer in time (model "${endpoint.model}")`, 'ModelCall.Timeout', err);
  }
  if (err instanceof APIConnectionError) {
    const cause = connectionProblem(err);
    return retryable(
      `could not reach ${where}${cause ? ` (${cause})` : ''}; check OPENAI_BASE_URL and that the server is running`,
      'ModelCall.Connection',
      err,
    );
  }
  // The reply arrived but cannot be read: malformed JSON, or a body cut off mid-way (undici's
  // "terminated"). Another sample may be fine, so these are retried like other invalid replies.
  // Checked by name: fetch's errors may come from another realm (undici runs in Node's own).
  const name = (err as Error | undefined)?.name;
  if (name === 'SyntaxError') {
    return retryable(
      `${where} sent a reply that is not valid JSON (${(err as Error).message})`,
      'ModelCall.InvalidResponse',
      err,
    );
  }
  if (name === 'TypeError' && (err as Error).message === 'terminated') {
    const cause = ((err as Error).cause as Error | undefined)?.message;
    return retryable(
      `${where} closed the connection before its reply was complete${cause ? ` (${cause})` : ''}`,
      'ModelCall.InvalidResponse',
      err,
    );
  }
  if (!(err instanceof APIError) || err.status === undefined) {
    return retryable(`model call failed: ${(err as Error)?.message ?? String(err)}`, 'ModelCall.Unknown', err);
  }
  const status = err.status;
  // The client's message starts with the status already ("503 overloaded").
  const detail = `HTTP ${status}: ${err.message.replace(/^\d{3}\s+/, '')}`;
  if (status === 429) {
    if (err.code === 'insufficient_quota') {
      return nonRetryable(
        `${where} says the account is out of quota (${detail}); check billing for OPENAI_API_KEY`,
        'ModelCall.QuotaExceeded',
        err,
      );
    }
    return retryable(
      `${where} is rate limiting requests (${detail})`,
      'ModelCall.RateLimit',
      err,
      retryAfterMs(err.headers),
    );
  }
  if (status === 408)
    return retryable(`${where} timed out the request (${detail})`, 'ModelCall.Timeout', err, retryAfterMs(err.headers));
  if (status === 409)
    return retryable(`${where} reported a conflict (${detail})`, 'ModelCall.Conflict', err, retryAfterMs(err.headers));
  if (status >= 500)
    return retryable(`${where} failed (${detail})`, 'ModelCall.ServerError', err, retryAfterMs(err.headers));
  if (status === 401)
    return nonRetryable(`${where} rejected the API key (${detail}); check OPENAI_API_KEY`, 'ModelCall.Auth', err);
  if (status === 403) {
    return nonRetryable(
      `${where} denied access (${detail}); check that OPENAI_API_KEY may use model "${endpoint.model}"`,
      'ModelCall.PermissionDenied',
      err,
    );
  }
  if (status === 404) {
    return nonRetryable(
      `${where} has no model "${endpoint.model}" or no chat-completions endpoint (${detail}); check AGENT_MODEL, and that OPENAI_BASE_URL ends in /v1`,
      'ModelCall.NotFound',
      err,
    );
  }
  return nonRetryable(`${where} rejected the request (${detail})`, 'ModelCall.BadRequest', err);
}

const SOCKET_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/**
 * Why a connection failed, in words: fetch reports only "fetch failed", with the socket error
 * (`ECONNREFUSED`, ...) a few causes down.
 */
function connectionProblem(err: Error): string | undefined {
  for (let e: unknown = err.cause, depth = 0; e && depth < 5; e = (e as Error).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && SOCKET_ERRORS[code]) return SOCKET_ERRORS[code];
  }
  return (err.cause as Error | undefined)?.message;
}

function retryable(message: string, type: string, cause: unknown, nextRetryDelayMs?: number): ApplicationFailure {
  return ApplicationFailure.create({
    message,
    type,
    nonRetryable: false,
    cause: asError(cause),
    nextRetryDelay: nextRetryDelayMs,
  });
}

function nonRetryable(message: string, type: string, cause: unknown): ApplicationFailure {
  return ApplicationFailure.create({ message, type, nonRetryable: true, cause: asError(cause) });
}

function asError(e: unknown): Error | undefined {
  return e instanceof Error ? e : undefined;
}

/** How long the server asked us to wait: `retry-after-ms`, `retry-after` in seconds, or an HTTP date. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = Number(headers.get('retry-after-ms'));
  if (ms > 0) return ms;
  const raw = headers.get('retry-after');
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return seconds > 0 ? seconds * 1000 : undefined;
  const at = Date.parse(raw);
  return Number.isFinite(at) && at > now ? at - now : undefined;
}
