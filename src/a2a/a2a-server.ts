import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import express from 'express';
import { AGENT_CARD_PATH } from '@a2a-js/sdk';
import { DefaultRequestHandler } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { agentNameProblem, type ConversationOptions } from '../core';
import type { AgentSummary } from '../common/activity-interface';
import { agentCard } from './agent-card';
import { ConversationExecutor } from './conversation-executor';
import { TemporalTaskStore } from './task-store';
import { TemporalPushStore } from './push-store';

/** Options of {@link a2aHandler}. */
export interface A2AOptions {
  client: Client;
  taskQueue: string;
  /** The workers' named agents (the HTTP API's cached listing). */
  agents: () => Promise<AgentSummary[]>;
  conversationOptions?: ConversationOptions;
  /** Whether requests need bearer tokens: the cards say so (the HTTP API checks them before this). */
  bearer?: boolean;
  /** The package's version, for the cards. */
  version: string;
}

/**
 * The task queue's named agents as A2A agents (protocol 1.0, with the official `@a2a-js/sdk`),
 * one base URL each, `/a2a/<agent>`: its Agent Card at `/a2a/<agent>/.well-known/agent-card.json`,
 * JSON-RPC at the base URL and HTTP+JSON under it. The SDK's request handler runs the protocol;
 * {@link ConversationExecutor} runs each task as a turn of a durable conversation, and
 * {@link TemporalTaskStore} keeps tasks in Temporal. Mounted by the HTTP API (`serve`), behind
 * its access rules.
 */
export function a2aHandler(o: A2AOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const app = express();
  app.disable('x-powered-by');
  const store = new TemporalTaskStore(o.client, o.taskQueue);
  const pushes = new TemporalPushStore(o.client, o.taskQueue);
  // Push notifications are delivered by each task's record workflow (see a2aTaskWorkflow), not
  // by this server: the SDK's sender has nothing to do.
  const sender = { send: async () => undefined };
  const routers = new Map<string, express.Router>();

  const known = async (name: string): Promise<AgentSummary | undefined> =>
    (await o.agents()).find((a) => a.name === name);

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
        const base = `${req.protocol}://${req.get('host')}/a2a/${encodeURIComponent(name)}`;
        const card = agentCard(agent, { url: base, version: o.version, bearer: o.bearer ?? false });
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
          const handler = new DefaultRequestHandler(card, store, executor, undefined, pushes, sender);
          router = express.Router();
          // Clients of protocol 0.3 (no A2A-Version header) are answered too, as the SDK translates.
          const transport = {
            requestHandler: handler,
            userBuilder: UserBuilder.noAuthentication,
            legacyCompat: { enabled: true },
          };
          router.use(restHandler(transport));
          router.use(jsonRpcHandler(transport));
          routers.set(name, router);
        }
        router(req, res, next);
      },
      (err: unknown) => res.status(503).json({ error: (err as Error).message, errorType: 'Http.Unavailable' }),
    );
  });
  return app;
}
