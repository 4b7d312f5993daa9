/**
 * `npm start`: a worker for agent workflows on task queue AGENT_TASK_QUEUE (default `agents`).
 * Without TEMPORAL_ADDRESS it starts (or reuses) the embedded dev server with the Web UI.
 */
import { exampleAgents } from './scripts/demo-agents/agents';
import { createAgentWorker } from './src/worker/create-agent-worker';
import { workerSettings } from './src/worker/settings';
import { installRuntimeLogging } from './src/telemetry/logging';
import { connectTemporal, describeTemporal } from './src/connection/temporal-env';
import { exampleToolRegistry } from './scripts/demo-agents';

async function main(): Promise<void> {
  // The SDK's runtime shuts workers down gracefully on SIGINT/SIGTERM: polling stops, in-flight
  // activities get the grace time, then run() resolves and we stop the embedded server.
  // The environment, read once: the model, MCP servers, stores, keys, tracing, the task queue.
  const settings = workerSettings();
  const { taskQueue, model, mcpServers } = settings;
  installRuntimeLogging('WARN', settings.logging);
  const temporal = await connectTemporal({ persistent: true, announce: false });
  try {
    const registry = exampleToolRegistry();
    const worker = await createAgentWorker({
      connection: temporal.nativeConnection,
      namespace: temporal.namespace,
      taskQueue,
      registry,
      agents: exampleAgents,
      settings,
    });
    console.log(
      `durable-agents worker on task queue "${taskQueue}", namespace "${temporal.namespace}" at ${temporal.address}`,
    );
    for (const line of describeTemporal(temporal)) console.log(line);
    if (settings.deployment)
      console.log(
        `Worker Versioning: build ${settings.deployment.buildId} of deployment ${settings.deployment.name} (it serves new runs once current: npx durable-agents deploy promote ${settings.deployment.buildId})`,
      );
    console.log(`Tools: ${registry.names().join(', ')}`);
    console.log(`Agents: ${exampleAgents.map((a) => a.name).join(', ')}`);
    if (Object.keys(mcpServers).length)
      console.log(
        `MCP servers (from ${process.env.AGENT_MCP_CONFIG}): ${Object.keys(mcpServers).join(', ')}; runs without a named agent get their tools`,
      );
    console.log(
      model.configured
        ? `Model: ${model.model} at ${model.baseURL}`
        : 'Warning: no OPENAI_API_KEY or OPENAI_BASE_URL set; model calls will fail until one is.',
    );
    console.log('Press Ctrl+C to stop.');
    await worker.run();
    console.log('Worker stopped.');
  } finally {
    await temporal.close();
  }
}

main().catch((err) => {
  console.error(`worker: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
