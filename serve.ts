/**
 * `npm run serve`: the HTTP API (see src/http/http-api.ts) on PORT (default 8080), with a worker
 * in the same process. Without TEMPORAL_ADDRESS it starts (or reuses) the embedded dev server.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { modelConfigFromEnv } from './src/activities';
import { createHttpApi } from './src/http/http-api';
import { createAgentWorker, defaultTaskQueue } from './src/runtime/agent-worker';
import { installRuntimeLogging } from './src/runtime/logging';
import { connectTemporal } from './src/runtime/temporal-env';

function portFromEnv(raw = process.env.PORT): number {
  if (raw === undefined || raw === '') return 8080;
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) throw new Error(`PORT must be a port number (0-65535), got "${raw}"`);
  return Number(raw);
}

async function main(): Promise<void> {
  const port = portFromEnv();
  installRuntimeLogging('WARN');
  const temporal = await connectTemporal({ persistent: true });
  try {
    const taskQueue = defaultTaskQueue();
    const model = modelConfigFromEnv();
    const worker = await createAgentWorker({ connection: temporal.nativeConnection, client: temporal.client, namespace: temporal.namespace, taskQueue, model });
    const server = createHttpApi({ client: temporal.client, taskQueue });
    server.listen(port);
    await Promise.race([once(server, 'listening'), once(server, 'error').then(([err]) => Promise.reject(new Error(`cannot listen on port ${port}: ${(err as Error).message}`)))]);
    console.log(`durable-agents HTTP API on http://localhost:${(server.address() as AddressInfo).port} (task queue "${taskQueue}")`);
    if (temporal.uiUrl) console.log(`Temporal Web UI: ${temporal.uiUrl}/namespaces/${temporal.namespace}/workflows`);
    if (!model.configured) console.log('Warning: no OPENAI_API_KEY or OPENAI_BASE_URL set; model calls will fail until one is.');
    console.log('Press Ctrl+C to stop.');
    // SIGINT/SIGTERM stop the worker gracefully (the SDK's runtime handles them); then the HTTP server.
    await worker.run();
    server.close();
    server.closeAllConnections();
    console.log('Stopped.');
  } finally {
    await temporal.close();
  }
}

main().catch((err) => {
  console.error(`serve: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
