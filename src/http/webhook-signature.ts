import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signed webhooks for event deliveries: with `AGENT_WEBHOOK_SECRET` set, an event route takes a
 * request only when `X-Signature-256: sha256=<hex>` is the HMAC-SHA256 of its raw body under that
 * secret (the scheme GitHub and many payment providers use), so a provider can call the route
 * directly without an API token. Hand-written: a dozen lines of node:crypto, no library needed.
 */

/** The header that carries the signature. */
export const SIGNATURE_HEADER = 'x-signature-256';

/** The signature header's value for `body` under `secret`: `sha256=<hex>`. */
export function signBody(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * Why a request's signature does not hold (missing, malformed, wrong), or undefined when it is the
 * body's under `secret`. Compared in constant time.
 */
export function signatureProblem(
  secret: string,
  body: string | Buffer,
  header: string | undefined,
): string | undefined {
  if (!header)
    return `this route needs the ${SIGNATURE_HEADER} header: sha256=<hex HMAC-SHA256 of the body under AGENT_WEBHOOK_SECRET>`;
  const match = /^sha256=([0-9a-f]{64})$/i.exec(header.trim());
  if (!match) return `${SIGNATURE_HEADER} must be sha256=<64 hex digits>`;
  const expected = Buffer.from(signBody(secret, body).slice('sha256='.length), 'hex');
  const given = Buffer.from(match[1], 'hex');
  return timingSafeEqual(expected, given) ? undefined : `the ${SIGNATURE_HEADER} signature does not match the body`;
}
