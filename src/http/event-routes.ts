import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import { eventIdProblem, eventProblem, MAX_EVENT_PAYLOAD_BYTES } from '../core/time/durable-waits';
import { deliverEvent } from '../client/deliver-event';
import { presentedToken, tokenMatches, type HttpAccessOptions } from './access';
import { allow, HttpError, readBody, sendJson } from './http-io';
import { SIGNATURE_HEADER, signatureProblem } from './webhook-signature';

/**
 * `POST /runs/:id/events/:name` and `POST /conversations/:id/events/:name`: deliver an event
 * (the body, any JSON; empty is `null`) that a `wait_for_event` of that name receives. Built for
 * webhooks: with a webhook secret, a request signed with `X-Signature-256` needs no token.
 */

/** Whether a path is an event delivery (`/runs/:id/events/:name`, `/conversations/:id/events/:name`). */
export function isEventDelivery(path: string): boolean {
  return /^\/(runs|conversations)\/[^/]+\/events\/[^/]+\/?$/.test(path);
}

/**
 * Whether a request skips the bearer token: an event delivery that carries a signature while a
 * webhook secret is set (the route then checks the signature itself, 401 when it does not hold).
 */
export function signedDelivery(path: string, req: IncomingMessage, access: HttpAccessOptions): boolean {
  return (
    access.webhookSecret !== undefined &&
    req.method === 'POST' &&
    isEventDelivery(path) &&
    !!req.headers[SIGNATURE_HEADER]
  );
}

/** Delivers the event, after the name, size and (with a secret) signature are checked. */
export async function deliverEventRoute(
  req: IncomingMessage,
  res: ServerResponse,
  server: {
    client: Client;
    access?: HttpAccessOptions;
    /** Counts a wrong signature against the caller's address (see `AccessChecker.failedCredential`). */
    failedCredential: (req: IncomingMessage) => number;
  },
  id: string,
  name: string,
  method: string,
): Promise<void> {
  const { client, failedCredential } = server;
  const access = server.access ?? {};
  allow(method, 'POST');
  const nameProblem = eventProblem(name, null);
  if (nameProblem) throw new HttpError(400, nameProblem, 'Http.InvalidEvent');
  const raw = await readBody(req, MAX_EVENT_PAYLOAD_BYTES);
  const secret = access.webhookSecret;
  if (secret !== undefined) {
    const header = req.headers[SIGNATURE_HEADER] as string | undefined;
    // Signed: the signature must hold. Unsigned: only a caller with a valid token got here.
    const tokenHolder = (access.tokens?.length ?? 0) > 0 && tokenMatches(presentedToken(req), access.tokens!);
    if (header !== undefined || !tokenHolder) {
      const problem = signatureProblem(secret, raw, header);
      if (problem) {
        // A wrong signature is a wrong guess of the secret, limited like a wrong token.
        const retryAfter = failedCredential(req);
        if (retryAfter > 0)
          throw new HttpError(
            429,
            `too many requests with a wrong signature or token; try again in ${retryAfter} s`,
            'Http.RateLimited',
            { 'retry-after': String(retryAfter) },
          );
        throw new HttpError(401, problem, 'Http.BadSignature');
      }
    }
  }
  let payload: unknown = null;
  const text = raw.toString('utf8');
  if (text.trim()) {
    try {
      payload = JSON.parse(text);
    } catch {
      throw new HttpError(400, 'the event payload (the request body) must be JSON', 'Http.InvalidEvent');
    }
  }
  const problem = eventProblem(name, payload);
  if (problem) throw new HttpError(/larger|bytes/.test(problem) ? 413 : 400, problem, 'Http.InvalidEvent');
  const eventId = eventIdOf(req);
  sendJson(res, 202, await deliverEvent(client, id, name, payload, eventId !== undefined ? { eventId } : {}));
}

/**
 * The headers that give an event's id, first found first: ours, the general `Idempotency-Key`,
 * and the delivery ids webhook senders put on every delivery (and on its retries): Standard
 * Webhooks' and Svix's, GitHub's.
 */
export const EVENT_ID_HEADERS = ['x-event-id', 'idempotency-key', 'webhook-id', 'svix-id', 'x-github-delivery'];

/** The event id a request gives (see {@link EVENT_ID_HEADERS}); a malformed one is refused (400). */
function eventIdOf(req: IncomingMessage): string | undefined {
  for (const header of EVENT_ID_HEADERS) {
    const value = req.headers[header];
    if (value === undefined) continue;
    const id = Array.isArray(value) ? value[0] : value;
    const problem = eventIdProblem(id);
    if (problem) throw new HttpError(400, `${header}: ${problem}`, 'Http.InvalidEvent');
    return id;
  }
  return undefined;
}
