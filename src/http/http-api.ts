import { setMaxListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import {
  parseDuration,
  validateAgentInput,
  workflowIdProblem,
  type AgentEvent,
  type AgentInput,
  type ConversationOptions,
  type TurnInput,
} from '../core';
import { outcomeJson } from '../client/outcome-json';
import { decideApproval, readStatus, readTranscript } from '../client/agent-workflows';
import { ClientError, type ClientErrorKind } from '../client/client-error';
import { cancelTurn, startMessage } from '../client/conversations';
import { chatPageHtml } from './chat-page';
import { accessChecker, requestUrl, sendBadTarget, tokenMatches, TOKEN_COOKIE, type HttpAccessOptions } from './access';
import { eventsPosition, isTurnEnd, streamEvents } from '../client/event-stream';
import { describeKind, lookupWorkflow } from '../client/workflow-lookup';
import { listAgents } from '../client/list-agents';
import type { AgentSummary } from '../common/activity-interface';
import { runOutcome, startAgentRun } from '../client/run-agent';

/** Options of {@link createHttpApi} and {@link httpApiHandler}. */
export interface HttpApiOptions {
  client: Client;
  taskQueue: string;
  /** Options for conversations this API starts. */
  conversationOptions?: ConversationOptions;
  /** Serve the web chat page at `/` (default true). */
  chatPage?: boolean;
  /** A workflow's Temporal UI address without its id, for the page's links (e.g. from `workflowUrl`). */
  workflowUrlPrefix?: string;
  /**
   * Bearer tokens, CORS origins and a rate limit (see `httpAccessFromEnv` for the variables
   * `npm run serve` reads). With tokens, every route but `GET /healthz` answers 401 without one.
   */
  access?: HttpAccessOptions;
}

/** A request the API refuses, with its HTTP status. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errorType = 'Http.BadRequest',
  ) {
    super(message);
  }
}

/** How long an event stream waits for its first event before it sends its headers anyway. */
const FIRST_EVENT_WAIT_MS = 500;

/** Largest request body accepted (413 beyond). Messages themselves are limited to `MAX_MESSAGE_CHARS` (100,000). */
export const MAX_BODY_BYTES = 1_000_000;

/** HTTP status of each client error kind. */
const STATUS_OF: Record<ClientErrorKind, number> = {
  invalid: 400,
  rejected: 400,
  not_found: 404,
  wrong_kind: 404,
  closed: 409,
  already_running: 409,
  unreachable: 503,
  no_worker: 503,
  worker_failing: 503,
  still_running: 202,
  gone: 410,
  unsupported: 501,
};

/**
 * The HTTP API. Errors are JSON `{ "error", "errorType" }`; README.md lists every status.
 *
 *   GET  /healthz                               whether Temporal answers (no token needed)
 *   GET  /                                      the web chat page (unless `chatPage: false`; with tokens, open it as /?access_token=...)
 *   GET  /assistant-with-tool?message=...        one agent run (&agent=name); the answer as text
 *   GET  /agents                                the workers' named agents and their tools
 *   POST /runs                                  {"message", ...run options} → the run result (JSON), or its events (Accept: text/event-stream)
 *   GET  /runs/:id                              a run's status and messages
 *   POST /runs/:id/approvals/:callId            {"approve": true|false, "reason"?}
 *   POST /conversations/:id/messages            {"message", "tools"?, "approvalTools"?, "agent"?} → the turn result
 *   GET  /conversations/:id                     a conversation's status and transcript
 *   POST /conversations/:id/approvals/:callId   {"approve": true|false, "reason"?}
 *   POST /conversations/:id/cancel              cancels the running turn
 *   GET  /runs/:id/events, /conversations/:id/events   the live events (Server-Sent Events)
 *
 * Event streams: each SSE message has `id:` = the event's offset and `data:` = the event as JSON
 * (with its `type`). A reconnecting client sends `Last-Event-ID` (or `?after=<offset>`) and gets
 * every later event once; without either it starts at the current turn. `POST .../messages`
 * with `Accept: text/event-stream` streams that turn's events and ends after its last.
 *
 * Waiting requests take `?wait=30s` (or `Prefer: wait=30`): when the run or turn has not finished
 * by then, the answer is 202 with `Location` pointing at the run or conversation.
 */
export function createHttpApi(options: HttpApiOptions): Server {
  return createServer(httpApiHandler(options));
}

/** The API's request handler, for mounting in a server of your own (see {@link createHttpApi}). */
export function httpApiHandler(options: HttpApiOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const checkAccess = accessChecker(options.access ?? {}, (path) => path === '/healthz');
  const tokens = options.access?.tokens ?? [];
  const context: RouteContext = { ...options, health: cachedHealth(options.client), agents: cachedAgents(options) };
  return (req, res) => {
    // Whatever a request holds, it is answered (4xx for the malformed) and the server goes on.
    try {
      handle(req, res);
    } catch (err) {
      sendError(res, err);
    }
  };

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const url = requestUrl(req);
    if (!url) return sendBadTarget(res);
    // The chat page opened as /?access_token=...: the token becomes an HttpOnly cookie (so the
    // page's fetches and EventSource carry it; EventSource cannot send headers) and leaves the URL.
    const offered = url.searchParams.get('access_token');
    if (
      tokens.length > 0 &&
      url.pathname === '/' &&
      req.method === 'GET' &&
      offered !== null &&
      tokenMatches(offered, tokens)
    ) {
      res.writeHead(303, {
        location: '/',
        'set-cookie': `${TOKEN_COOKIE}=${encodeURIComponent(offered)}; HttpOnly; SameSite=Strict; Path=/`,
        'cache-control': 'no-store',
      });
      res.end();
      return;
    }
    if (checkAccess(req, res) === 'answered') return;
    // A caller that goes away (or a server shutting down) ends the request's Temporal calls too:
    // nothing keeps polling for nobody, and nothing is in flight when the connection closes.
    const gone = new AbortController();
    setMaxListeners(0, gone.signal); // the SDK adds a listener per call; they go with the request
    res.on('close', () => gone.abort());
    options.client
      .withAbortSignal(gone.signal, () => route(req, res, url, context, gone.signal))
      .catch((err: unknown) => sendError(res, err));
  }
}

/** What routes use: the API's options, and its caches. */
interface RouteContext extends HttpApiOptions {
  /** `GET /healthz`'s answer, asked of Temporal at most once a second. */
  health: () => Promise<[number, unknown]>;
  /** The workers' agents, asked at most every {@link AGENTS_CACHE_MS} (each page load of the chat lists them). */
  agents: () => Promise<AgentSummary[]>;
}

/** How long `GET /agents` reuses the workers' answer. */
export const AGENTS_CACHE_MS = 10_000;

/**
 * `GET /healthz`: whether the Temporal server answers (within 3 s), without authentication. The
 * answer is reused for a second: the route is open to anyone, and must not become a way to make
 * the API call Temporal as often as one likes.
 */
function cachedHealth(client: Client): () => Promise<[number, unknown]> {
  return reuseFor(1_000, async () => {
    try {
      await client.connection.withDeadline(Date.now() + 3_000, () => client.workflowService.getSystemInfo({}));
      return [200, { status: 'ok', temporal: { reachable: true, namespace: client.options.namespace } }];
    } catch (err) {
      return [
        503,
        {
          status: 'unavailable',
          temporal: { reachable: false, namespace: client.options.namespace, error: (err as Error).message },
        },
      ];
    }
  });
}

/** The workers' agents, reused for {@link AGENTS_CACHE_MS}; a failed listing is not kept. */
function cachedAgents(o: HttpApiOptions): () => Promise<AgentSummary[]> {
  return reuseFor(AGENTS_CACHE_MS, () => listAgents(o.client, { taskQueue: o.taskQueue }), true);
}

/** `load`, called at most once per `ms` (concurrent callers share one call); failures are forgotten at once when `forgetFailures`. */
function reuseFor<T>(ms: number, load: () => Promise<T>, forgetFailures = false): () => Promise<T> {
  let kept: { at: number; value: Promise<T> } | undefined;
  return () => {
    const now = Date.now();
    if (!kept || now - kept.at >= ms) {
      const value = load();
      const entry = { at: now, value };
      kept = entry;
      if (forgetFailures) value.catch(() => (kept === entry ? (kept = undefined) : undefined));
    }
    return kept.value;
  };
}

async function route(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  o: RouteContext,
  gone: AbortSignal,
): Promise<void> {
  // Checked before anything starts: a bad wait must not leave a run or conversation behind.
  const wait = waitMs(req, url);
  const bounded = <T>(work: () => Promise<T>) => boundedWait(o.client, gone, work, wait);
  const parts = pathParts(url.pathname);
  const method = req.method ?? 'GET';
  const id = parts[1];
  if (id !== undefined && (parts[0] === 'runs' || parts[0] === 'conversations')) {
    const problem = workflowIdProblem(id, `the ${parts[0] === 'runs' ? 'run' : 'conversation'} id`);
    if (problem) throw new HttpError(400, problem);
  }

  if (parts.length === 1 && parts[0] === 'healthz') {
    allow(method, 'GET');
    return sendJson(res, ...(await o.health()));
  }

  if (parts.length === 1 && parts[0] === 'assistant-with-tool') {
    allow(method, 'GET');
    const message = url.searchParams.get('message');
    if (!message?.trim())
      throw new HttpError(
        400,
        'missing the "message" query parameter, e.g. /assistant-with-tool?message=What%20is%202%2B2',
      );
    const agent = url.searchParams.get('agent');
    const input: AgentInput = agent === null ? { message } : { message, agent };
    checkRunInput(input);
    const handle = await startAgentRun(o.client, input, { taskQueue: o.taskQueue });
    const outcome = await bounded(() => runOutcome(handle));
    if (outcome === undefined)
      return sendStillRunning(res, `/runs/${encodeURIComponent(handle.workflowId)}`, { workflowId: handle.workflowId });
    if (outcome.status === 'failed')
      return sendJson(res, 502, { error: outcome.error, errorType: outcome.errorType, workflowId: outcome.workflowId });
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'x-workflow-id': outcome.workflowId });
    res.end(outcome.content ?? outcome.toolExecutions.map((e) => e.result).join('\n'));
    return;
  }

  if (parts.length === 0 && o.chatPage !== false) {
    allow(method, 'GET');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' });
    res.end(chatPageHtml({ workflowUrlPrefix: o.workflowUrlPrefix }));
    return;
  }

  if (parts.length === 1 && parts[0] === 'favicon.ico' && o.chatPage !== false) {
    res.writeHead(204).end();
    return;
  }

  if (parts.length === 1 && parts[0] === 'agents') {
    allow(method, 'GET');
    return sendJson(res, 200, { agents: await o.agents() });
  }

  if (parts[0] === 'runs') {
    if (parts.length === 1) {
      allow(method, 'POST');
      const body = await readJson(req);
      const input = body as unknown as AgentInput;
      checkRunInput(input);
      const handle = await startAgentRun(o.client, input, { taskQueue: o.taskQueue });
      if (wantsEventStream(req)) {
        res.setHeader('x-workflow-id', handle.workflowId);
        return sendEvents(
          res,
          streamEvents(o.client, handle.workflowId, { after: -1, signal: gone, until: (e) => isTurnEnd(e) }),
          gone,
        );
      }
      const outcome = await bounded(() => runOutcome(handle));
      if (outcome === undefined)
        return sendStillRunning(res, `/runs/${encodeURIComponent(handle.workflowId)}`, {
          workflowId: handle.workflowId,
        });
      return sendJson(res, outcome.status === 'failed' ? 502 : 200, outcomeJson(outcome));
    }
    if (parts.length === 2) {
      allow(method, 'GET');
      const status = await readStatus(o.client, id);
      if (status.kind !== 'run')
        throw new ClientError(
          'wrong_kind',
          `"${id}" is a conversation, not a one-shot run; see GET /conversations/${id}`,
          id,
        );
      return sendJson(res, 200, { ...status, ...(await readTranscript(o.client, id)) });
    }
    if (parts.length === 4 && parts[2] === 'approvals') return approve(req, res, o, id, parts[3], method);
    if (parts.length === 3 && parts[2] === 'events') return events(req, res, o, id, 'run', url, method, gone);
  }

  if (parts[0] === 'conversations' && parts.length >= 2) {
    if (parts.length === 3 && parts[2] === 'events') return events(req, res, o, id, 'conversation', url, method, gone);
    if (parts.length === 2) {
      allow(method, 'GET');
      const status = await readStatus(o.client, id);
      if (status.kind !== 'conversation')
        throw new ClientError('wrong_kind', `"${id}" is a one-shot run, not a conversation; see GET /runs/${id}`, id);
      return sendJson(res, 200, { ...status, ...(await readTranscript(o.client, id)) });
    }
    if (parts.length === 3 && parts[2] === 'messages') {
      allow(method, 'POST');
      const body = await readJson(req);
      const turn: TurnInput = { message: body.message as string };
      if (body.tools !== undefined) turn.tools = body.tools as string[];
      if (body.approvalTools !== undefined) turn.approvalTools = body.approvalTools as string[];
      // A named agent (body or ?agent=) applies when this message starts the conversation.
      const agent = body.agent ?? url.searchParams.get('agent') ?? undefined;
      const options: ConversationOptions =
        agent === undefined ? { ...o.conversationOptions } : { ...o.conversationOptions, agent: agent as string };
      try {
        if (wantsEventStream(req)) return await streamTurn(res, o, id, turn, options, gone);
        // Only the wait for the answer is bounded: the message itself is always delivered.
        const sent = await startMessage(o.client, id, turn, { taskQueue: o.taskQueue, options });
        const result = await bounded(() => sent.result());
        if (result === undefined)
          return sendStillRunning(res, `/conversations/${encodeURIComponent(id)}`, { conversationId: id });
        return sendJson(res, 200, result);
      } catch (err) {
        // The id is taken by a one-shot run: this request cannot create a conversation under it.
        if (err instanceof ClientError && err.kind === 'wrong_kind')
          throw new HttpError(409, err.message, err.errorType);
        throw err;
      }
    }
    if (parts.length === 4 && parts[2] === 'approvals') return approve(req, res, o, id, parts[3], method);
    if (parts.length === 3 && parts[2] === 'cancel') {
      allow(method, 'POST');
      return sendJson(res, 200, await cancelTurn(o.client, id));
    }
  }
  throw new HttpError(404, `no route ${method} ${url.pathname}`, 'Http.NotFound');
}

/** Whether the caller asked for Server-Sent Events. */
function wantsEventStream(req: IncomingMessage): boolean {
  return String(req.headers.accept ?? '').includes('text/event-stream');
}

/** `GET .../events`: the live events of a run or conversation, from `Last-Event-ID` or `?after=`. */
async function events(
  req: IncomingMessage,
  res: ServerResponse,
  o: HttpApiOptions,
  id: string,
  kind: 'run' | 'conversation',
  url: URL,
  method: string,
  gone: AbortSignal,
): Promise<void> {
  allow(method, 'GET');
  const raw = url.searchParams.get('after') ?? (req.headers['last-event-id'] as string | undefined);
  let after: number | undefined;
  if (raw !== undefined && raw !== null) {
    if (!/^-?\d+$/.test(raw.trim()) || Number(raw) < -1)
      throw new HttpError(
        400,
        `"after" (or Last-Event-ID) must be an event offset (a whole number, or -1 for the beginning), got "${raw}"`,
      );
    after = Number(raw);
  }
  const found = await lookupWorkflow(o.client, id);
  if (!found) throw new ClientError('not_found', `no ${kind === 'run' ? 'run' : 'conversation'} "${id}" exists`, id);
  if (found.kind !== kind) {
    const other = found.kind === 'run' ? 'runs' : 'conversations';
    throw new ClientError(
      'wrong_kind',
      `"${id}" is ${describeKind(found)}, not a ${kind === 'run' ? 'one-shot run' : 'conversation'}${found.kind === 'other' ? '' : `; see GET /${other}/${id}/events`}`,
      id,
    );
  }
  await sendEvents(res, streamEvents(o.client, id, { after, signal: gone }), gone);
}

/** `POST /conversations/:id/messages` with `Accept: text/event-stream`: sends the message and streams its turn. */
async function streamTurn(
  res: ServerResponse,
  o: HttpApiOptions,
  id: string,
  turn: TurnInput,
  options: ConversationOptions,
  gone: AbortSignal,
): Promise<void> {
  const after = await eventsPosition(o.client, id);
  const sent = await startMessage(o.client, id, turn, { taskQueue: o.taskQueue, options });
  // The turn's number is known when its result arrives; its events may end before or after that.
  const stop = new AbortController();
  const ended = new Set<number>();
  let ours: number | undefined;
  sent.result().then(
    (result) => {
      ours = result.turn;
      if (ended.has(ours)) stop.abort();
    },
    () => stop.abort(),
  );
  const stream = streamEvents(o.client, id, {
    after,
    signal: AbortSignal.any([gone, stop.signal]),
    until: (e) => {
      if (isTurnEnd(e)) ended.add(e.turn);
      return ours !== undefined && isTurnEnd(e, ours);
    },
  });
  await sendEvents(res, stream, gone);
}

/**
 * Writes events as Server-Sent Events (`id:` = offset, `data:` = the event's JSON), with a
 * comment every 15 s so proxies keep the connection open. An error after the stream has started
 * (e.g. events no longer kept) is sent as an `error` event before the stream ends.
 */
async function sendEvents(res: ServerResponse, stream: AsyncGenerator<AgentEvent>, gone: AbortSignal): Promise<void> {
  // Errors before the first event (the events are no longer kept, say) become ordinary HTTP
  // errors; a stream with nothing to send yet still answers at once, so the client knows it is
  // connected rather than left waiting for headers.
  const next = stream.next();
  const first = await Promise.race([
    next,
    new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), FIRST_EVENT_WAIT_MS)),
  ]);
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.write(': durable-agents events\n\n');
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
  const send = (e: AgentEvent) => res.write(`id: ${e.offset}\ndata: ${JSON.stringify(e)}\n\n`);
  try {
    const opening = first ?? (await next);
    if (!opening.done) send(opening.value);
    if (!opening.done) for await (const e of stream) send(e);
    // The stream is complete (the turn ended, or the workflow closed): say so, so that an
    // EventSource does not reconnect.
    if (!gone.aborted) res.write('event: end\ndata: {}\n\n');
  } catch (err) {
    if (!gone.aborted) {
      const body =
        err instanceof ClientError
          ? { error: err.message, errorType: err.errorType }
          : { error: err instanceof Error ? err.message : String(err), errorType: 'Http.InternalError' };
      res.write(`event: error\ndata: ${JSON.stringify(body)}\n\n`);
    }
  } finally {
    clearInterval(keepAlive);
    res.end();
  }
}

async function approve(
  req: IncomingMessage,
  res: ServerResponse,
  o: HttpApiOptions,
  id: string,
  callId: string,
  method: string,
): Promise<void> {
  allow(method, 'POST');
  const body = await readJson(req);
  if (typeof body.approve !== 'boolean') throw new HttpError(400, '"approve" must be true or false');
  if (body.reason !== undefined && typeof body.reason !== 'string')
    throw new HttpError(400, '"reason" must be a string');
  const decision = { callId, approve: body.approve, ...(body.reason ? { reason: body.reason as string } : {}) };
  sendJson(res, 200, await decideApproval(o.client, id, decision));
}

/** The decoded path segments; a malformed percent-escape is the client's mistake (400), not ours. */
function pathParts(pathname: string): string[] {
  try {
    return pathname.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    throw new HttpError(400, `the path ${pathname} has a malformed percent-escape`);
  }
}

function checkRunInput(input: unknown): void {
  const problems = validateAgentInput(input);
  if (problems.length) throw new HttpError(400, problems.join('; '));
}

/** The longest a request may ask to wait (`?wait=`, `Prefer: wait=`); beyond, it should follow the run instead. */
export const MAX_WAIT_MS = 60 * 60_000;

/** How long the caller wants to wait: `?wait=30s`, or `Prefer: wait=30` (seconds, RFC 7240). Unset: until done. */
function waitMs(req: IncomingMessage, url: URL): number | undefined {
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
async function boundedWait<T>(
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

function sendStillRunning(res: ServerResponse, location: string, ids: Record<string, string>): void {
  res.setHeader('location', location);
  sendJson(res, 202, {
    ...ids,
    status: 'running',
    location,
    error: `not finished within the requested wait; it goes on: GET ${location}`,
    errorType: 'Client.StillRunning',
  });
}

function allow(method: string, expected: string): void {
  if (method !== expected) throw new HttpError(405, `use ${expected} here, not ${method}`, 'Http.MethodNotAllowed');
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES)
      throw new HttpError(413, `the request body is larger than ${MAX_BODY_BYTES} bytes`, 'Http.PayloadTooLarge');
    chunks.push(chunk as Buffer);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'the request body must be JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new HttpError(400, 'the request body must be a JSON object');
  return body as Record<string, unknown>;
}

function sendError(res: ServerResponse, err: unknown): void {
  if (err instanceof HttpError) return sendJson(res, err.status, { error: err.message, errorType: err.errorType });
  if (err instanceof ClientError)
    return sendJson(res, STATUS_OF[err.kind], { error: err.message, errorType: err.errorType });
  sendJson(res, 500, { error: err instanceof Error ? err.message : String(err), errorType: 'Http.InternalError' });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}
