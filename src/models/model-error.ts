/**
 * How a model call failed, in the seam's own terms: no Temporal here. Adapters throw a
 * {@link ModelCallError}; the model-call activity turns it into a Temporal failure once, at its
 * edge (retryable or not, by kind), and the low-level API hands it to your loop as it is.
 */

/** What kind of failure: each says whether another attempt could succeed (see {@link MODEL_ERROR_KINDS}). */
export type ModelCallErrorKind = keyof typeof MODEL_ERROR_KINDS;

/**
 * Every kind, with the `errorType` runs report for it (`ModelCall.*`, stable: dashboards and
 * fallbacks key on it) and whether it is worth another attempt.
 */
export const MODEL_ERROR_KINDS = {
  not_configured: { type: 'ModelCall.NotConfigured', retryable: false },
  unsupported: { type: 'ModelCall.Unsupported', retryable: false },
  auth: { type: 'ModelCall.Auth', retryable: false },
  permission_denied: { type: 'ModelCall.PermissionDenied', retryable: false },
  not_found: { type: 'ModelCall.NotFound', retryable: false },
  bad_request: { type: 'ModelCall.BadRequest', retryable: false },
  quota_exceeded: { type: 'ModelCall.QuotaExceeded', retryable: false },
  images_unsupported: { type: 'ModelCall.ImagesUnsupported', retryable: false },
  image_not_found: { type: 'ModelCall.ImageNotFound', retryable: false },
  rate_limited: { type: 'ModelCall.RateLimit', retryable: true },
  overloaded: { type: 'ModelCall.Overloaded', retryable: true },
  server_error: { type: 'ModelCall.ServerError', retryable: true },
  timeout: { type: 'ModelCall.Timeout', retryable: true },
  conflict: { type: 'ModelCall.Conflict', retryable: true },
  connection: { type: 'ModelCall.Connection', retryable: true },
  invalid_response: { type: 'ModelCall.InvalidResponse', retryable: true },
  unknown: { type: 'ModelCall.Unknown', retryable: true },
} as const;

/**
 * A model call that failed, classified once by the adapter that made it: its `kind`, a message
 * that names what to fix, and, for a server that said when to try again, `retryAfterMs`.
 *
 * @experimental The provider seam grows with the adapters for other providers.
 */
export class ModelCallError extends Error {
  /** How long the server asked the caller to wait before trying again. */
  readonly retryAfterMs?: number;

  constructor(
    readonly kind: ModelCallErrorKind,
    message: string,
    options: { cause?: unknown; retryAfterMs?: number } = {},
  ) {
    super(message, options.cause instanceof Error ? { cause: options.cause } : undefined);
    this.name = 'ModelCallError';
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
  }

  /** The `errorType` runs report: `ModelCall.Auth`, `ModelCall.RateLimit`, ... */
  get type(): string {
    return MODEL_ERROR_KINDS[this.kind].type;
  }

  /** Whether another attempt could succeed. */
  get retryable(): boolean {
    return MODEL_ERROR_KINDS[this.kind].retryable;
  }
}

/** Whether `err` is a {@link ModelCallError} (by name too: errors cross module copies). */
export function isModelCallError(err: unknown): err is ModelCallError {
  return err instanceof ModelCallError || (err as Error | undefined)?.name === 'ModelCallError';
}

/** Where the failing request went, so messages can say what to fix. */
export interface ModelEndpoint {
  baseURL: string;
  model: string;
}

type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * A provider SDK's error classes and the settings that configure it. The official SDKs
 * (`openai`, `@anthropic-ai/sdk`) are generated alike: an `APIError` with the HTTP `status` and
 * `headers`, and connection, timeout and abort errors beside it. Each adapter brings its own
 * (`openai/openai-errors.ts`, `anthropic/messages.ts`, `ai-sdk/ai-sdk-model.ts`).
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

/** The parts of an SDK's `APIError` read here. */
interface ApiErrorLike extends Error {
  status?: number;
  headers?: Headers;
  code?: unknown;
}

/**
 * Turns whatever a provider's SDK threw into a {@link ModelCallError}, once, in its adapter.
 * Retryable kinds: 408, 409, 429, 5xx, timeouts and connection errors (the caller owns the
 * back-off; a server's Retry-After comes along). Everything else in 4xx is not: another attempt
 * would get the same answer, so the run fails fast with a message that names the setting to fix.
 * The caller's own cancellation is returned as it is.
 */
export function classifyModelError(err: unknown, endpoint: ModelEndpoint, sdk: ProviderErrors): unknown {
  if (isModelCallError(err)) return err;
  if (err instanceof sdk.APIUserAbortError) return err; // our own cancellation: let Temporal see it as such
  const where = `the model server at ${endpoint.baseURL}`;
  if (err instanceof sdk.APIConnectionTimeoutError) {
    return failure(`${where} did not answer in time (model "${endpoint.model}")`, 'timeout', err);
  }
  if (err instanceof sdk.APIConnectionError) {
    const cause = connectionProblem(err);
    return failure(
      `could not reach ${where}${cause ? ` (${cause})` : ''}; check ${sdk.baseURLVar} and that the server is running`,
      'connection',
      err,
    );
  }
  // The reply arrived but cannot be read: malformed JSON, or a body cut off mid-way (undici's
  // "terminated"). Another sample may be fine, so these are retried like other invalid replies.
  // Checked by name: fetch's errors may come from another realm (undici runs in Node's own).
  const name = (err as Error | undefined)?.name;
  if (name === 'SyntaxError') {
    return failure(`${where} sent a reply that is not valid JSON (${(err as Error).message})`, 'invalid_response', err);
  }
  if (name === 'TypeError' && (err as Error).message === 'terminated') {
    const cause = ((err as Error).cause as Error | undefined)?.message;
    return failure(
      `${where} closed the connection before its reply was complete${cause ? ` (${cause})` : ''}`,
      'invalid_response',
      err,
    );
  }
  if (!(err instanceof sdk.APIError) || (err as ApiErrorLike).status === undefined) {
    return failure(`model call failed: ${(err as Error)?.message ?? String(err)}`, 'unknown', err);
  }
  const apiError = err as ApiErrorLike;
  const status = apiError.status!;
  // The client's message starts with the status already ("503 overloaded").
  const detail = `HTTP ${status}: ${apiError.message.replace(/^\d{3}\s+/, '')}`;
  if (status === 429) {
    if (apiError.code === 'insufficient_quota') {
      return failure(
        `${where} says the account is out of quota (${detail}); check billing for ${sdk.keyVar}`,
        'quota_exceeded',
        err,
      );
    }
    return failure(
      `${where} is rate limiting requests (${detail})`,
      'rate_limited',
      err,
      retryAfterMs(apiError.headers),
    );
  }
  if (status === 408)
    return failure(`${where} timed out the request (${detail})`, 'timeout', err, retryAfterMs(apiError.headers));
  if (status === 409)
    return failure(`${where} reported a conflict (${detail})`, 'conflict', err, retryAfterMs(apiError.headers));
  // Anthropic's "overloaded" (529): a busy provider, not a broken one; another model may answer.
  if (status === 529)
    return failure(`${where} is overloaded (${detail})`, 'overloaded', err, retryAfterMs(apiError.headers));
  if (status >= 500) return failure(`${where} failed (${detail})`, 'server_error', err, retryAfterMs(apiError.headers));
  if (status === 401) return failure(`${where} rejected the API key (${detail}); check ${sdk.keyVar}`, 'auth', err);
  if (status === 403) {
    return failure(
      `${where} denied access (${detail}); check that ${sdk.keyVar} may use model "${endpoint.model}"`,
      'permission_denied',
      err,
    );
  }
  if (status === 404) {
    return failure(`${where} ${sdk.notFound(endpoint)} (${detail})`, 'not_found', err);
  }
  return failure(`${where} rejected the request (${detail})`, 'bad_request', err);
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

function failure(message: string, kind: ModelCallErrorKind, cause: unknown, retryAfterMs?: number): ModelCallError {
  return new ModelCallError(kind, message, { cause, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
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
