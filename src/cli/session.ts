import { setMaxListeners } from 'node:events';
import { temporal } from '@temporalio/proto';
import type { Client } from '@temporalio/client';
import type { ModelConfig } from '../activities';
import { exampleAgents } from '../agents/examples';
import { createAgentWorker } from '../runtime/agent-worker';
import { ClientError } from '../runtime/client-error';
import { connectTemporal, workflowUrl, type TemporalEnv } from '../runtime/temporal-env';
import { defaultToolRegistry } from '../tools';
import { mcpServersFromEnv, type McpServers } from '../mcp/mcp-config';

/** A command's connection to Temporal, with a worker in this process when the server is embedded. */
export interface Session {
  client: Client;
  /** How Temporal was reached: a configured cluster, a dev server this command started, or one already running. */
  mode: TemporalEnv['mode'];
  /** The SQLite file of a dev server this command started. */
  dbFilename?: string;
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

/** Options of {@link openSession}. */
export interface SessionOptions {
  taskQueue: string;
  /** Model for the in-process worker (default: from the environment). */
  model?: ModelConfig;
  /** Progress notes for people; commands send them to stderr. */
  note: (line: string) => void;
}

/**
 * Connects a command-line command. Against a configured cluster it is a pure client (workers run
 * elsewhere). With the embedded server it also runs a worker in this process, so commands work
 * on their own and alongside `npm start`: conversations live in the server's SQLite file, and
 * queries (status, history) need a worker to answer them.
 */
export async function openSession(options: SessionOptions): Promise<Session> {
  // Read first: a broken AGENT_MCP_CONFIG is the user's to fix, whatever Temporal does.
  let mcpServers: McpServers;
  try {
    mcpServers = mcpServersFromEnv();
  } catch (err) {
    throw new ClientError('invalid', (err as Error).message);
  }
  let env: TemporalEnv;
  try {
    env = await connectTemporal({ persistent: true });
  } catch (err) {
    throw new ClientError('unreachable', (err as Error).message);
  }
  describeConnection(env, options.note);
  if (env.mode === 'configured') await warnIfNoWorker(env, options.taskQueue, options.note);
  const open = new Set<AbortController>();
  return {
    client: env.client,
    mode: env.mode,
    dbFilename: env.dbFilename,
    uiLink: (id) => workflowUrl(env.uiUrl, env.namespace, id),
    run: async (body) => {
      if (env.mode === 'configured') return body();
      const worker = await createAgentWorker({
          connection: env.nativeConnection,
          namespace: env.namespace,
          taskQueue: options.taskQueue,
          model: options.model,
          registry: defaultToolRegistry(),
          agents: exampleAgents,
          mcpServers,
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

function describeConnection(env: TemporalEnv, note: (line: string) => void): void {
  if (env.mode === 'configured') note(`Temporal: ${env.address}, namespace ${env.namespace}`);
  else if (env.mode === 'embedded-reused') note(`Temporal: the local dev server already running at ${env.address}`);
  else {
    note(
      `Temporal: started an embedded dev server at ${env.address} (data in ${env.dbFilename ?? 'memory'}). ` +
        'It stops when this command ends; run `npm start` in another terminal to keep it and the Web UI up.',
    );
  }
}

async function warnIfNoWorker(env: TemporalEnv, taskQueue: string, note: (line: string) => void): Promise<void> {
  try {
    const { pollers } = await env.client.workflowService.describeTaskQueue({
      namespace: env.namespace,
      taskQueue: { name: taskQueue },
      taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    });
    if (!pollers?.length) note(`Warning: no worker is polling task queue "${taskQueue}"; nothing runs until one starts (npm start).`);
  } catch {
    // Only a hint; missing permissions to describe the queue must not stop the command.
  }
}
