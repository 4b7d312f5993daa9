import type { Client } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, modelConfigFromEnv, type ModelConfig } from '../activities';
import { defaultToolRegistry } from '../tools';
import type { ToolRegistry } from '../tools/registry';

/** Task queue from `AGENT_TASK_QUEUE`, default `agents`. */
export function defaultTaskQueue(env: NodeJS.ProcessEnv = process.env): string {
  return env.AGENT_TASK_QUEUE || 'agents';
}

export interface AgentWorkerOptions {
  connection: NativeConnection;
  /** Used by the model-call activity to read conversations. */
  client: Client;
  namespace?: string;
  taskQueue?: string;
  registry?: ToolRegistry;
  model?: ModelConfig;
  /** A prebuilt workflow bundle (tests); default: bundle `src/workflows` at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** How long in-flight activities may finish on shutdown. */
  shutdownGraceTime?: WorkerOptions['shutdownGraceTime'];
}

/** A worker that runs agent workflows and their activities. */
export function createAgentWorker(options: AgentWorkerOptions): Promise<Worker> {
  const registry = options.registry ?? defaultToolRegistry();
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace ?? 'default',
    taskQueue: options.taskQueue ?? defaultTaskQueue(),
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: require.resolve('../workflows') }),
    activities: createActivities({ client: options.client, registry, model: options.model ?? modelConfigFromEnv() }),
    shutdownGraceTime: options.shutdownGraceTime ?? '10s',
  });
}
