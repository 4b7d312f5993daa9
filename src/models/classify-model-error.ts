import { ApplicationFailure } from '@temporalio/common';
import * as OpenAISdk from 'openai';

/** Where the failing request went, so messages can say what to fix. */
export interface ModelEndpoint {
  baseURL: string;
  model: string;
}

type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * A provider SDK's error classes and the settings that configure it. The official SDKs
 * (`openai`, `@anthropic-ai/sdk`) are generated alike: an `APIError` with the HTTP `status` and
 * `headers`, and connection, timeout and abort errors beside it.
 */
export interface ProviderErrors {
  APIError: ErrorClass;
  APIConnectionError: ErrorClass;
  APIConnectionTimeoutError: ErrorClass;
  APIUserAbortError: ErrorClass;
  /** The variables a user fixes: the key, the endpoint, the model. */
  keyVar: string;
  baseURLVar: string;
  /** What a 404 means here. */
  notFound: (endpoint: ModelEndpoint) => string;
}

/** The `openai` SDK: Chat Completions and the Responses API. */
export const OPENAI_ERRORS: ProviderErrors = {
  APIError: OpenAISdk.APIError,
  APIConnectionError: OpenAISdk.APIConnectionError,
  APIConnectionTimeoutError: OpenAISdk.APIConnectionTimeoutError,
  APIUserAbortError: OpenAISdk.APIUserAbortError,
  keyVar: 'OPENAI_API_KEY',
  baseURLVar: 'OPENAI_BASE_URL',
  notFound: (e) =>
    `has no model "${e.model}" or no such endpoint; check AGENT_MODEL (or the agent's model), and that OPENAI_BASE_URL ends in /v1`,
};

/** The parts of an SDK's `APIError` read here. */
interface ApiErrorLike extends Error {
  status?: number;
  headers?: Headers;
  code?: unknown;
}

/**
 * Turns whatever the `openai` client threw into a typed Temporal failure, once, at the activity
 * edge. Retryable: 408, 409, 429, 5xx, timeouts and connection errors (Temporal's retry policy
 * owns the back-off; a server's Retry-After overrides it). Everything else in 4xx is
 * non-retryable: another attempt would get the same answer, so the run fails fast with a message
 * that names the setting to fix.
 */
export function classifyModelError(
  err: unknown,
  endpoint: ModelEndpoint,
  sdk: ProviderErrors = OPENAI_ERRORS,
): unknown {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof sdk.APIUserAbortError) return err; // our own cancellation: let Temporal see it as such
  const where = `the model server at ${endpoint.baseURL}`;
  if (err instanceof sdk.APIConnectionTimeoutError) {
    return retryable(`${where} did not answer in time (model "${endpoint.model}")`, 'ModelCall.Timeout', err);
  }
  if (err instanceof sdk.APIConnectionError) {
    const cause = connectionProblem(err);
    return retryable(
      `could not reach ${where}${cause ? ` (${cause})` : ''}; check ${sdk.baseURLVar} and that the server is running`,
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
  if (!(err instanceof sdk.APIError) || (err as ApiErrorLike).status === undefined) {
    return retryable(`model call failed: ${(err as Error)?.message ?? String(err)}`, 'ModelCall.Unknown', err);
  }
  const apiError = err as ApiErrorLike;
  const status = apiError.status!;
  // The client's message starts with the status already ("503 overloaded").
  const detail = `HTTP ${status}: ${apiError.message.replace(/^\d{3}\s+/, '')}`;
  if (status === 429) {
    if (apiError.code === 'insufficient_quota') {
      return nonRetryable(
        `${where} says the account is out of quota (${detail}); check billing for ${sdk.keyVar}`,
        'ModelCall.QuotaExceeded',
        err,
      );
    }
    return retryable(
      `${where} is rate limiting requests (${detail})`,
      'ModelCall.RateLimit',
      err,
      retryAfterMs(apiError.headers),
    );
  }
  if (status === 408)
    return retryable(
      `${where} timed out the request (${detail})`,
      'ModelCall.Timeout',
      err,
      retryAfterMs(apiError.headers),
    );
  if (status === 409)
    return retryable(
      `${where} reported a conflict (${detail})`,
      'ModelCall.Conflict',
      err,
      retryAfterMs(apiError.headers),
    );
  // Anthropic's "overloaded" (529): a busy provider, not a broken one; another model may answer.
  if (status === 529)
    return retryable(`${where} is overloaded (${detail})`, 'ModelCall.Overloaded', err, retryAfterMs(apiError.headers));
  if (status >= 500)
    return retryable(`${where} failed (${detail})`, 'ModelCall.ServerError', err, retryAfterMs(apiError.headers));
  if (status === 401)
    return nonRetryable(`${where} rejected the API key (${detail}); check ${sdk.keyVar}`, 'ModelCall.Auth', err);
  if (status === 403) {
    return nonRetryable(
      `${where} denied access (${detail}); check that ${sdk.keyVar} may use model "${endpoint.model}"`,
      'ModelCall.PermissionDenied',
      err,
    );
  }
  if (status === 404) {
    return nonRetryable(`${where} ${sdk.notFound(endpoint)} (${detail})`, 'ModelCall.NotFound', err);
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
