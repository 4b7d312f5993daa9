import { temporal } from '@temporalio/proto';
import type { Client } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import type { ModelConfig } from '../activities';
import { createAgentWorker } from '../runtime/agent-worker';
import { connectTemporal, workflowUrl, type TemporalEnv } from '../runtime/temporal-env';

/** A command's connection to Temporal, with a worker in this process when the server is embedded. */
export interface Session {
  client: Client;
  /** The Web UI link of a workflow, when a UI is known. */
  uiLink(workflowId: string): string | undefined;
  /** Runs `body` while the in-process worker (if any) serves workflows, queries and activities. */
  run<T>(body: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

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
  const env = await connectTemporal({ persistent: true });
  let worker: Worker | undefined;
  try {
    describeConnection(env, options.note);
    if (env.mode === 'configured') await warnIfNoWorker(env, options.taskQueue, options.note);
    else {
      worker = await createAgentWorker({ connection: env.nativeConnection, client: env.client, namespace: env.namespace, taskQueue: options.taskQueue, model: options.model });
    }
  } catch (err) {
    await env.close();
    throw err;
  }
  return {
    client: env.client,
    uiLink: (id) => workflowUrl(env.uiUrl, env.namespace, id),
    run: (body) => (worker ? worker.runUntil(body) : body()),
    close: () => env.close(),
  };
}

function describeConnection(env: TemporalEnv, note: (line: string) => void): void {
  if (env.mode === 'configured') note(`Temporal: ${env.address}, namespace ${env.namespace}`);
  else if (env.mode === 'embedded-reused') note(`Temporal: the local dev server at ${env.address}`);
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
