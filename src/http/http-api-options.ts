import type { Client } from '@temporalio/client';
import type { ConversationOptions } from '../core/conversation/conversation-state';
import type { HttpAccessOptions } from './access';
import type { A2AServerSettings } from './server-settings';

/** Options of `createHttpApi` and `httpApiHandler` (http-api.ts). */
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
