import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import express from 'express';
import { AGENT_CARD_PATH, type AgentCard } from '@a2a-js/sdk';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { agentNameProblem } from '../core/state/agents';
import type { ConversationOptions } from '../core/conversation/conversation-state';
import type { TenantScope } from '../core/fleet/tenants';
import { tenantUserBuilder } from './tenant-user';
import type { AgentSummary } from '../contracts/activity-interface';
import { listAgents } from '../client/list-agents';
import { packageVersion } from '../connection/package-version';
import { agentCard, type AgentCardOptions } from './agent-card';
import { a2aGrpcService, type A2AGrpcService } from './a2a-grpc';
import { ConversationExecutor } from './conversation-executor';
import type { A2AServerExtension } from './a2a-server-extension';
import { TemporalTaskStore } from './task-store';
import { DurableRequestHandler } from './request-handler';
import { TemporalPushStore } from './push-store';
import { assumeVersionFromMethod, isRootAgentPath, publicBase } from './request-edge';
import { jsonRpcEnvelopeProblem, jsonRpcId } from './request-checks';

/** Options of {@link a2aHandler}. */
export interface A2AOptions {
  client: Client;
  taskQueue: string;
  /** The workers' named agents; default: the task queue's, asked of its workers every 30 s. */
  agents?: () => Promise<AgentSummary[]>;
  /** Options of the conversations the tasks start (a memory window, limits, ...). */
  conversationOptions?: ConversationOptions;
  /**
   * Whether requests need bearer tokens: the cards declare the scheme. The handler does not check
   * them: put it behind your authentication (the HTTP API puts it behind its tokens).
   */
  bearer?: boolean;
  /**
   * The base URL clients reach this server at (`https://agents.example.com`), when it is behind
   * a proxy: the cards advertise `<publicUrl>/a2a/<agent>`. Default: the request's own host.
   */
  publicUrl?: string;
  /**
   * The agent whose card the server's root serves (`/.well-known/agent-card.json`, where A2A
   * clients and the A2A TCK look first); default: the only agent, when there is one
   * (`AGENT_A2A_DEFAULT` for the HTTP API and `durable-agents a2a`).
   */
  defaultAgent?: string;
  /**
   * How long a blocking `SendMessage` waits for its task to end or ask for input before it answers
   * with the task still working (`AGENT_A2A_MAX_BLOCKING_WAIT`). Default: as long as it takes.
   */
  maxBlockingWaitMs?: number;
  /** The version the cards give; default: this package's. */
  version?: string;
  /** The largest request body (messages may carry images as bytes); default 32 MB. */
  maxBodyBytes?: number;
  /**
   * Whom a request acts for (the HTTP API: the tenant its token is bound to): a tenant's caller
   * reaches only its tenant's tasks, and its messages open conversations of that tenant.
   */
  scope?: (req: IncomingMessage) => TenantScope;
  /** The application's say in each message before an agent sees it: replies, tasks it settles itself. */
  extend?: A2AServerExtension;
  /**
   * Where A2A's gRPC binding is served ({@link A2AHandler.grpcService}, on a gRPC server of its
   * own): the cards declare it at `url` (`host:port`, as gRPC clients dial it; default: the host
   * the card was asked of, at `port`), each agent under its name as the call's tenant, the default
   * agent under none. Absent: the cards declare no gRPC.
   */
  grpc?: { port: number; url?: string };
  /**
   * Whom a gRPC call acts for, from its bearer token (`authorization` metadata; undefined without
   * one): a scope, or undefined to refuse it (UNAUTHENTICATED). The HTTP API checks its tokens
   * here. Default: every call acts for every tenant.
   */
  authorizeGrpc?: (token: string | undefined) => TenantScope | undefined;
}

/** {@link a2aHandler}'s request handler, and its gRPC service over the same agents and tasks. */
export interface A2AHandler {
  (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): void;
  /**
   * A2A's gRPC binding (the official SDK's), for `server.addService(A2AService, handler.grpcService())`
   * on a `@grpc/grpc-js` server listening at {@link A2AOptions.grpc}'s port. Without
   * {@link A2AOptions.authorizeGrpc} every call acts for every tenant.
   */
  grpcService(): A2AGrpcService;
}

/**
 * The task queue's named agents as A2A agents (protocol 1.0, with the official `@a2a-js/sdk`),
 * one base URL each, `/a2a/<agent>`: its Agent Card at `/a2a/<agent>/.well-known/agent-card.json`,
 * JSON-RPC at the base URL and HTTP+JSON under it. The SDK's request handler runs the protocol;
 * {@link ConversationExecutor} runs each task as a turn of a durable conversation, and
 * {@link TemporalTaskStore} keeps tasks in Temporal. Mounted by the HTTP API (`serve`), behind
 * its access rules.
 */
export function a2aHandler(o: A2AOptions): A2AHandler {
  const app = express();
  app.disable('x-powered-by');
  const store = new TemporalTaskStore(o.client, o.taskQueue);
  const pushes = new TemporalPushStore(o.client, o.taskQueue);
  // Push notifications are delivered by each task's record workflow (see a2aTaskWorkflow), not
  // by this server: the SDK's sender has nothing to do.
  const sender = { send: async () => undefined };
  const routers = new Map<string, express.Router>();
  const handlers = new Map<string, DurableRequestHandler>();
  const cardSince = cardDates();

  const agents = o.agents ?? agentsOf(o.client, o.taskQueue);
  const version = o.version ?? packageVersion();
  const known = async (name: string): Promise<AgentSummary | undefined> =>
    (await agents()).find((a) => a.name === name);

  // The root serves the default agent too (its card, JSON-RPC at `/`, HTTP+JSON's paths), for
  // clients given only the server's address (the A2A TCK among them); its card names the root.
  app.use((req, res, next) => {
    if (!isRootAgentPath(req.method, req.path)) return next();
    defaultAgentOf(agents, o.defaultAgent).then(
      (found) => {
        if ('problem' in found) return void res.status(404).json({ error: found.problem, errorType: 'Http.NotFound' });
        serve(found.agent, `${publicBase(req, o.publicUrl)}${req.baseUrl}`, '', req, res, next);
      },
      (err: unknown) => res.status(503).json({ error: (err as Error).message, errorType: 'Http.Unavailable' }),
    );
  });

  app.use('/a2a/:agent', (req, res, next) => {
    const name = req.params.agent;
    const problem = agentNameProblem(name);
    if (problem) return void res.status(400).json({ error: problem, errorType: 'Http.BadRequest' });
    known(name).then(
      (agent) => {
        if (!agent)
          return void res.status(404).json({
            error: `no agent "${name}" on task queue "${o.taskQueue}"; GET /agents lists them`,
            errorType: 'Http.NotFound',
          });
        // Where the card says the agent is: behind the prefix this handler may be mounted at.
        serve(agent, `${publicBase(req, o.publicUrl)}${req.baseUrl}`, agent.name, req, res, next);
      },
      (err: unknown) => res.status(503).json({ error: (err as Error).message, errorType: 'Http.Unavailable' }),
    );
  });

  const cardOptionsOf = (base: string, tenant: string) => cardOptions(o, version, base, tenant);

  /** The request handler of `agent` (one per agent, whichever binding asks first), its cards as asked of `base`. */
  function handlerOf(agent: AgentSummary, base: string, tenant: string): DurableRequestHandler {
    let handler = handlers.get(agent.name);
    if (handler) return handler;
    const executor = new ConversationExecutor({
      client: o.client,
      taskQueue: o.taskQueue,
      agent: agent.name,
      ...(o.conversationOptions ? { conversationOptions: o.conversationOptions } : {}),
      ...(o.extend ? { extend: o.extend } : {}),
      store,
    });
    const cardOptions = cardOptionsOf(base, tenant);
    // Behind the tokens, as every route but the public card: what an authenticated caller sees.
    const extended = agentCard(agent, { ...cardOptions, extended: true });
    handler = new DurableRequestHandler(
      agentCard(agent, cardOptions),
      store,
      executor,
      pushes,
      sender,
      async () => extended,
      o.maxBlockingWaitMs,
    );
    handlers.set(agent.name, handler);
    return handler;
  }

  /** Answers a request to `agent`, whose base URL is `base`: its card, JSON-RPC at `/`, HTTP+JSON under it. */
  function serve(
    agent: AgentSummary,
    base: string,
    tenant: string,
    req: express.Request,
    res: express.Response,
    next: express.NextFunction,
  ) {
    const card = agentCard(agent, cardOptionsOf(base, tenant));
    // The SDK writes the card as each protocol version reads it (1.0, and 0.3 for older clients).
    if (req.path === `/${AGENT_CARD_PATH}`)
      return void express.Router().use(`/${AGENT_CARD_PATH}`, cardHandler(card, cardSince(agent.name, card)))(
        req,
        res,
        next,
      );
    let router = routers.get(agent.name);
    if (!router) {
      const handler = handlerOf(agent, base, tenant);
      router = express.Router();
      // Clients of protocol 0.3 (no A2A-Version header) are answered too, as the SDK translates.
      const transport = {
        requestHandler: handler,
        userBuilder: tenantUserBuilder(o.scope) as unknown as UserBuilder,
        legacyCompat: { enabled: true },
      };
      // Each transport parses every body it is given: each gets its own paths only, so a
      // malformed JSON-RPC request is answered as JSON-RPC (-32700), not as HTTP+JSON.
      const rest = restHandler(transport);
      const rpc = jsonRpcHandler(transport);
      router.use(bodies(o.maxBodyBytes ?? 32_000_000));
      router.use((req, res, next) => {
        if (REST_PATH.test(req.path)) {
          answeredAsJson(res);
          return rest(req, res, next);
        }
        // JSON-RPC's rules for the envelope, which the SDK answers -32602 where JSON-RPC says -32600.
        const invalid = req.method === 'POST' ? jsonRpcEnvelopeProblem(req.body) : undefined;
        if (invalid)
          return void res
            .status(200)
            .json({ jsonrpc: '2.0', id: jsonRpcId(req.body), error: { code: -32600, message: invalid } });
        assumeVersionFromMethod(req);
        rpc(req, res, next);
      });
      routers.set(agent.name, router);
    }
    router(req, res, next);
  }

  // gRPC has no path: a call's tenant names its agent, none the default agent.
  const grpcHandlerFor = async (tenant: string) => {
    const found =
      tenant === ''
        ? await defaultAgentOf(agents, o.defaultAgent)
        : await known(tenant).then((agent) =>
            agent ? { agent } : { problem: `no agent "${tenant}" on task queue "${o.taskQueue}"` },
          );
    if ('problem' in found) return found;
    return { handler: handlerOf(found.agent, o.publicUrl ?? 'http://localhost', tenant) };
  };
  return Object.assign(app, {
    grpcService: () => a2aGrpcService({ handlerFor: grpcHandlerFor, authorize: o.authorizeGrpc ?? (() => ({})) }),
  });
}

/** What the cards of an agent say besides the agent, for a card asked of `base` (its gRPC tenant `tenant`). */
function cardOptions(o: A2AOptions, version: string, base: string, tenant: string): AgentCardOptions {
  return {
    url: base,
    version,
    bearer: o.bearer ?? false,
    ...(o.grpc ? { grpc: { url: o.grpc.url ?? `${new URL(base).hostname}:${o.grpc.port}`, tenant } } : {}),
  };
}

/**
 * Since when each agent's card has said what it says now (its `Last-Modified`): a new worker
 * build that changes the agent changes its card. Keyed by the agent's name, and by what the card
 * says, not where it was asked (the host, in its interfaces' URLs), so no client grows it.
 */
function cardDates(): (name: string, card: AgentCard) => string {
  const cards = new Map<string, { json: string; since: string }>();
  return (name, card) => {
    const json = JSON.stringify({ ...card, supportedInterfaces: [] });
    let known = cards.get(name);
    if (known?.json !== json) cards.set(name, (known = { json, since: new Date().toUTCString() }));
    return known.since;
  };
}

/**
 * The SDK's card route: the card as protocol 1.0 has it, and as 0.3 has it for a client that asks
 * for it (`A2A-Version: 0.3`). A request without the header gets 1.0: the SDK would answer it as
 * 0.3, mixing 0.3's fields into what 1.0 clients read (1.0's card keeps 0.3's interfaces in
 * `supportedInterfaces`, where clients of both find theirs).
 */
function cardHandler(card: AgentCard, since: string): express.RequestHandler {
  const handler = agentCardHandler({
    agentCardProvider: async () => card,
    legacyCompat: { enabled: true },
    cache: { maxAge: 60 },
  });
  return (req, res, next) => {
    req.headers['a2a-version'] ??= '1.0';
    res.setHeader('Last-Modified', since);
    handler(req, res, next);
  };
}

/**
 * The agent the root card is for: the one named, or the only one. A server of several agents
 * without a default says where their cards are.
 */
async function defaultAgentOf(
  agents: () => Promise<AgentSummary[]>,
  named: string | undefined,
): Promise<{ agent: AgentSummary } | { problem: string }> {
  const all = await agents();
  const where = 'their cards are at /a2a/<agent>/.well-known/agent-card.json';
  if (named !== undefined) {
    const agent = all.find((a) => a.name === named);
    return agent
      ? { agent }
      : {
          problem: `the default A2A agent "${named}" (AGENT_A2A_DEFAULT) is not among the workers' agents (${all.map((a) => a.name).join(', ') || 'none'}); ${where}`,
        };
  }
  if (all.length === 1) return { agent: all[0] };
  if (all.length === 0)
    return { problem: 'the workers of this task queue serve no named agents (defineAgent), so there is no Agent Card' };
  return {
    problem: `this server has ${all.length} agents (${all.map((a) => a.name).join(', ')}): ${where}, or set AGENT_A2A_DEFAULT to the one this root card is for`,
  };
}

/** The paths of the HTTP+JSON transport (`/message:send`, `/tasks/<id>`, 0.3's `/v1/...`): all but JSON-RPC's `/`. */
const REST_PATH = /^\/./;

/**
 * JSON bodies up to the HTTP API's limit for messages (images may come as bytes), parsed before the
 * SDK's transports, whose parser would stop at 100 KB (it leaves a parsed body alone). A body that
 * is not JSON is answered in the protocol of its path.
 */
function bodies(limit: number): express.RequestHandler {
  const parse = express.json({ limit, strict: false, type: () => true });
  return (req, res, next) => {
    const refused = unsupportedMediaType(req);
    if (refused) {
      // The binding's own error: HTTP+JSON's 415, JSON-RPC's ContentTypeNotSupportedError.
      if (REST_PATH.test(req.path))
        return void res.status(415).json({
          error: {
            code: 415,
            status: 'INVALID_ARGUMENT',
            message: refused,
            details: [
              {
                '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
                reason: 'CONTENT_TYPE_NOT_SUPPORTED',
                domain: 'a2a-protocol.org',
              },
            ],
          },
        });
      return void res.status(200).json({ jsonrpc: '2.0', id: null, error: { code: -32005, message: refused } });
    }
    parse(req, res, (err?: unknown) => {
      if (!err) return next();
      const status = (err as { status?: number }).status ?? 400;
      const message = status === 413 ? `the request is larger than ${limit} bytes` : 'the request body is not JSON';
      if (REST_PATH.test(req.path)) return void res.status(status).json({ error: { code: status, message } });
      res.status(status === 413 ? 413 : 200).json({
        jsonrpc: '2.0',
        id: null,
        error: { code: status === 413 ? -32600 : -32700, message },
      });
    });
  };
}

/** Why a request's body is not taken for its declared type (anything but JSON), or undefined. */
function unsupportedMediaType(req: express.Request): string | undefined {
  const declared = req.headers['content-type'];
  if (req.method !== 'POST' || !declared) return undefined;
  const media = declared.split(';')[0].trim().toLowerCase();
  if (media === 'application/json' || media === 'application/a2a+json') return undefined;
  return `the Content-Type ${JSON.stringify(declared)} is not supported: send the request as application/json`;
}

/**
 * HTTP+JSON answers with `application/json`, as the binding says (the SDK writes 0.3's
 * `application/a2a+json`, which 1.0's clients and the TCK do not take).
 */
function answeredAsJson(res: express.Response): void {
  const set = res.setHeader.bind(res);
  res.setHeader = (name: string, value: number | string | readonly string[]) =>
    set(
      name,
      name.toLowerCase() === 'content-type' && typeof value === 'string'
        ? value.replace(/^application\/a2a\+json/, 'application/json')
        : value,
    );
}

/** The task queue's named agents, asked of its workers at most every 30 s (a failure is not kept). */
function agentsOf(client: Client, taskQueue: string): () => Promise<AgentSummary[]> {
  let kept: { at: number; agents: Promise<AgentSummary[]> } | undefined;
  return () => {
    if (!kept || Date.now() - kept.at > 30_000) {
      const agents = listAgents(client, { taskQueue });
      kept = { at: Date.now(), agents };
      agents.catch(() => (kept = undefined));
    }
    return kept.agents;
  };
}
