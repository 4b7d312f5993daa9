/**
 * `npm run serve`: the HTTP API (see src/http/http-api.ts) on HOST:PORT (default 127.0.0.1:8080),
 * with a worker in the same process. Without TEMPORAL_ADDRESS it starts (or reuses) the embedded
 * dev server. With AGENT_HTTP_TOKENS every request but GET /healthz needs one of the tokens;
 * without tokens it refuses to listen anywhere but on loopback. AGENT_SERVE_WORKER=false serves
 * the API alone, for deployments whose workers run in processes of their own.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exampleAgents } from './scripts/demo-agents/agents';
import { httpAccessFromEnv, isLoopback } from './src/http/access';
import { httpApiHandler } from './src/http/http-api';
import { workerSettings } from './src/worker/settings';
import { clientSettings } from './src/connection/settings';
import { createAgentWorker } from './src/worker/create-agent-worker';
import { installRuntimeLogging } from './src/telemetry/logging';
import { connectTemporal, describeTemporal } from './src/connection/temporal-env';
import { exampleToolRegistry } from './scripts/demo-agents';

function portFromEnv(raw = process.env.PORT): number {
  if (raw === undefined || raw === '') return 8080;
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) throw new Error(`PORT must be a port number (0-65535), got "${raw}"`);
  return Number(raw);
}

/** Listens, turning the usual failures into sentences. */
async function listen(server: Server, port: number, host: string): Promise<void> {
  server.listen(port, host);
  const [err] = await Promise.race([once(server, 'listening').then(() => [undefined]), once(server, 'error')]);
  if (!err) return;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE')
    throw new Error(`port ${port} is in use on ${host}; stop what uses it or set PORT to another port`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
    throw new Error(`cannot listen on HOST=${host}: no such local address`);
  throw new Error(`cannot listen on ${host}:${port}: ${(err as Error).message}`);
}

function withWorkerFromEnv(raw = process.env.AGENT_SERVE_WORKER): boolean {
  if (raw === undefined || raw === '' || raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new Error(`AGENT_SERVE_WORKER must be true or false, got "${raw}"`);
}

/** Resolves on the first SIGINT or SIGTERM (the API alone has no worker whose runtime handles them). */
function stopSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

async function main(): Promise<void> {
  const port = portFromEnv();
  const withWorker = withWorkerFromEnv();
  const host = process.env.HOST || '127.0.0.1';
  const access = httpAccessFromEnv(process.env);
  // The environment, read once: the client's side (connection, keys, stores) and the worker's (model, tools).
  const client = clientSettings();
  const settings = workerSettings();
  const open = (access.tokens ?? []).length === 0;
  if (open && !isLoopback(host)) {
    throw new Error(
      `HOST=${host} would expose the API to the network without authentication: set AGENT_HTTP_TOKENS (comma-separated bearer tokens) or listen on 127.0.0.1`,
    );
  }
  installRuntimeLogging('WARN', client.logging);
  // Listen before anything else starts, so a busy port is reported as such and nothing is left running.
  let handler: ReturnType<typeof httpApiHandler> | undefined;
  const server = createServer((req, res) => {
    if (handler) return handler(req, res);
    res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '2' });
    res.end(JSON.stringify({ error: 'the server is still starting', errorType: 'Http.Starting' }));
  });
  await listen(server, port, host);
  try {
    const temporal = await connectTemporal({ persistent: true, announce: false }, client);
    try {
      const { taskQueue, model } = settings;
      const workflowUrlPrefix = temporal.uiUrl
        ? `${temporal.uiUrl}/namespaces/${encodeURIComponent(temporal.namespace)}/workflows/`
        : undefined;
      handler = httpApiHandler({
        client: temporal.client,
        taskQueue,
        workflowUrlPrefix,
        access,
        deployments: process.env.AGENT_HTTP_DEPLOYMENTS === 'manage' ? 'manage' : 'read',
      });
      const worker = !withWorker
        ? undefined
        : await createAgentWorker({
            connection: temporal.nativeConnection,
            namespace: temporal.namespace,
            taskQueue,
            registry: exampleToolRegistry(),
            agents: exampleAgents,
            settings,
          });
      const address = server.address() as AddressInfo;
      console.log(
        `durable-agents HTTP API on http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port} (task queue "${taskQueue}")`,
      );
      const base = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
      console.log(`Chat page: ${base}/${open ? '' : '?access_token=<token>'}`);
      console.log(
        open
          ? 'No AGENT_HTTP_TOKENS: it listens on loopback only, without authentication. Set AGENT_HTTP_TOKENS to require a bearer token (and to listen on other addresses with HOST).'
          : `Bearer tokens required (${access.tokens!.length} configured); GET /healthz is open.`,
      );
      if (access.corsOrigins?.length) console.log(`CORS: ${access.corsOrigins.join(', ')}`);
      if (access.rateLimitPerMinute)
        console.log(`Rate limit: ${access.rateLimitPerMinute} requests a minute per client`);
      for (const line of describeTemporal(temporal)) console.log(line);
      if (!worker)
        console.log(`No worker here (AGENT_SERVE_WORKER=false): workers of task queue "${taskQueue}" run elsewhere.`);
      else if (!model.configured)
        console.log('Warning: no OPENAI_API_KEY or OPENAI_BASE_URL set; model calls will fail until one is.');
      console.log('Press Ctrl+C to stop.');
      // SIGINT/SIGTERM stop the worker gracefully (the SDK's runtime handles them); then the HTTP server.
      await (worker ? worker.run() : stopSignal());
      console.log('Stopped.');
    } finally {
      // Requests first: closing their connections cancels their Temporal calls (see httpApiHandler).
      closeHttp(server);
      await temporal.close();
    }
  } finally {
    closeHttp(server);
  }
}

function closeHttp(server: Server): void {
  server.close();
  server.closeAllConnections();
}

main().catch((err) => {
  console.error(`serve: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
