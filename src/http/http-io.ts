import type { ImageInput } from '../storage/images';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import { busyPolicyProblem, type BusyPolicy } from '../core/conversation/busy';
import { userProblem } from '../core/facts/memory-scope';
import { parseDuration } from '../core/time/duration';
import { tenantFor, tenantProblem, type TenantScope } from '../core/fleet/tenants';
import { AGENT_INPUT_FIELD_NAMES, unknownFieldProblem, validateAgentInput } from '../core/run/run-input';
import { isUndecodable } from '../client/workflow-lookup';
import { isServerUnreachable } from '../client/outages';
import { ClientError, type ClientErrorKind } from '../client/client-error';

/**
 * The HTTP API's plumbing: reading requests (paths, JSON bodies, how long to wait) and writing
 * answers (JSON, errors with their statuses), apart from the routes that use them.
 */

/** A request the API refuses, with its HTTP status. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errorType = 'Http.BadRequest',
    /** Headers the answer carries besides its content type (`retry-after` of a 429). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** Largest request body accepted (413 beyond). Messages themselves are limited to `MAX_MESSAGE_CHARS` (100,000). */
export const MAX_BODY_BYTES = 1_000_000;

/** The largest body of a message (`POST /runs`, `POST /conversations/:id/messages`): room for images as data URLs. */
export const MAX_MESSAGE_BODY_BYTES = 32_000_000;

export { ACCEPT_WITHIN_MS } from '../client/accepted-within';

/**
 * A request's `images`: http(s) URLs and `data:` URLs, as strings or `{ "url", "name"? }`
 * objects; the client layer stores the data URLs and refuses what it cannot take.
 */
export function imagesOf(body: Record<string, unknown>): ImageInput[] | undefined {
  const images = body.images;
  if (images === undefined) return undefined;
  const valid =
    Array.isArray(images) &&
    images.every(
      (i) =>
        typeof i === 'string' ||
        (i !== null &&
          typeof i === 'object' &&
          typeof (i as { url?: unknown }).url === 'string' &&
          ['undefined', 'string'].includes(typeof (i as { name?: unknown }).name)),
    );
  if (!valid)
    throw new HttpError(
      400,
      '"images" must be an array of http(s) or data: URLs (strings, or {"url", "name"?} objects)',
    );
  return images as ImageInput[];
}

/**
 * What a message's body says beyond the message (`POST /conversations/:id/messages`, `POST
 * /api/chat`): the `user` the conversation works for (memory's scope, within the tenant), and
 * `tools` / `approvalTools`, which limit this turn and, on the message that starts the
 * conversation, are its tool set (built-in tools by name: `remember`, `sleep`, ...), as `send
 * --tools` does. A clear 400 for anything else.
 */
export function messageExtrasOf(body: Record<string, unknown>): {
  user?: string;
  tools?: string[];
  approvalTools?: string[];
} {
  const out: { user?: string; tools?: string[]; approvalTools?: string[] } = {};
  const problem = userProblem(body.user);
  if (problem) throw new HttpError(400, problem);
  if (body.user !== undefined) out.user = body.user as string;
  for (const key of ['tools', 'approvalTools'] as const) {
    const names = body[key];
    if (names === undefined) continue;
    if (!Array.isArray(names) || !names.every((n) => typeof n === 'string' && n !== ''))
      throw new HttpError(400, `"${key}" must be an array of tool names`);
    out[key] = names as string[];
  }
  return out;
}

/** A request's `busy` (what its message does while a turn runs); 400 for anything else. */
export function busyOf(value: unknown): BusyPolicy {
  const problem = busyPolicyProblem(value);
  if (problem) throw new HttpError(400, problem);
  return value as BusyPolicy;
}

/** HTTP status of each client error kind. */
const STATUS_OF: Record<ClientErrorKind, number> = {
  invalid: 400,
  rejected: 400,
  busy: 409,
  not_found: 404,
  wrong_kind: 404,
  closed: 409,
  already_running: 409,
  unreachable: 503,
  no_worker: 503,
  worker_failing: 409,
  undecodable: 409,
  queued: 202,
  still_running: 202,
  gone: 410,
  unsupported: 501,
};

/**
 * The tenant a request starts work as (see `tenantFor`): a tenant's token always its own (403 for
 * asking another), an admin the one its body names. 400 for a name that is not one.
 */
export function tenantOf(scope: TenantScope, requested: unknown): string | undefined {
  const problem = tenantProblem(requested);
  if (problem) throw new HttpError(400, problem);
  try {
    return tenantFor(scope, requested as string | undefined);
  } catch (err) {
    throw new HttpError(403, (err as Error).message, 'Http.ForbiddenTenant');
  }
}

/** The decoded path segments; a malformed percent-escape is the client's mistake (400), not ours. */
export function pathParts(pathname: string): string[] {
  try {
    return pathname.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    throw new HttpError(400, `the path ${pathname} has a malformed percent-escape`);
  }
}

/** Refuses a run's input the workflow would refuse (400), before anything starts. */
export function checkRunInput(input: unknown): void {
  const unknown = unknownFieldProblem(input as Record<string, unknown>, AGENT_INPUT_FIELD_NAMES);
  if (unknown) throw new HttpError(400, unknown);
  const problems = validateAgentInput(input);
  if (problems.length) throw new HttpError(400, problems.join('; '));
}

/** The longest a request may ask to wait (`?wait=`, `Prefer: wait=`); beyond, it should follow the run instead. */
export const MAX_WAIT_MS = 60 * 60_000;

/** How long the caller wants to wait: `?wait=30s`, or `Prefer: wait=30` (seconds, RFC 7240). Unset: until done. */
export function waitMs(req: IncomingMessage, url: URL): number | undefined {
  const query = url.searchParams.get('wait');
  let ms: number | undefined;
  if (query !== null) {
    try {
      ms = parseDuration(query);
    } catch (err) {
      throw new HttpError(400, `"wait": ${(err as Error).message}`);
    }
  } else {
    const prefer = /(?:^|[,;\s])wait=(\d+)/i.exec(String(req.headers.prefer ?? ''));
    if (prefer) ms = Number(prefer[1]) * 1000;
  }
  if (ms !== undefined && !(ms <= MAX_WAIT_MS)) {
    throw new HttpError(
      400,
      `"wait" may be at most 1h (${MAX_WAIT_MS / 1000} s); to follow a longer run, poll GET /runs/:id or subscribe to its events`,
    );
  }
  return ms;
}

/**
 * `work`'s value, or undefined when `ms` passes first: its Temporal calls are then cancelled, while
 * the run or turn itself goes on. `gone` (the caller disconnected) cancels them too.
 */
export async function boundedWait<T>(
  client: Client,
  gone: AbortSignal,
  work: () => Promise<T>,
  ms: number | undefined,
): Promise<T | undefined> {
  if (ms === undefined) return work();
  const elapsed = AbortSignal.timeout(ms);
  try {
    // withAbortSignal replaces the request's signal rather than adding to it, so both go in here.
    return await client.withAbortSignal(AbortSignal.any([gone, elapsed]), work);
  } catch (err) {
    if (elapsed.aborted) return undefined;
    throw err;
  }
}

/** 202 with `Location`: the run or turn did not end within the requested wait, and goes on. */
export function sendStillRunning(res: ServerResponse, location: string, ids: Record<string, string>): void {
  res.setHeader('location', location);
  sendJson(res, 202, {
    ...ids,
    status: 'running',
    location,
    error: `not finished within the requested wait; it goes on: GET ${location}`,
    errorType: 'Client.StillRunning',
  });
}

/** Refuses another method than the route's (405). */
export function allow(method: string, expected: string): void {
  if (method !== expected) throw new HttpError(405, `use ${expected} here, not ${method}`, 'Http.MethodNotAllowed');
}

/**
 * The request body as a JSON object: 413 beyond `maxBytes` (default {@link MAX_BODY_BYTES}), 400
 * when it is not a JSON object.
 */
export async function readJson(
  req: IncomingMessage,
  maxBytes = MAX_BODY_BYTES,
  { optional = false }: { optional?: boolean } = {},
): Promise<Record<string, unknown>> {
  const raw = await readBody(req, maxBytes);
  // `optional`: a route whose body only adds to it (a note) takes none as `{}`, and nothing else.
  if (optional && raw.toString('utf8').trim() === '') return {};
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new HttpError(400, 'the request body must be JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new HttpError(400, 'the request body must be a JSON object');
  return body as Record<string, unknown>;
}

/** A request's raw body, at most `maxBytes` (413 beyond, before the rest is read). */
export async function readBody(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<Buffer> {
  const tooLarge = () =>
    new HttpError(
      413,
      `the request body is larger than ${maxBytes} bytes${maxBytes === MAX_MESSAGE_BODY_BYTES ? ' (send large images as http(s) URLs)' : ''}`,
      'Http.PayloadTooLarge',
      // The rest of the body is never read: the connection cannot carry another request.
      { connection: 'close' },
    );
  // A body declared too large is refused before a byte of it is read (or waited for).
  if (Number(req.headers['content-length']) > maxBytes) throw tooLarge();
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Answers an error as JSON `{ error, errorType }` with its status: an {@link HttpError}'s, a client error's by its kind, else 500. */
export function sendError(res: ServerResponse, err: unknown): void {
  if (err instanceof HttpError)
    return sendJson(res, err.status, { error: err.message, errorType: err.errorType }, err.headers);
  if (err instanceof ClientError)
    return sendJson(res, STATUS_OF[err.kind], {
      error: err.message,
      errorType: err.errorType,
      ...(err.lastKnown ? { lastKnown: err.lastKnown } : {}),
    });
  // Payloads encrypted for keys this server lacks, wherever they were met: a setting, not a bug.
  if (isUndecodable(err))
    return sendJson(res, 409, {
      error:
        "the workflow's payloads are encrypted, and this server has no keys: set AGENT_ENCRYPTION_KEYS to the workers' keys",
      errorType: 'Client.Undecodable',
    });
  // Temporal could not be reached, whichever call met it: not the server's fault, and worth retrying.
  if (isServerUnreachable(err))
    return sendJson(res, 503, {
      error: `Temporal is unreachable: ${err instanceof Error ? err.message : String(err)}; try again once it is back`,
      errorType: 'Client.Unreachable',
    });
  sendJson(res, 500, { error: err instanceof Error ? err.message : String(err), errorType: 'Http.InternalError' });
}

/** Answers JSON with a status (or just ends a response whose headers have gone out already, e.g. an event stream). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}
