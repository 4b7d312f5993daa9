import type { Client } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, modelConfigFromEnv, type ModelConfig } from '../activities';
import { defaultToolRegistry } from '../tools';
import type { ToolRegistry } from '../tools/registry';
import type { ToolProvider } from '../tools/tool-provider';

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
  /** Chooses extra (dynamic) tools for each model call from the conversation. */
  toolProvider?: ToolProvider;
  model?: ModelConfig;
  /** A prebuilt workflow bundle (tests); default: bundle `src/workflows` at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** How long in-flight activities may finish on shutdown. */
  shutdownGraceTime?: WorkerOptions['shutdownGraceTime'];
}

/** A worker that runs agent and conversation workflows and their activities. */
export function createAgentWorker(options: AgentWorkerOptions): Promise<Worker> {
  const registry = options.registry ?? defaultToolRegistry();
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace ?? 'default',
    taskQueue: options.taskQueue ?? defaultTaskQueue(),
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: require.resolve('../workflows') }),
    activities: createActivities({ client: options.client, registry, model: options.model ?? modelConfigFromEnv(), toolProvider: options.toolProvider }),
    shutdownGraceTime: options.shutdownGraceTime ?? '10s',
    // Cancellation (a cancelled turn, a time limit) reaches an activity only with a heartbeat's
    // response; the SDK's default throttling (up to 80% of the heartbeat timeout) would delay it ~24 s.
    maxHeartbeatThrottleInterval: '2s',
    // When a worker dies, tasks and queries for the runs it cached wait on its sticky queue this
    // long before any worker may take them (default 10 s). The model call's conversation query is
    // one of them, so after a crash the retried call waited ~17 s instead of ~7 s. 3 s is still
    // far above a healthy worker's pickup time; past it, another worker replays the run instead.
    stickyQueueScheduleToStartTimeout: '3s',
  });
}
