import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { Payload, PayloadCodec } from '@temporalio/common';
import {
  accessChecker,
  requestScope,
  requestUrl,
  sendBadTarget,
  tokenMatches,
  TOKEN_COOKIE,
  type HttpAccessOptions,
} from './access';
import { HttpError, readBody, sendError } from './http-io';

/** Options of {@link createCodecServer}. */
export interface CodecServerOptions {
  /** The codec whose `encode`/`decode` the server offers (an `EncryptionCodec` with the workers' keys). */
  codec: PayloadCodec;
  /** Bearer tokens, and the origins of the Temporal UI allowed to call it (CORS). */
  access: HttpAccessOptions;
}

/** Largest request body accepted: a page of history's payloads. */
const MAX_BODY_BYTES = 8_000_000;

/**
 * Most payloads one request may convert. The Temporal UI and CLI send an event's few at a time;
 * each is a synchronous AES operation, and 100,000 in one request held the server for seconds.
 */
export const MAX_CODEC_PAYLOADS = 1000;

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

/** Whether `p` has a payload's JSON shape (the Temporal UI's and CLI's): strings where it has any. */
function isJsonPayload(p: unknown): p is JsonPayload {
  if (p === null || typeof p !== 'object' || Array.isArray(p)) return false;
  const { metadata, data } = p as Record<string, unknown>;
  if (data !== undefined && typeof data !== 'string') return false;
  if (metadata === undefined) return true;
  return (
    metadata !== null &&
    typeof metadata === 'object' &&
    !Array.isArray(metadata) &&
    Object.values(metadata).every((v) => typeof v === 'string')
  );
}

const toPayload = (p: JsonPayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data ?? '', 'base64'),
});
const toJson = (p: Payload): JsonPayload => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  ),
  data: Buffer.from(p.data ?? []).toString('base64'),
});

/**
 * A Temporal codec server: `POST /decode` and `POST /encode` take `{"payloads": [...]}` (base64
 * metadata and data, as the Temporal UI and `temporal --codec-endpoint` send them) and answer in
 * the same shape. Only callers with a token get plaintext: `Authorization: Bearer` (the CLI's
 * `--codec-auth`), or the cookie a browser gets by opening `/?access_token=<token>` once (the UI
 * then sends it with "include cross-origin credentials"). Hand-written: the protocol is two JSON
 * routes, and Temporal publishes no server for TypeScript.
 */
export function createCodecServer(options: CodecServerOptions): Server {
  const tokens = options.access.tokens ?? [];
  const checkAccess = accessChecker(options.access);
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = requestUrl(req);
    if (!url) return sendBadTarget(res);
    if (req.method === 'GET' && url.pathname === '/') return welcome(req, res, url, tokens);
    if (checkAccess(req, res) === 'answered') return;
    // A tenant's token sees its own runs only: decoding any payload of the namespace is an operator's.
    if (requestScope(req, options.access).tenant !== undefined)
      return send(res, 403, {
        error:
          "the codec server decodes every tenant's payloads: it takes admin tokens (AGENT_HTTP_TOKENS entries without =<tenant>)",
        errorType: 'Http.Forbidden',
      });
    if (req.method !== 'POST' || (url.pathname !== '/decode' && url.pathname !== '/encode')) {
      return send(res, 404, {
        error: 'the codec endpoints are POST /decode and POST /encode',
        errorType: 'Http.NotFound',
      });
    }
    convert(
      req,
      res,
      url.pathname === '/decode' ? (p) => options.codec.decode(p) : (p) => options.codec.encode(p),
    ).catch((err: unknown) =>
      send(res, 500, { error: String((err as Error)?.message ?? err), errorType: 'Http.InternalError' }),
    );
  };
  // Whatever a request holds, it is answered and the server goes on.
  return createServer((req, res) => {
    try {
      handle(req, res);
    } catch (err) {
      send(res, 500, { error: String((err as Error)?.message ?? err), errorType: 'Http.InternalError' });
    }
  });
}

/** `GET /`: what this is; with a valid `?access_token=`, the cookie that lets this browser's Temporal UI decode. */
function welcome(req: IncomingMessage, res: ServerResponse, url: URL, tokens: readonly string[]): void {
  const offered = url.searchParams.get('access_token');
  if (offered !== null) {
    if (!tokenMatches(offered, tokens))
      return send(res, 401, { error: 'invalid access token', errorType: 'Http.Unauthorized' });
    res.writeHead(200, {
      'content-type': 'text/plain; charset=utf-8',
      'set-cookie': `${TOKEN_COOKIE}=${encodeURIComponent(offered)}; HttpOnly; SameSite=Strict; Path=/`,
      'cache-control': 'no-store',
    });
    res.end(
      'This browser may now decode payloads through this codec server (turn on "Include cross-origin credentials" in the Temporal UI\'s codec settings).\n',
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(
    "durable-agents codec server: POST /decode, POST /encode. Open /?access_token=<token> once to let this browser's Temporal UI use it.\n",
  );
}

async function convert(
  req: IncomingMessage,
  res: ServerResponse,
  fn: (payloads: Payload[]) => Promise<Payload[]>,
): Promise<void> {
  let body: { payloads?: JsonPayload[] };
  try {
    body = JSON.parse((await readBody(req, MAX_BODY_BYTES)).toString('utf8'));
    if (!Array.isArray(body?.payloads)) throw new Error('no "payloads" array');
  } catch (err) {
    if (err instanceof HttpError) return sendError(res, err);
    return send(res, 400, {
      error: `expected {"payloads": [...]}: ${(err as Error).message}`,
      errorType: 'Http.BadRequest',
    });
  }
  const bad = body.payloads!.findIndex((p) => !isJsonPayload(p));
  if (bad >= 0)
    return send(res, 400, {
      error: `payloads[${bad}] is not a payload: each is {"metadata"?: {name: base64}, "data"?: base64}`,
      errorType: 'Http.BadRequest',
    });
  if (body.payloads!.length > MAX_CODEC_PAYLOADS)
    return send(res, 413, {
      error: `${body.payloads!.length} payloads in one request; at most ${MAX_CODEC_PAYLOADS} (send them in several requests)`,
      errorType: 'Http.PayloadTooLarge',
    });
  try {
    const out = await fn(body.payloads!.map(toPayload));
    send(res, 200, { payloads: out.map(toJson) });
  } catch (err) {
    // A payload of an unknown key, or changed in storage: say so, not "500".
    send(res, 422, { error: (err as Error).message, errorType: 'Codec.Failed' });
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}
