import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import express from 'express';
import { AGENT_CARD_PATH } from '@a2a-js/sdk';
import type { StreamResponse, SubscribeToTaskRequest } from '@a2a-js/sdk';
import {
  DefaultExecutionEventBusManager,
  DefaultRequestHandler,
  type ExtendedAgentCardProvider,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { agentNameProblem, type ConversationOptions, type TenantScope } from '../core';
import { tenantUserBuilder } from './tenant-user';
import type { AgentSummary } from '../contracts/activity-interface';
import { listAgents } from '../client/list-agents';
import { packageVersion } from '../connection/package-version';
import { agentCard } from './agent-card';
import { ConversationExecutor } from './conversation-executor';
import { FINAL, TemporalTaskStore } from './task-store';
import { TemporalPushStore } from './push-store';

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
  /** The version the cards give; default: this package's. */
  version?: string;
  /** The largest request body (messages may carry images as bytes); default 32 MB. */
  maxBodyBytes?: number;
  /**
   * Whom a request acts for (the HTTP API: the tenant its token is bound to): a tenant's caller
   * reaches only its tenant's tasks, and its messages open conversations of that tenant.
   */
  scope?: (req: IncomingMessage) => TenantScope;
}

/**
 * The task queue's named agents as A2A agents (protocol 1.0, with the official `@a2a-js/sdk`),
 * one base URL each, `/a2a/<agent>`: its Agent Card at `/a2a/<agent>/.well-known/agent-card.json`,
 * JSON-RPC at the base URL and HTTP+JSON under it. The SDK's request handler runs the protocol;
 * {@link ConversationExecutor} runs each task as a turn of a durable conversation, and
 * {@link TemporalTaskStore} keeps tasks in Temporal. Mounted by the HTTP API (`serve`), behind
 * its access rules.
 */
export function a2aHandler(
  o: A2AOptions,
): (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void {
  const app = express();
  app.disable('x-powered-by');
  const store = new TemporalTaskStore(o.client, o.taskQueue);
  const pushes = new TemporalPushStore(o.client, o.taskQueue);
  // Push notifications are delivered by each task's record workflow (see a2aTaskWorkflow), not
  // by this server: the SDK's sender has nothing to do.
  const sender = { send: async () => undefined };
  const routers = new Map<string, express.Router>();

  const agents = o.agents ?? agentsOf(o.client, o.taskQueue);
  const version = o.version ?? packageVersion();
  const known = async (name: string): Promise<AgentSummary | undefined> =>
    (await agents()).find((a) => a.name === name);

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
        const base = `${o.publicUrl?.replace(/\/+$/, '') ?? `${req.protocol}://${req.get('host')}`}${req.baseUrl}`;
        const cardOptions = { url: base, version, bearer: o.bearer ?? false };
        const card = agentCard(agent, cardOptions);
        // The SDK writes the card as each protocol version reads it (1.0, and 0.3 for older clients).
        if (req.path === `/${AGENT_CARD_PATH}`)
          return void express.Router().use(
            `/${AGENT_CARD_PATH}`,
            agentCardHandler({
              agentCardProvider: async () => card,
              legacyCompat: { enabled: true },
              cache: { maxAge: 60 },
            }),
          )(req, res, next);
        let router = routers.get(name);
        if (!router) {
          const executor = new ConversationExecutor({
            client: o.client,
            taskQueue: o.taskQueue,
            agent: name,
            ...(o.conversationOptions ? { conversationOptions: o.conversationOptions } : {}),
            store,
          });
          // Behind the tokens, as every route but the public card: what an authenticated caller sees.
          const extended = agentCard(agent, { ...cardOptions, extended: true });
          const handler = new DurableRequestHandler(card, store, executor, pushes, sender, async () => extended);
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
          router.use((req, res, next) => (REST_PATH.test(req.path) ? rest : rpc)(req, res, next));
          routers.set(name, router);
        }
        router(req, res, next);
      },
      (err: unknown) => res.status(503).json({ error: (err as Error).message, errorType: 'Http.Unavailable' }),
    );
  });
  return app;
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
  return (req, res, next) =>
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

/**
 * The SDK's request handler, with one change: a resubscription (`SubscribeToTask`) to a task
 * that no execution on this server is following (its server restarted, or another replica ran
 * it) follows the task's turn from its conversation's durable event log, instead of answering
 * the task as stored and ending. Its final state is saved, as the execution would have.
 */
class DurableRequestHandler extends DefaultRequestHandler {
  private readonly buses: DefaultExecutionEventBusManager;

  constructor(
    card: ConstructorParameters<typeof DefaultRequestHandler>[0],
    private readonly tasks: TemporalTaskStore,
    private readonly follower: ConversationExecutor,
    pushes: TemporalPushStore,
    sender: ConstructorParameters<typeof DefaultRequestHandler>[5],
    extendedCard: ExtendedAgentCardProvider,
  ) {
    const buses = new DefaultExecutionEventBusManager();
    super(card, tasks, follower, buses, pushes, sender, extendedCard);
    this.buses = buses;
  }

  override async *resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const task = this.buses.getByTaskId(params.id, context) ? undefined : await this.tasks.load(params.id, context);
    const state = task?.status?.state;
    // A live execution, an unknown task or a finished one: the SDK answers as it does.
    if (!task || state === undefined || FINAL.has(state)) return yield* super.resubscribe(params, context);
    yield { payload: { $case: 'task', value: task } };
    const stop = new AbortController();
    try {
      let latest = task;
      for await (const event of this.follower.follow(task, stop.signal)) {
        if (event.kind === 'statusUpdate') {
          latest = { ...latest, status: event.data.status, metadata: event.data.metadata ?? latest.metadata };
          yield { payload: { $case: 'statusUpdate', value: event.data } };
        } else if (event.kind === 'artifactUpdate') {
          latest = { ...latest, artifacts: [...latest.artifacts, event.data.artifact!] };
          yield { payload: { $case: 'artifactUpdate', value: event.data } };
        }
      }
      const ended = latest.status?.state;
      if (ended !== undefined && ended !== state) await this.tasks.save(latest, context);
    } finally {
      stop.abort();
    }
  }
}
