import type { Worker } from '@temporalio/worker';
import type { TemporalEnv } from '../connection/temporal-env';
import type { WorkerSettings } from '../worker/settings';
import type { CommandContext } from './command';
import { loadAgentModule } from './agent-module';
import type { WorkerCommand } from './server-args';
import type { LocalWorker } from './session';

/** Creates the worker of `worker` and `serve`: the agents given, on the connection, with the settings read once. */
export async function createLocalWorker(
  temporal: TemporalEnv,
  local: LocalWorker,
  settings: WorkerSettings,
): Promise<Worker> {
  const { createAgentWorker } = await import('../worker/create-agent-worker');
  return createAgentWorker({
    connection: temporal.nativeConnection,
    namespace: temporal.namespace,
    taskQueue: settings.taskQueue,
    registry: local.registry,
    agents: local.agents,
    model: local.model,
    settings,
  });
}

/** The agents a `worker` or `serve` runs: `--module`'s, else the program's own (this repository's examples), else none. */
export function workerAgents(module: string | undefined, local: LocalWorker | undefined): LocalWorker {
  return module !== undefined ? loadAgentModule(module) : (local ?? {});
}

/**
 * `worker`: a worker for agent workflows on the task queue, until Ctrl+C. Without TEMPORAL_ADDRESS
 * it starts (or reuses) the embedded dev server with the Web UI. The SDK's runtime shuts it down
 * gracefully on SIGINT or SIGTERM: polling stops, activities in flight get the grace time, then
 * `run()` resolves and the embedded server stops.
 */
export async function runWorkerCommand(command: WorkerCommand, { target, io }: CommandContext): Promise<number> {
  const { workerSettings } = await import('../worker/settings');
  const { installRuntimeLogging } = await import('../telemetry/logging');
  const { connectTemporal, describeTemporal } = await import('../connection/temporal-env');
  const local = workerAgents(command.module, target.localWorker);
  // The environment, read once: the model, MCP servers, stores, keys, tracing.
  const settings = workerSettings({ taskQueue: target.taskQueue }, target.settings.env);
  const { taskQueue, model, mcpServers } = settings;
  installRuntimeLogging('WARN', settings.logging);
  const temporal = await connectTemporal({ persistent: true, announce: false }, target.settings);
  try {
    const worker = await createLocalWorker(temporal, local, settings);
    io.stdout(
      `durable-agents worker on task queue "${taskQueue}", namespace "${temporal.namespace}" at ${temporal.address}`,
    );
    for (const line of describeTemporal(temporal)) io.stdout(line);
    if (settings.deployment)
      io.stdout(
        `Worker Versioning: build ${settings.deployment.buildId} of deployment ${settings.deployment.name} (it serves new runs once current: npx durable-agents deploy promote ${settings.deployment.buildId})`,
      );
    if (local.registry?.names().length) io.stdout(`Tools: ${local.registry.names().join(', ')}`);
    io.stdout(
      local.agents?.length
        ? `Agents: ${local.agents.map((a) => a.name).join(', ')}`
        : 'Agents: none named (--module <file> serves yours); runs without a named agent are served.',
    );
    if (Object.keys(mcpServers).length)
      io.stdout(
        `MCP servers (from ${target.settings.env.AGENT_MCP_CONFIG}): ${Object.keys(mcpServers).join(', ')}; runs without a named agent get their tools`,
      );
    io.stdout(
      model.configured
        ? `Model: ${model.model} at ${model.baseURL}`
        : 'Warning: no OPENAI_API_KEY or OPENAI_BASE_URL set; model calls will fail until one is.',
    );
    io.stdout('Press Ctrl+C to stop.');
    await worker.run();
    io.stdout('Worker stopped.');
    return 0;
  } finally {
    await temporal.close();
  }
}
