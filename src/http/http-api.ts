import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import type { ConversationOptions } from '../core';
import { ConversationError, conversationStatus, decideApproval, readTranscript, sendMessage } from '../runtime/conversations';
import { runOutcome, startAgentRun } from '../runtime/run-agent';

export interface HttpApiOptions {
  client: Client;
  taskQueue: string;
  /** Options for conversations this API starts. */
  conversationOptions?: ConversationOptions;
}

/** A request the API refuses, with its HTTP status. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const MAX_BODY_BYTES = 1_000_000;

/**
 * The HTTP API. Errors are always JSON `{ "error": "..." }`: 400 for bad input (including a
 * message the conversation refused), 404 for an unknown conversation or route.
 *
 *   GET  /assistant-with-tool?message=...        one agent run; the answer as text
 *   POST /conversations/:id/messages            {"message", "tools"?} → the turn result
 *   GET  /conversations/:id                     transcript and status
 *   POST /conversations/:id/approvals/:callId   {"approve": true|false, "reason"?}
 */
export function createHttpApi(options: HttpApiOptions): Server {
  return createServer((req, res) => {
    route(req, res, options).catch((err: unknown) => sendError(res, err));
  });
}

async function route(req: IncomingMessage, res: ServerResponse, o: HttpApiOptions): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const method = req.method ?? 'GET';

  if (parts.length === 1 && parts[0] === 'assistant-with-tool') {
    allow(method, 'GET');
    const message = url.searchParams.get('message');
    if (!message?.trim()) throw new HttpError(400, 'missing the "message" query parameter, e.g. /assistant-with-tool?message=What%20is%202%2B2');
    const outcome = await runOutcome(await startAgentRun(o.client, { message }, { taskQueue: o.taskQueue }));
    if (outcome.status === 'failed') return sendJson(res, 502, { error: outcome.error, errorType: outcome.errorType, workflowId: outcome.workflowId });
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'x-workflow-id': outcome.workflowId });
    res.end(outcome.content ?? outcome.toolExecutions.map((e) => e.result).join('\n'));
    return;
  }
  if (parts[0] === 'conversations' && parts.length >= 2) {
    const id = parts[1];
    if (parts.length === 2) {
      allow(method, 'GET');
      const [status, transcript] = await Promise.all([conversationStatus(o.client, id), readTranscript(o.client, id)]);
      return sendJson(res, 200, { conversationId: id, status, ...transcript });
    }
    if (parts.length === 3 && parts[2] === 'messages') {
      allow(method, 'POST');
      const body = await readJson(req);
      const turn: { message: string; tools?: string[] } = { message: body.message as string };
      if (body.tools !== undefined) turn.tools = body.tools as string[];
      return sendJson(res, 200, await sendMessage(o.client, id, turn, { taskQueue: o.taskQueue, options: o.conversationOptions }));
    }
    if (parts.length === 4 && parts[2] === 'approvals') {
      allow(method, 'POST');
      const body = await readJson(req);
      if (typeof body.approve !== 'boolean') throw new HttpError(400, '"approve" must be true or false');
      if (body.reason !== undefined && typeof body.reason !== 'string') throw new HttpError(400, '"reason" must be a string');
      const decision = { callId: parts[3], approve: body.approve, ...(body.reason ? { reason: body.reason as string } : {}) };
      return sendJson(res, 200, await decideApproval(o.client, id, decision));
    }
  }
  throw new HttpError(404, `no route ${method} ${url.pathname}`);
}

function allow(method: string, expected: string): void {
  if (method !== expected) throw new HttpError(405, `use ${expected} here, not ${method}`);
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `the request body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'the request body must be JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, 'the request body must be a JSON object');
  return body as Record<string, unknown>;
}

function sendError(res: ServerResponse, err: unknown): void {
  if (err instanceof HttpError) return sendJson(res, err.status, { error: err.message });
  if (err instanceof ConversationError) return sendJson(res, err.kind === 'not_found' ? 404 : 400, { error: err.message });
  sendJson(res, 500, { error: err instanceof Error ? err.message : String(err) });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}
