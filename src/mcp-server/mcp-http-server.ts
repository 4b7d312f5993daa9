import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  createMcpHandler,
  isLegacyRequest,
  type McpHttpHandler,
  type McpRequestContext,
} from '@modelcontextprotocol/server';
import { toNodeHandler, toWebRequest, type NodeMcpRequestHandler } from '@modelcontextprotocol/node';
import { accessChecker, requestScope, type HttpAccessOptions } from '../http/access';
import type { TenantScope } from '../core/fleet/tenants';
import { createAgentMcpServer, type AgentMcpServerOptions } from './agent-mcp-server';
import { createModernAgentMcpServer, requestStateCodec } from './modern/modern-server';
import { SessionEventStore } from './session-event-store';
import { ListenedResources } from './modern/listened-resources';
import { listenedTaskIds, listenToTasks, type ListenStreams } from './modern/listened-tasks';
import { ExtensionTasks } from './modern/extension-tasks';

/** How many MCP sessions a server keeps at once; the least recently used goes beyond. */
export const MAX_MCP_SESSIONS = 1000;

/** How long a 2025-11-25 client waits before it reconnects a stream that closed (the `retry` field). */
const SSE_RETRY_MS = 1000;

/** How long a session may stay unused before it is closed (its client starts a new one). */
const SESSION_IDLE_MS = 30 * 60_000;

/** The 2026-07-28 side for one tenant: its handler, and the resources its listen streams follow. */
interface ModernEndpoint {
  handler: McpHttpHandler;
  serve: NodeMcpRequestHandler;
  listened: ListenedResources;
  /** Its listen streams that follow tasks (ours; the SDK's follow the rest). */
  taskStreams: ListenStreams;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  /** The tenant of the token that began it: the session acts for it, and only its token may use it. */
  tenant?: string;
  close(): Promise<void>;
  used: number;
}

/**
 * The agents as an MCP server over streamable HTTP, at `/mcp`, behind the HTTP API's access rules
 * (tokens, CORS, rate limit), in both revisions a client may speak. A 2026-07-28 request (one that
 * carries the revision's `_meta` envelope) is answered statelessly by a server built for it (the
 * official SDK's v2 `createMcpHandler`; modern/); anything else is 2025-11-25, sessionful, as
 * follows. On 2025-11-25, a client's session (its log level, its resource subscriptions, its
 * server-sent event stream) lives in this process; what it starts lives in Temporal, so a client
 * whose session this server no longer knows (a restart, another replica) starts a new session and
 * finds its runs, conversations and tasks where they were. Every request is answered, whatever it
 * holds, and none ends the server. Behind a load balancer, route a session's requests (its
 * `Mcp-Session-Id` header) to one replica.
 */
export function createMcpHttpServer(options: AgentMcpServerOptions, access: HttpAccessOptions): Server {
  const checkAccess = accessChecker(access);
  const sessions = new Map<string, Session>();
  const codec = requestStateCodec(options.requestStateKey);
  // A handler per tenant (its listen streams hear of its own runs only); each request's server is
  // built for the tenant the request acts for (its authInfo).
  const moderns = new Map<string, ModernEndpoint>();
  const modernFor = (scope: TenantScope): ModernEndpoint => {
    const key = scope.tenant ?? '';
    let endpoint = moderns.get(key);
    if (!endpoint) {
      const tasks = new ExtensionTasks();
      const handler: McpHttpHandler = createMcpHandler(
        (ctx: McpRequestContext) =>
          createModernAgentMcpServer(
            { ...options, scope: ctx.authInfo?.extra?.scope as TenantScope | undefined },
            codec,
            handler.notify,
            tasks,
          ),
        { legacy: 'reject' },
      );
      endpoint = {
        handler,
        serve: toNodeHandler(handler),
        listened: new ListenedResources(options.client, scope, (uri) => handler.notify.resourceUpdated(uri)),
        taskStreams: { bus: handler.bus, open: new Set() },
      };
      moderns.set(key, endpoint);
    }
    return endpoint;
  };
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const s of sessions.values()) if (now - s.used > SESSION_IDLE_MS) void s.close();
  }, 60_000);
  sweep.unref();
  const server = createServer((req, res) => {
    try {
      if (checkAccess(req, res) === 'allowed')
        handleHttp(req, res, { ...options, scope: requestScope(req, access) }, sessions, modernFor).catch(
          (err: unknown) => internalError(res, err),
        );
    } catch (err) {
      internalError(res, err);
    }
  });
  server.on('close', () => {
    clearInterval(sweep);
    for (const s of sessions.values()) void s.close();
    for (const endpoint of moderns.values()) {
      endpoint.listened.close();
      for (const close of endpoint.taskStreams.open) close();
      void endpoint.handler.close();
    }
  });
  return server;
}

function internalError(res: ServerResponse, err: unknown): void {
  if (res.headersSent) return void res.end();
  res.writeHead(500, { 'content-type': 'application/json' }).end(
    JSON.stringify({
      jsonrpc: '2.0',
      error: { code: -32603, message: (err as Error)?.message ?? String(err) },
      id: null,
    }),
  );
}

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/**
 * One HTTP request: a 2026-07-28 one to the stateless server; a 2025-11-25 one to the session it
 * names, or (an `initialize` without a session) to a new session with a server and transport of
 * its own.
 */
async function handleHttp(
  req: IncomingMessage,
  res: ServerResponse,
  options: AgentMcpServerOptions,
  sessions: Map<string, Session>,
  modernFor: (scope: TenantScope) => ModernEndpoint,
): Promise<void> {
  const path = (req.url ?? '').split('?')[0];
  if (path !== '/mcp') {
    res
      .writeHead(404, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: 'not found: the MCP endpoint is /mcp' }));
    return;
  }
  let body: unknown;
  if (req.method === 'POST') {
    // The body is read once, here; both revisions' transports take it parsed.
    const request = await toWebRequest(req).catch((err: { status?: number; message?: string }) => err);
    if (!(request instanceof Request))
      return jsonRpcError(res, request.status ?? 400, -32600, `cannot read the request: ${request.message}`);
    const text = await request.text();
    try {
      body = JSON.parse(text);
    } catch {
      return jsonRpcError(res, 400, -32700, 'Parse error: the body is not JSON');
    }
    if (!(await isLegacyRequest(request, body))) {
      // The tenant this request acts for, to the server built for it (see createMcpHttpServer).
      const tenant = options.scope?.tenant;
      (req as IncomingMessage & { auth?: unknown }).auth = {
        token: '',
        clientId: 'durable-agents',
        scopes: [],
        extra: { scope: options.scope ?? {}, ...(tenant !== undefined ? { tenant } : {}) },
      };
      const endpoint = modernFor(options.scope ?? {});
      endpoint.listened.follow(body, res);
      // A listen that follows tasks (the tasks extension) is ours: the SDK's carries no task status.
      const tasks = listenedTaskIds(body);
      if (tasks) return listenToTasks(body as object, tasks, req, res, options, endpoint.taskStreams);
      return endpoint.serve(req, res, body);
    }
  }
  const named = req.headers['mcp-session-id'];
  const id = Array.isArray(named) ? named[0] : named;
  if (id) {
    const session = sessions.get(id);
    // Unknown: this server restarted, or the session ended; the client starts a new one (the spec's 404).
    // Unknown, or begun by another tenant's token (to which it does not exist).
    if (!session || session.tenant !== options.scope?.tenant)
      return jsonRpcError(res, 404, -32001, `no session ${id} here: start a new one with initialize`);
    session.used = Date.now();
    sessions.delete(id);
    sessions.set(id, session); // the most recently used last
    return session.transport.handleRequest(req, res, body);
  }
  if (req.method !== 'POST')
    return jsonRpcError(res, 400, -32000, 'no Mcp-Session-Id: start a session with an initialize request (POST)');
  // A new session: the transport checks that the request is an initialize.
  const mcp = createAgentMcpServer(options);
  let closing: Promise<void> | undefined;
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    // A client whose stream broke comes back with Last-Event-ID and gets what it missed; told to
    // wait this long before it does.
    eventStore: new SessionEventStore(),
    retryInterval: SSE_RETRY_MS,
    onsessioninitialized: (sessionId) => {
      const close = () =>
        (closing ??=
          (sessions.delete(sessionId),
          Promise.all([transport.close(), mcp.close()]).then(
            () => undefined,
            () => undefined,
          )));
      sessions.set(sessionId, { transport, close, used: Date.now(), tenant: options.scope?.tenant });
      while (sessions.size > MAX_MCP_SESSIONS) void sessions.values().next().value!.close();
    },
    onsessionclosed: (sessionId) => void sessions.get(sessionId)?.close(),
  });
  transport.onclose = () => {
    if (transport.sessionId) sessions.delete(transport.sessionId);
  };
  await mcp.connect(transport);
  await transport.handleRequest(req, res, body);
  // Not an initialize (so no session began): nothing to keep.
  if (!transport.sessionId) void Promise.all([transport.close(), mcp.close()]).catch(() => undefined);
}
