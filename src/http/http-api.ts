import { setMaxListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import { listAgents } from '../client/list-agents';
import type { AgentSummary } from '../contracts/activity-interface';
import { isRootAgentPath, ROOT_CARD_PATH } from '../a2a/request-edge';
import {
  accessChecker,
  requestScope,
  requestUrl,
  sendBadTarget,
  tokenMatches,
  tokenScope,
  TOKEN_COOKIE,
} from './access';
import type { A2AGrpcService } from '../a2a/a2a-grpc';
import { signedDelivery } from './event-routes';
import { packageVersion } from '../connection/package-version';
import { MAX_MESSAGE_BODY_BYTES, sendError } from './http-io';
import type { HttpApiOptions } from './http-api-options';
import { dispatch, type RouteContext } from './route-table';
import { ROUTES } from './routes';

export { MAX_BODY_BYTES, MAX_MESSAGE_BODY_BYTES, MAX_WAIT_MS } from './http-io';

export type { HttpApiOptions } from './http-api-options';

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

/** {@link httpApiHandler}'s request handler, and the A2A gRPC service of the same agents. */
export interface HttpApiHandler {
  (req: IncomingMessage, res: ServerResponse): void;
  /**
   * A2A's gRPC binding over the same agents and tasks, behind the same tokens whether or not
   * `a2a.grpc` (where the cards declare it) is set: add it to a `@grpc/grpc-js` server (`A2AService` of
   * `@a2a-js/sdk/server/grpc`). `serve` and `durable-agents a2a` do, with `AGENT_A2A_GRPC_PORT`.
   */
  a2aGrpcService(): Promise<A2AGrpcService>;
}

/** The API's request handler, for mounting in a server of your own (see {@link createHttpApi}). */
export function httpApiHandler(options: HttpApiOptions): HttpApiHandler {
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
  const context = routeContext(options, checkAccess.failedCredential);
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    // Whatever a request holds, it is answered (4xx for the malformed) and the server goes on.
    try {
      const url = requestUrl(req);
      if (!url) return sendBadTarget(res);
      if (tokenToCookie(req, res, url, access.tokens ?? [])) return;
      if (checkAccess(req, res) === 'answered') return;
      serve(req, res, url, context);
    } catch (err) {
      sendError(res, err);
    }
  };
  return Object.assign(handler, { a2aGrpcService: async () => (await context.a2aHandler()).grpcService() });
}

/** What every route shares: the options, the caches, and the A2A handler loaded at its first use. */
function routeContext(options: HttpApiOptions, failedCredential: RouteContext['failedCredential']): RouteContext {
  const access = options.access ?? {};
  const context: RouteContext = {
    ...options,
    health: cachedHealth(options.client),
    agents: cachedAgents(options),
    failedCredential,
    // The A2A SDK and Express load only when an A2A route is asked for: a server (or a test)
    // that never serves A2A does not pay for them at start.
    a2aHandler: once(async () =>
      (await import('../a2a/a2a-server')).a2aHandler({
        client: options.client,
        taskQueue: options.taskQueue,
        agents: () => context.agents(),
        bearer: (access.tokens?.length ?? 0) > 0,
        version: packageVersion(),
        maxBodyBytes: MAX_MESSAGE_BODY_BYTES,
        ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
        ...options.a2a,
        scope: (req: IncomingMessage) => requestScope(req, access),
        // gRPC calls behind the same tokens, whether or not the cards declare the binding.
        authorizeGrpc: (token: string | undefined) => tokenScope(token, access),
        ...(options.conversationOptions ? { conversationOptions: options.conversationOptions } : {}),
      }),
    ),
  };
  return context;
}

/**
 * The chat page opened as /?access_token=...: the token becomes an HttpOnly cookie (so the page's
 * fetches and EventSource carry it; EventSource cannot send headers) and leaves the URL. True
 * when it answered so.
 */
function tokenToCookie(req: IncomingMessage, res: ServerResponse, url: URL, tokens: readonly string[]): boolean {
  const offered = url.searchParams.get('access_token');
  if (tokens.length === 0 || url.pathname !== '/' || req.method !== 'GET' || offered === null) return false;
  if (!tokenMatches(offered, tokens)) return false;
  res.writeHead(303, {
    location: '/',
    'set-cookie': `${TOKEN_COOKIE}=${encodeURIComponent(offered)}; HttpOnly; SameSite=Strict; Path=/`,
    'cache-control': 'no-store',
  });
  res.end();
  return true;
}

/** An admitted request: A2A's to its handler, the rest by the route table. */
function serve(req: IncomingMessage, res: ServerResponse, url: URL, context: RouteContext): void {
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
  // Whom the request acts for: a tenant's token works in its tenant's id space only.
  const scope = requestScope(req, context.access ?? {});
  context.client
    .withAbortSignal(gone.signal, () => dispatch(ROUTES, { req, res, url, o: context, gone: gone.signal, scope }))
    .catch((err: unknown) => sendError(res, err));
}

/** Whether a path is one of the A2A routes (`/a2a/<agent>/...`). */
function isA2aPath(path: string): boolean {
  return /^\/a2a\/[^/]/.test(path);
}

/** Whether a path is an A2A Agent Card (`/a2a/<agent>/.well-known/agent-card.json`), which anyone may read. */
function isAgentCardPath(path: string): boolean {
  return path === ROOT_CARD_PATH || /^\/a2a\/[^/]+\/\.well-known\/agent-card\.json$/.test(path);
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
