import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { accessNotes, refuseOpenExposure } from './server-flags';
import type { A2ACommand } from './server-args';
import { inSession, type CommandTarget } from './session';
import { listAgents } from '../client/list-agents';
import { installRuntimeLogging } from '../telemetry/logging';
import { httpAccessFromEnv } from '../http/access';
import { httpApiHandler } from '../http/http-api';
import { httpServerSettingsFromEnv } from '../http/server-settings';
import { isRootAgentPath, loopbackAsLocalhost } from '../a2a/request-edge';

/**
 * `durable-agents a2a`: serves the named agents of the task queue's workers as A2A agents, at
 * `/a2a/<agent>` (the routes `serve` has too; see `a2a/a2a-server.ts`), behind the HTTP API's
 * access rules (AGENT_HTTP_TOKENS, CORS, rate limits). With the embedded dev server and a
 * `localWorker` (this repository's `client.ts`) it runs that worker in this process; otherwise it
 * is a client of the user's workers.
 */
export async function serveA2a(command: A2ACommand, target: CommandTarget): Promise<void> {
  const { settings, localWorker, taskQueue } = target;
  const access = httpAccessFromEnv(settings.env);
  const server = httpServerSettingsFromEnv(settings.env);
  refuseOpenExposure(command.host, access);
  const note = (line: string) => process.stderr.write(`${line}\n`);
  installRuntimeLogging('WARN', { ...settings.logging, handleSignals: false });
  const stopped = new AbortController();
  const stop = () => stopped.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await inSession({ taskQueue, settings, localWorker, note, needsWorker: true }, async (session) => {
      const agents = await listAgents(session.client, { taskQueue });
      const extend = target.module?.a2aServer;
      const api = httpApiHandler({
        client: session.client,
        taskQueue,
        access,
        chatPage: false,
        ...server,
        ...(extend ? { a2a: { ...server.a2a, extend } } : {}),
      });
      const http = createServer((req, res) => {
        const path = (req.url ?? '/').split('?')[0];
        if (path.startsWith('/a2a/') || path === '/healthz' || isRootAgentPath(req.method, path)) return api(req, res);
        res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
        res.end(
          JSON.stringify({
            error: `no route ${req.method} ${path}: this server has the A2A agents at /a2a/<agent> (${agents.map((a) => a.name).join(', ') || 'none'})`,
            errorType: 'Http.NotFound',
          }),
        );
      });
      try {
        http.listen(command.port, command.host);
        const [err] = await Promise.race([once(http, 'listening').then(() => [undefined]), once(http, 'error')]);
        if (err) throw new Error(`cannot listen on ${command.host}:${command.port}: ${(err as Error).message}`);
        const address = http.address() as AddressInfo;
        const local = `http://${loopbackAsLocalhost(address.family === 'IPv6' ? `[${address.address}]` : address.address)}:${address.port}`;
        const base = server.publicUrl ?? local;
        note(
          `durable-agents A2A server on ${local}${server.publicUrl ? `, public at ${server.publicUrl}` : ''} (task queue "${taskQueue}"):`,
        );
        const root = server.a2a?.defaultAgent ?? (agents.length === 1 ? agents[0].name : undefined);
        if (root) note(`  ${base}: ${root} (the default agent; its card at ${base}/.well-known/agent-card.json)`);
        for (const a of agents)
          note(`  ${a.name}: ${base}/a2a/${encodeURIComponent(a.name)}/.well-known/agent-card.json`);
        if (agents.length === 0) note(`Warning: the workers of task queue "${taskQueue}" serve no named agents.`);
        const grpc = server.a2a?.grpc
          ? await (
              await import('../a2a/a2a-grpc')
            ).listenA2aGrpc(await api.a2aGrpcService(), command.host, server.a2a.grpc.port)
          : undefined;
        if (grpc)
          note(
            `  gRPC (A2A 1.0): ${server.a2a?.grpc?.url ?? `${command.host}:${grpc.port}`}, each agent by its name as the tenant`,
          );
        for (const line of accessNotes(access)) note(line);
        try {
          await once(stopped.signal, 'abort');
        } finally {
          await grpc?.close();
        }
      } finally {
        http.close();
        http.closeAllConnections();
      }
    });
  } finally {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
  }
}
