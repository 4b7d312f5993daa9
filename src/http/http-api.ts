import { setMaxListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import { messageIdProblem, workflowIdProblem, type AgentInput, type ConversationOptions } from '../core';
import { outcomeJson } from '../client/outcome-json';
import { decideApproval, readStatus, readTranscript } from '../client/workflow-controls';
import { ClientError } from '../client/client-error';
import { startMessage, stopTurn, type MessageRequest } from '../client/conversations';
import { isTurnEnd, streamEvents } from '../client/event-stream';
import { listAgents } from '../client/list-agents';
import type { AgentSummary } from '../contracts/activity-interface';
import { runOutcome, startAgentRun } from '../client/run-agent';
import { chatPageHtml } from './chat-page';
import type { A2AServerSettings } from './server-settings';
import { isRootAgentPath, ROOT_CARD_PATH } from '../a2a/request-edge';
import {
  accessChecker,
  requestScope,
  requestUrl,
  sendBadTarget,
  tokenMatches,
  TOKEN_COOKIE,
  type HttpAccessOptions,
} from './access';
import { listRoute } from './list-routes';
import { tenantRoute } from './tenant-routes';
import { memoryRoute } from './memory-routes';
import { scopedWorkflowId } from '../client/tenant-scope';
import { events, sendEvents, streamTurn, wantsEventStream } from './event-stream-routes';
import { deliverEventRoute, signedDelivery } from './event-routes';
import { scheduleRoute } from './schedule-routes';
import { deploymentRoute } from './deployment-routes';
import { chatRoute } from './use-chat/chat-routes';
import { branchRoute } from './branch-routes';
import { agUiRoute } from './ag-ui/ag-ui-routes';
import { packageVersion } from '../connection/package-version';
import {
  ACCEPT_WITHIN_MS,
  allow,
  boundedWait,
  busyOf,
  checkRunInput,
  HttpError,
  pathParts,
  imagesOf,
  MAX_MESSAGE_BODY_BYTES,
  messageExtrasOf,
  readJson,
  sendError,
  sendJson,
  sendStillRunning,
  tenantOf,
  waitMs,
} from './http-io';

export { MAX_BODY_BYTES, MAX_MESSAGE_BODY_BYTES, MAX_WAIT_MS } from './http-io';

/** Options of {@link createHttpApi} and {@link httpApiHandler}. */
export interface HttpApiOptions {
  client: Client;
  taskQueue: string;
  /** Where the tenants' ledgers run, as the workers' `AGENT_FLEET_TASK_QUEUE` (default `durable-agents-fleet`). */
  fleetTaskQueue?: string;
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
  /**
   * The `/deployments` routes (Worker Versioning): `'read'` (default) serves a deployment's status
   * and `drain-wait`; `'manage'` also lets token holders promote and ramp builds.
   */
  deployments?: 'read' | 'manage';
  /**
   * The base URL clients reach this server at (`https://agents.example.com`) when it is behind a
   * proxy: the A2A cards advertise it (`AGENT_PUBLIC_URL`). Default: the request's own host.
   */
  publicUrl?: string;
  /** How the agents are served over A2A: the default agent (the root's), a cap on blocking sends. */
  a2a?: A2AServerSettings;
}

/**
 * The HTTP API. Errors are JSON `{ "error", "errorType" }`; docs/http-api.md lists every status.
 *
 *   GET  /healthz                               whether Temporal answers (no token needed)
 *   GET  /                                      the web chat page (unless `chatPage: false`; with tokens, open it as /?access_token=...)
 *   GET  /assistant-with-tool?message=...        one agent run (&agent=name); the answer as text
 *   GET  /agents                                the workers' named agents and their tools
 *   POST /runs                                  {"message", "images"?, ...run options} → the run result (JSON), or its events (Accept: text/event-stream)
 *   GET  /runs/:id                              a run's status and messages
 *   POST /runs/:id/approvals/:callId            {"approve": true|false, "reason"?}
 *   POST /conversations/:id/messages            {"message", "images"?, "tools"?, "approvalTools"?, "agent"?, "busy"?, "fork"?} → the turn result
 *   GET  /conversations/:id                     a conversation's status and transcript
 *   POST /conversations/:id/approvals/:callId   {"approve": true|false, "reason"?}
 *   POST /conversations/:id/cancel              cancels the running turn; answers once it has ended
 *   GET /conversations/:id/branches, POST .../branch, POST .../fork   branches (see `branch-routes.ts`); GET /conversations/:id?branch=: one
 *   GET  /runs/:id/events, /conversations/:id/events   the live events (Server-Sent Events)
 *   POST /runs/:id/events/:name, /conversations/:id/events/:name   deliver an event (the body: its JSON payload) to a wait_for_event; signed webhooks with `access.webhookSecret`
 *   POST /api/chat, GET /api/chat/:id/stream, GET /api/chat/:id/messages   the AI SDK's chat protocol (useChat; see use-chat/chat-routes.ts)
 *   POST /ag-ui, POST /ag-ui/:agent           AG-UI runs (RunAgentInput; see ag-ui/ag-ui-routes.ts)
 *   /a2a/:agent/...                             the named agents as A2A agents (see a2a/a2a-server.ts)
 *   GET  /.well-known/agent-card.json           the default agent's A2A card (`a2a.defaultAgent`, or the only agent): it is served
 *        at the root too (POST / JSON-RPC, /message:send, /tasks/..., as in a2a/request-edge.ts)
 *   GET|POST /schedules, GET|DELETE /schedules/:id, POST /schedules/:id/pause|unpause|trigger   schedules (see `schedule-routes.ts`)
 *   GET /deployments/:name, POST /deployments/:name/promote|ramp, POST .../builds/:buildId/drain-wait   Worker Versioning (see `deployment-routes.ts`)
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
  const access = options.access ?? {};
  // The health check and the A2A Agent Cards are public (a load balancer, and an A2A client
  // before it knows how to authenticate: the card says); signed webhook deliveries skip the token,
  // as their route checks the signature instead.
  const checkAccess = accessChecker(access, (path, req) =>
    path === '/healthz' || (req.method === 'GET' && isAgentCardPath(path))
      ? 'public'
      : signedDelivery(path, req, access)
        ? 'signed'
        : false,
  );
  const tokens = options.access?.tokens ?? [];
  const context: RouteContext = {
    ...options,
    health: cachedHealth(options.client),
    agents: cachedAgents(options),
    failedCredential: checkAccess.failedCredential,
    // The A2A SDK and Express load only when an A2A route is asked for: a server (or a test)
    // that never serves A2A does not pay for them at start.
    a2aHandler: once(async () =>
      (await import('../a2a/a2a-server')).a2aHandler({
        client: options.client,
        taskQueue: options.taskQueue,
        agents: () => context.agents(),
        bearer: tokens.length > 0,
        version: packageVersion(),
        maxBodyBytes: MAX_MESSAGE_BODY_BYTES,
        ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
        ...options.a2a,
        scope: (req: IncomingMessage) => requestScope(req, access),
        ...(options.conversationOptions ? { conversationOptions: options.conversationOptions } : {}),
      }),
    ),
  };
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
    // A2A requests are not bound to their connection: a non-blocking send (and a stream its client
    // left) answers at once while its task goes on in this process, reading and saving the task
    // in Temporal, which the aborted signal of a closed response would cancel.
    if (isA2aPath(url.pathname) || isRootAgentPath(req.method, url.pathname)) {
      context
        .a2aHandler()
        .then((a2a) => a2a(req, res))
        .catch((err: unknown) => sendError(res, err));
      return;
    }
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

/**
 * The request's `Idempotency-Key` (RFC draft "The Idempotency-Key HTTP Header Field"): a request
 * sent again with the same key (a client that retried after a timeout) does not act twice.
 */
function idempotencyKey(req: IncomingMessage): string | undefined {
  const key = req.headers['idempotency-key'];
  if (key === undefined) return undefined;
  const value = Array.isArray(key) ? key[0] : key;
  const problem = messageIdProblem(value);
  if (problem) throw new HttpError(400, `the Idempotency-Key header ${problem.replace(/^"messageId" /, '')}`);
  return value;
}

/** 202 for a message no worker accepted now: it is queued, durably, and answered once a worker runs the conversation. */
function sendQueued(res: ServerResponse, id: string, messageId: string): void {
  const location = `/conversations/${encodeURIComponent(id)}`;
  res.setHeader('location', location);
  sendJson(res, 202, {
    conversationId: id,
    messageId,
    status: 'queued',
    location,
    error: `no worker accepted the message within ${ACCEPT_WITHIN_MS / 1000} s (is a worker running on the conversation's task queue?): it is queued, durably, and answered once a worker runs the conversation; follow it at GET ${location}/events`,
    errorType: 'Client.Queued',
  });
}

/** Whether a path is one of the A2A routes (`/a2a/<agent>/...`). */
function isA2aPath(path: string): boolean {
  return /^\/a2a\/[^/]/.test(path);
}

/** The default agent's A2A card at the server's root, where A2A clients and the A2A TCK look first. */

/** Whether a path is an A2A Agent Card (`/a2a/<agent>/.well-known/agent-card.json`), which anyone may read. */
function isAgentCardPath(path: string): boolean {
  return path === ROOT_CARD_PATH || /^\/a2a\/[^/]+\/\.well-known\/agent-card\.json$/.test(path);
}

/** What routes use: the API's options, and its caches. */
interface RouteContext extends HttpApiOptions {
  /** `GET /healthz`'s answer, asked of Temporal at most once a second. */
  health: () => Promise<[number, unknown]>;
  /** The workers' agents, asked at most every {@link AGENTS_CACHE_MS} (each page load of the chat lists them). */
  agents: () => Promise<AgentSummary[]>;
  /** Counts a wrong webhook signature against its address (see `AccessChecker.failedCredential`). */
  failedCredential: (req: IncomingMessage) => number;
  /** The A2A routes (`/a2a/<agent>/...`), loaded on their first request. */
  a2aHandler: () => Promise<(req: IncomingMessage, res: ServerResponse) => void>;
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

/** `load`, called once; a failure is forgotten, so the next call tries again. */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let kept: Promise<T> | undefined;
  return () => {
    kept ??= load().catch((err: unknown) => {
      kept = undefined;
      throw err;
    });
    return kept;
  };
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
  // Whom the request acts for: a tenant's token works in its tenant's id space only.
  const scope = requestScope(req, o.access ?? {});
  if (parts[1] !== undefined && (parts[0] === 'runs' || parts[0] === 'conversations')) {
    const what = parts[0] === 'runs' ? 'run' : 'conversation';
    const problem = workflowIdProblem(parts[1], `the ${what} id`);
    if (problem) throw new HttpError(400, problem);
    parts[1] = await scopedWorkflowId(o.client, scope, parts[1], what);
  }
  const id = parts[1];
  if (parts[0] === 'api' && parts[1] === 'chat') {
    const chatId = parts[2];
    const problem = chatId === undefined ? undefined : workflowIdProblem(chatId, 'the chat id');
    if (problem) throw new HttpError(400, problem);
    if (chatId !== undefined) parts[2] = await scopedWorkflowId(o.client, scope, chatId, 'conversation');
    return chatRoute(req, res, o, parts, method, gone, scope);
  }
  if (parts[0] === 'ag-ui') return agUiRoute(req, res, o, parts, method, gone, scope);

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
    const tenant = tenantOf(scope, undefined);
    const input: AgentInput = {
      message,
      ...(agent !== null ? { agent } : {}),
      ...(tenant !== undefined ? { tenant } : {}),
    };
    checkRunInput(input);
    const handle = await startAgentRun(o.client, input, {
      taskQueue: o.taskQueue,
      ...(scope.tenant !== undefined ? { idSpace: scope.tenant } : {}),
    });
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

  if ((parts[0] === 'runs' || parts[0] === 'conversations') && parts.length === 1 && method === 'GET')
    return sendJson(res, 200, await listRoute(o.client, url, scope, parts[0]));

  if (parts[0] === 'runs') {
    if (parts.length === 1) {
      allow(method, 'POST');
      const { images: _images, ...body } = await readJson(req, MAX_MESSAGE_BODY_BYTES);
      const images = imagesOf({ images: _images });
      const tenant = tenantOf(scope, body.tenant);
      const input = (tenant === undefined ? body : { ...body, tenant }) as unknown as AgentInput;
      checkRunInput(input);
      // A run asked for again with the same key is the same run: its outcome answers both.
      const key = idempotencyKey(req);
      const handle = await startAgentRun(o.client, images ? { ...input, images } : input, {
        taskQueue: o.taskQueue,
        ...(key !== undefined ? { idempotencyKey: key } : {}),
        // A tenant's runs are made in its id space: its Idempotency-Key names its own run only.
        ...(scope.tenant !== undefined ? { idSpace: scope.tenant } : {}),
      });
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
    if (parts.length === 3 && parts[2] === 'events') return events(req, res, o.client, id, 'run', url, method, gone);
    if (parts.length === 4 && parts[2] === 'events') return deliverEventRoute(req, res, o, id, parts[3], method);
  }

  if (parts[0] === 'schedules') return scheduleRoute(req, res, o.client, o.taskQueue, parts, method, scope);
  if (parts[0] === 'tenants') return tenantRoute(req, res, o.client, o, parts, method, scope);
  if (parts[0] === 'memory') return memoryRoute(req, res, o.client, o.taskQueue, parts, method, scope);
  // Worker Versioning is the fleet's, not a tenant's.
  if (parts[0] === 'deployments' && scope.tenant !== undefined)
    throw new HttpError(403, 'deployments are managed with an admin token (one without a tenant)', 'Http.Forbidden');
  if (parts[0] === 'deployments' && parts.length >= 2)
    return deploymentRoute(req, res, o.client, parts, method, url, o.deployments === 'manage', gone);

  if (parts[0] === 'conversations' && parts.length >= 2) {
    if (parts.length === 3 && parts[2] === 'events')
      return events(req, res, o.client, id, 'conversation', url, method, gone);
    if (parts.length === 4 && parts[2] === 'events') return deliverEventRoute(req, res, o, id, parts[3], method);
    if (parts.length === 2) {
      allow(method, 'GET');
      const status = await readStatus(o.client, id);
      if (status.kind !== 'conversation')
        throw new ClientError('wrong_kind', `"${id}" is a one-shot run, not a conversation; see GET /runs/${id}`, id);
      const branch = url.searchParams.get('branch') ?? undefined;
      return sendJson(res, 200, {
        ...status,
        ...(await readTranscript(o.client, id, branch === undefined ? {} : { branch })),
        ...(branch !== undefined ? { branch } : {}),
      });
    }
    if (parts.length === 3 && (parts[2] === 'branches' || parts[2] === 'branch' || parts[2] === 'fork'))
      return branchRoute(req, res, o, id, parts[2], method, scope);
    if (parts.length === 3 && parts[2] === 'messages') {
      allow(method, 'POST');
      const body = await readJson(req, MAX_MESSAGE_BODY_BYTES);
      const turn: MessageRequest = { message: body.message as string };
      // A message sent again with the same key is the same message: answered once.
      const key = idempotencyKey(req);
      if (key !== undefined) turn.messageId = key;
      const images = imagesOf(body);
      if (images) turn.images = images;
      // The turn's tools; on the message that starts the conversation, its tools and user too.
      const { user, tools, approvalTools } = messageExtrasOf(body);
      if (tools !== undefined) turn.tools = tools;
      if (approvalTools !== undefined) turn.approvalTools = approvalTools;
      if (body.busy !== undefined) turn.busy = busyOf(body.busy);
      // In place of an earlier user message: the conversation forks there (see branch-routes.ts).
      if (body.fork !== undefined) turn.fork = body.fork as MessageRequest['fork'];
      // A named agent (body or ?agent=) applies when this message starts the conversation.
      const agent = body.agent ?? url.searchParams.get('agent') ?? undefined;
      const tenant = tenantOf(scope, body.tenant);
      const options: ConversationOptions = {
        ...o.conversationOptions,
        ...(agent !== undefined ? { agent: agent as string } : {}),
        ...(tenant !== undefined ? { tenant } : {}),
        ...(user !== undefined ? { user } : {}),
        ...(tools !== undefined ? { tools } : {}),
        ...(approvalTools !== undefined ? { approvalTools } : {}),
      };
      try {
        if (wantsEventStream(req)) return await streamTurn(res, o.client, o.taskQueue, id, turn, options, gone);
        // Only the wait for the answer is bounded: the message itself is always kept, queued
        // durably when no worker accepts it now (none runs, or the conversation's died).
        const sent = await startMessage(
          o.client,
          id,
          turn,
          { taskQueue: o.taskQueue, options },
          { acceptWithinMs: ACCEPT_WITHIN_MS, signal: gone },
        );
        if (sent.queued) return sendQueued(res, id, sent.messageId);
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
      // Answers once the turn has ended (a Stop button may send the next message right after).
      // A Stop is idempotent: when no turn runs (another Stop ended it), there is nothing to do.
      const stopped = await stopTurn(o.client, id);
      if (!stopped) {
        res.writeHead(204).end();
        return;
      }
      return sendJson(res, 200, stopped);
    }
  }
  throw new HttpError(404, `no route ${method} ${url.pathname}`, 'Http.NotFound');
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
