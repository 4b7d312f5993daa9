import type { A2AGrpcListener } from '../a2a/a2a-grpc';
import type { HttpApiHandler } from '../http/http-api';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CommandContext } from './command';
import { UsageError } from './option-flags';
import type { ServeCommand } from './server-args';
import { createLocalWorker, workerAgents } from './worker-command';

/** Listens, turning the usual failures into sentences. */
async function listen(server: Server, { port, host, portFrom, hostFrom }: ServeCommand): Promise<void> {
  server.listen(port, host);
  const [err] = await Promise.race([once(server, 'listening').then(() => [undefined]), once(server, 'error')]);
  if (!err) return;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE')
    throw new Error(
      `port ${port} is in use on ${host}; stop what uses it or ${portFrom === 'PORT' ? 'set PORT to' : 'give --port'} another port`,
    );
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
    throw new Error(`cannot listen on ${hostFrom === 'HOST' ? 'HOST=' : '--host '}${host}: no such local address`);
  throw new Error(`cannot listen on ${host}:${port}: ${(err as Error).message}`);
}

/** Resolves on the first SIGINT or SIGTERM (the API alone has no worker whose runtime handles them). */
function stopSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

/**
 * `serve`: the HTTP API (docs/http-api.md), its chat page, `useChat`, AG-UI and A2A routes, with a
 * worker in the same process (unless `--no-worker`). Without TEMPORAL_ADDRESS it starts (or
 * reuses) the embedded dev server. With AGENT_HTTP_TOKENS every request but GET /healthz needs one
 * of the tokens; without tokens it refuses to listen anywhere but on loopback.
 */
export async function runServeCommand(command: ServeCommand, { target, io }: CommandContext): Promise<number> {
  const { httpAccessFromEnv, isLoopback } = await import('../http/access');
  const { httpApiHandler } = await import('../http/http-api');
  const { installRuntimeLogging } = await import('../telemetry/logging');
  const { connectTemporal, describeTemporal } = await import('../connection/temporal-env');
  const { settings, taskQueue } = target;
  const { host } = command;
  const access = httpAccessFromEnv(settings.env);
  const httpServerSettings = (await import('../http/server-settings')).httpServerSettingsFromEnv(settings.env);
  const open = (access.tokens ?? []).length === 0;
  if (open && !isLoopback(host))
    throw new UsageError(
      `${command.hostFrom === 'HOST' ? 'HOST=' : '--host '}${host} would expose the API to the network without authentication: set AGENT_HTTP_TOKENS (comma-separated bearer tokens) or listen on 127.0.0.1`,
    );
  const local = command.withWorker ? workerAgents(command.module, target.localWorker) : undefined;
  const workerSettings = command.withWorker
    ? (await import('../worker/settings')).workerSettings({ taskQueue }, settings.env)
    : undefined;
  installRuntimeLogging('WARN', settings.logging);
  // Listen before anything else starts, so a busy port is reported as such and nothing is left running.
  let handler: ReturnType<typeof httpApiHandler> | undefined;
  const server = createServer((req, res) => {
    if (handler) return handler(req, res);
    res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '2' });
    res.end(JSON.stringify({ error: 'the server is still starting', errorType: 'Http.Starting' }));
  });
  await listen(server, command);
  let grpc: A2AGrpcListener | undefined;
  try {
    const temporal = await connectTemporal({ persistent: true, announce: false }, settings);
    try {
      const workflowUrlPrefix = temporal.uiUrl
        ? `${temporal.uiUrl}/namespaces/${encodeURIComponent(temporal.namespace)}/workflows/`
        : undefined;
      handler = httpApiHandler({
        client: temporal.client,
        taskQueue,
        fleetTaskQueue: settings.fleetTaskQueue,
        workflowUrlPrefix,
        access,
        deployments: settings.env.AGENT_HTTP_DEPLOYMENTS === 'manage' ? 'manage' : 'read',
        ...httpServerSettings,
      });
      const worker = local && workerSettings ? await createLocalWorker(temporal, local, workerSettings) : undefined;
      grpc = await listenGrpc(handler, host, httpServerSettings.a2a?.grpc?.port, io.stdout);
      const address = server.address() as AddressInfo;
      const base = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
      io.stdout(`durable-agents HTTP API on ${base} (task queue "${taskQueue}")`);
      io.stdout(`Chat page: ${base}/${open ? '' : '?access_token=<token>'}`);
      io.stdout(
        open
          ? 'No AGENT_HTTP_TOKENS: it listens on loopback only, without authentication. Set AGENT_HTTP_TOKENS to require a bearer token (and to listen on other addresses with HOST).'
          : `Bearer tokens required (${access.tokens!.length} configured); GET /healthz is open.`,
      );
      if (access.corsOrigins?.length) io.stdout(`CORS: ${access.corsOrigins.join(', ')}`);
      if (access.rateLimitPerMinute) io.stdout(`Rate limit: ${access.rateLimitPerMinute} requests a minute per client`);
      for (const line of describeTemporal(temporal)) io.stdout(line);
      if (!worker)
        io.stdout(
          `No worker here (--no-worker or AGENT_SERVE_WORKER=false): workers of task queue "${taskQueue}" run elsewhere.`,
        );
      else if (!workerSettings!.model.configured)
        io.stdout('Warning: no OPENAI_API_KEY or OPENAI_BASE_URL set; model calls will fail until one is.');
      io.stdout('Press Ctrl+C to stop.');
      // SIGINT/SIGTERM stop the worker gracefully (the SDK's runtime handles them); then the HTTP server.
      await (worker ? worker.run() : stopSignal());
      io.stdout('Stopped.');
      return 0;
    } finally {
      // Requests first: closing their connections cancels their Temporal calls (see httpApiHandler).
      closeHttp(server);
      await grpc?.close();
      await temporal.close();
    }
  } finally {
    closeHttp(server);
  }
}

/** A2A's gRPC binding beside the HTTP API, when AGENT_A2A_GRPC_PORT asks for it. */
async function listenGrpc(
  handler: HttpApiHandler,
  host: string,
  port: number | undefined,
  say: (line: string) => void,
): Promise<A2AGrpcListener | undefined> {
  if (port === undefined) return undefined;
  const grpc = await (await import('../a2a/a2a-grpc')).listenA2aGrpc(await handler.a2aGrpcService(), host, port);
  say(`A2A over gRPC on ${host}:${grpc.port} (the cards declare it; each agent by its name as the tenant)`);
  return grpc;
}

function closeHttp(server: Server): void {
  server.close();
  server.closeAllConnections();
}
