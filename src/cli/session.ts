import { setMaxListeners } from 'node:events';
import type { Client } from '@temporalio/client';
import type { ModelConfig } from '../activities';
import type { AgentDefinition } from '../agents/define-agent';
import { ClientError } from '../client/client-error';
import { requireWorker } from '../client/task-queue-workers';
import { connectTemporal, workflowUrl, type TemporalEnv } from '../connection/temporal-env';
import type { ClientSettings } from '../connection/settings';
import type { ToolRegistry } from '../tools/registry';
import type { McpServerExtension } from '../mcp-server/mcp-server-extension';
import { mcpServersFromEnv, type McpServers } from '../tools/mcp-client/mcp-config';
import type { A2AServerExtension } from '../a2a/a2a-server-extension';

/** A command's connection to Temporal, with a worker in this process when the server is embedded. */
export interface Session {
  client: Client;
  /** How Temporal was reached: a configured cluster, a dev server this command started, or one already running. */
  mode: TemporalEnv['mode'];
  /** The SQLite file of a dev server this command started. */
  dbFilename?: string;
  /** Whether a worker runs in this process (see {@link LocalWorker}). */
  localWorker: boolean;
  /** The Web UI link of a workflow, when a UI is known. */
  uiLink(workflowId: string): string | undefined;
  /**
   * Runs `body` while the in-process worker (if any) serves workflows, queries and activities. The
   * worker is created here, not when the session opens: a worker that never ran keeps its
   * connection open, and closing the session would then fail with an error that hid the real
   * one (e.g. "a run with this id is already running").
   */
  run<T>(body: () => Promise<T>): Promise<T>;
  /**
   * Runs `work` (a wait, a poll loop, a chat turn) with its Temporal calls cancellable: close()
   * cancels those still open, so a long poll neither holds the command open nor is left to its
   * retries (the connection's guard, see connectClient, makes late retries harmless). Scoped per
   * piece of work, not per session, because the SDK adds an abort listener per call and never
   * removes it.
   */
  scoped<T>(work: () => Promise<T>): Promise<T>;
  /** Closes the connections (and a dev server this command started). Never throws. */
  close(): Promise<void>;
}

/**
 * A worker a command runs in its own process while the dev server is embedded, so the command
 * works on its own: this repository's `client.ts` and demo serve the example agents this way.
 * The package's `durable-agents` bin never has one: in a project, the agents are the user's, and
 * their worker serves them.
 */
export interface LocalWorker {
  agents?: readonly AgentDefinition<any>[];
  registry?: ToolRegistry;
  /** Default: from the environment. */
  model?: ModelConfig;
  /** Default: `AGENT_MCP_CONFIG`. */
  mcpServers?: McpServers;
  /**
   * Run it against a configured cluster (`TEMPORAL_ADDRESS`) too: for a command whose task queue
   * is its own, which no other worker serves (the demo).
   */
  onAnyServer?: boolean;
}

/** What a command that talks to Temporal works with: the task queue, the settings, and maybe a worker of its own. */
export interface CommandTarget {
  taskQueue: string;
  /** What the environment says (read once, by the program's `main`). */
  settings: ClientSettings;
  /** Run this worker in the command's process when the dev server is embedded (see {@link LocalWorker}). */
  localWorker?: LocalWorker;
  /** What `--module` of `mcp` or `a2a` serves besides its agents (its `mcpServer` or `a2aServer`), when given. */
  module?: { mcpServer?: McpServerExtension; a2aServer?: A2AServerExtension };
}

/** Options of {@link openSession}. */
export interface SessionOptions extends CommandTarget {
  /** Progress notes for people; commands send them to stderr. */
  note: (line: string) => void;
  /**
   * The command starts work on `taskQueue`: without a worker of its own, it fails at once when no
   * worker polls the queue, instead of waiting for one that may never come.
   */
  needsWorker?: boolean;
}

/** How a command line picks another task queue, for messages. */
export const TASK_QUEUE_HINT = '--task-queue <name> (or AGENT_TASK_QUEUE)';

/**
 * Connects a command-line command. Against a configured cluster (`TEMPORAL_ADDRESS`) it is a
 * pure client: workers run elsewhere. Without one, a command with a {@link LocalWorker} reuses
 * the local dev server or starts one, and serves workflows, queries and activities in its own
 * process while it runs; a command without one (the package's bin) uses the dev server the
 * user's worker runs, and never starts a server of its own.
 */
export async function openSession(options: SessionOptions): Promise<Session> {
  // Read first: a broken AGENT_MCP_CONFIG is the user's to fix, whatever Temporal does.
  let mcpServers: McpServers | undefined;
  try {
    mcpServers = options.localWorker
      ? (options.localWorker.mcpServers ?? mcpServersFromEnv(options.settings.env))
      : undefined;
  } catch (err) {
    throw new ClientError('invalid', (err as Error).message);
  }
  let env: TemporalEnv;
  try {
    env = await connectTemporal(
      {
        persistent: true,
        start: options.localWorker !== undefined,
        announce: false,
        // A client of other workers opens no worker connection (and loads no worker code).
        worker: mayRunLocalWorker(options),
      },
      options.settings,
    );
  } catch (err) {
    throw new ClientError('unreachable', (err as Error).message);
  }
  const local = env.mode !== 'configured' || options.localWorker?.onAnyServer ? options.localWorker : undefined;
  try {
    describeConnection(env, options.note, local !== undefined);
    if (!local && options.needsWorker) await requireWorker(env.client, options.taskQueue, TASK_QUEUE_HINT);
  } catch (err) {
    await env.close().catch(() => undefined);
    throw err;
  }
  const open = new Set<AbortController>();
  return {
    client: env.client,
    mode: env.mode,
    dbFilename: env.dbFilename,
    localWorker: local !== undefined,
    uiLink: (id) => workflowUrl(env.uiUrl, env.namespace, id),
    run: async (body) => {
      if (!local) return body();
      // Loaded here, not at the top: a command that talks to other workers (the package's bin,
      // any command against TEMPORAL_ADDRESS) never loads worker code.
      const { createAgentWorker } = await import('../worker/create-agent-worker');
      const worker = await createAgentWorker({
        connection: env.nativeConnection,
        namespace: env.namespace,
        taskQueue: options.taskQueue,
        model: local.model,
        registry: local.registry,
        agents: local.agents,
        mcpServers,
        // The command's own worker on the embedded server serves this command only: never a build of a deployment.
        deployment: false,
      });
      return worker.runUntil(body);
    },
    scoped: async (work) => {
      const calls = new AbortController();
      // One listener per call made in the scope; they go with the scope, so no leak warning.
      setMaxListeners(0, calls.signal);
      open.add(calls);
      try {
        return await env.client.withAbortSignal(calls.signal, work);
      } finally {
        open.delete(calls);
      }
    },
    close: async () => {
      for (const calls of open) calls.abort();
      await env.close().catch(() => undefined);
    },
  };
}

/** Whether a command runs its in-process worker: it has one, on the embedded server (or on any, when it says so). */
export function mayRunLocalWorker(options: Pick<SessionOptions, 'localWorker' | 'settings'>): boolean {
  return options.localWorker !== undefined && (!options.settings.address || options.localWorker.onAnyServer === true);
}

/**
 * Runs a command's `body` in a session (see {@link openSession}) and closes it after: while its
 * in-process worker (if any) serves, unless `serve` is false (a schedule's runs need a worker that
 * outlives the command, not one that stops with it).
 */
export async function inSession<T>(
  options: SessionOptions & { serve?: boolean },
  body: (session: Session) => Promise<T>,
): Promise<T> {
  const session = await openSession(options);
  try {
    return await (options.serve === false ? body(session) : session.run(() => body(session)));
  } finally {
    await session.close();
  }
}

function describeConnection(env: TemporalEnv, note: (line: string) => void, localWorker: boolean): void {
  // A dev server already running is the usual case, not news: only a server this command starts is said.
  if (env.mode === 'configured') note(`Temporal: ${env.address}, namespace ${env.namespace}`);
  else if (env.mode === 'embedded-started') {
    note(
      `Temporal: started an embedded dev server at ${env.address} (data in ${env.dbFilename ?? 'memory'}). ` +
        `It stops when this command ends${localWorker ? '; run `npm start` in another terminal to keep it and the Web UI up' : ''}.`,
    );
  }
}
