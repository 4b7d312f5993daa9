import { createHash } from 'node:crypto';
import { Role, type ListTasksRequest, type Message } from '@a2a-js/sdk';

/**
 * What A2A requests must be, checked at the edge before the SDK acts on them, where the SDK lets
 * them through (the A2A TCK found each): each check returns the sentence the client gets, or
 * undefined.
 */

/**
 * A JSON-RPC 2.0 request's envelope: `jsonrpc` "2.0", a string `method`, an `id` that is a string,
 * a number or null, and `params` an object when present. The SDK answers some of these with
 * -32602 (invalid params); JSON-RPC says -32600 (invalid request).
 */
export function jsonRpcEnvelopeProblem(body: unknown): string | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    return 'a JSON-RPC request is a JSON object (batches are not supported)';
  const r = body as Record<string, unknown>;
  if (r.jsonrpc !== '2.0') return `"jsonrpc" must be "2.0", got ${JSON.stringify(r.jsonrpc) ?? 'nothing'}`;
  if (typeof r.method !== 'string' || r.method === '') return '"method" must be a method name (a string)';
  if ('id' in r && r.id !== null && typeof r.id !== 'string' && typeof r.id !== 'number')
    return '"id" must be a string, a number or null';
  return undefined;
}

/** The request's `id` when it is one JSON-RPC allows (else null, as JSON-RPC answers an invalid id). */
export function jsonRpcId(body: unknown): string | number | null {
  const id = body && typeof body === 'object' ? (body as { id?: unknown }).id : undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** A message a client sends: at least one part, and the user's role. */
export function messageProblem(message: Message | undefined): string | undefined {
  if (!message) return '"message" is required';
  if (!message.parts?.length) return 'the message has no parts: send at least one (a text, a file or data)';
  if (message.role !== Role.ROLE_USER)
    return message.role === Role.ROLE_UNSPECIFIED || message.role === undefined
      ? 'the message has no "role": a client\'s message is "ROLE_USER"'
      : 'a client\'s message must have "role" "ROLE_USER"';
  return undefined;
}

/** A `historyLength` a client may ask for: a whole number, 0 or more (absent: the whole history). */
export function historyLengthProblem(historyLength: number | undefined): string | undefined {
  if (historyLength === undefined) return undefined;
  if (!Number.isInteger(historyLength) || historyLength < 0)
    return `"historyLength" must be a whole number, 0 or more, got ${historyLength}`;
  return undefined;
}

/** RFC 3339 / ISO 8601 date-times as A2A's timestamps are written (`2026-11-28T10:00:00Z`). */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** `ListTasks`' own parameters, beyond what the SDK checks (its page size, status). */
export function listTasksProblem(params: ListTasksRequest): string | undefined {
  const history = historyLengthProblem(params.historyLength);
  if (history) return history;
  const after = params.statusTimestampAfter;
  if (after && (!TIMESTAMP.test(after) || Number.isNaN(Date.parse(after))))
    return `"statusTimestampAfter" must be an ISO 8601 date-time like 2026-11-28T10:00:00Z, got "${after}"`;
  return undefined;
}

/** What a page token stands for: where the next page starts, among the tasks of which filters. */
export interface PageCursor {
  offset: number;
  /** The filters it was given for (a token is valid only with the same ones). */
  filters: string;
}

/** The filters of a list request, as a page token records them. */
export function filtersKey(params: ListTasksRequest, tenant: string | undefined): string {
  const key = JSON.stringify([
    params.contextId ?? '',
    params.status ?? 0,
    params.statusTimestampAfter ?? '',
    tenant ?? '',
  ]);
  return createHash('sha256').update(key).digest('base64url').slice(0, 16);
}

/** The opaque token of the page that starts at `offset`. */
export function pageToken(cursor: PageCursor): string {
  return Buffer.from(JSON.stringify({ o: cursor.offset, f: cursor.filters })).toString('base64url');
}

/** The cursor a token stands for, or the sentence saying why it is none of this server's. */
export function readPageToken(token: string, filters: string): PageCursor | { problem: string } {
  const problem = {
    problem: `"pageToken" is not a token this server gave for these filters: pass the previous page's nextPageToken, with the same contextId, status and statusTimestampAfter`,
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    return problem;
  }
  const { o, f } = (parsed ?? {}) as { o?: unknown; f?: unknown };
  if (typeof o !== 'number' || !Number.isInteger(o) || o < 0 || f !== filters) return problem;
  return { offset: o, filters };
}
