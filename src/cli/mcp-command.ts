import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import type { AgentSummary } from '../contracts/activity-interface';
import { UsageError } from './option-flags';
import { accessNotes, refuseOpenExposure } from './server-flags';
import type { McpCommand } from './server-args';
import { TASK_QUEUE_HINT, type CommandTarget } from './session';
import { listAgents } from '../client/list-agents';
import { installRuntimeLogging } from '../telemetry/logging';
import { requireWorker } from '../client/task-queue-workers';
import { connectTemporal, describeTemporal, workflowUrl } from '../connection/temporal-env';
import { httpAccessFromEnv } from '../http/access';
import { serveAgentsOverStdio } from '../mcp-server/stdio-server';
import { httpServerSettingsFromEnv } from '../http/server-settings';
import { createMcpHttpServer } from '../mcp-server/mcp-http-server';
import { mcpServersFromEnv } from '../tools/mcp-client/mcp-config';

/**
 * `npm run mcp` / `durable-agents mcp`: serves the named agents of the task queue's workers as MCP
 * tools, over stdio (for clients that start it as a command) or streamable HTTP (`--http`). With
 * the embedded dev server and a `localWorker` (this repository's `npm run mcp`) it runs that
 * worker in this process, as `client.ts` does; otherwise it is a client of the user's workers.
 * Everything it says goes to stderr: on stdio, stdout belongs to the protocol.
 */
export async function serveMcp(command: McpCommand, target: CommandTarget): Promise<void> {
  const { settings, localWorker, taskQueue } = target;
  // The same bearer tokens, CORS origins and rate limit as the HTTP API (AGENT_HTTP_*).
  const access = command.transport === 'http' ? httpAccessFromEnv(settings.env) : {};
  const { mcpStateKey } = httpServerSettingsFromEnv(settings.env);
  if (command.transport === 'http') refuseOpenExposure(command.host, access);
  const note = (line: string) => process.stderr.write(`${line}\n`);
  installRuntimeLogging('WARN', { ...settings.logging, handleSignals: false });
  const mcpServers = localWorker ? (localWorker.mcpServers ?? mcpServersFromEnv(settings.env)) : {};
  const temporal = await connectTemporal(
    { persistent: true, start: localWorker !== undefined, announce: false },
    settings,
  );
  let worker: Worker | undefined;
  let workerDone: Promise<void> | undefined;
  let http: Server | undefined;
  const stopped = new AbortController();
  const stop = () => stopped.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    for (const line of describeTemporal(temporal)) note(line);
    if ((temporal.mode !== 'configured' || localWorker?.onAnyServer) && localWorker) {
      const { createAgentWorker } = await import('../worker/create-agent-worker');
      worker = await createAgentWorker({
        connection: temporal.nativeConnection,
        namespace: temporal.namespace,
        taskQueue,
        model: localWorker.model,
        registry: localWorker.registry,
        agents: localWorker.agents,
        mcpServers,
        deployment: false, // the command's own worker on the embedded server
      });
      workerDone = worker.run();
    } else await requireWorker(temporal.client, taskQueue, TASK_QUEUE_HINT);
    const agents = await servedAgents(temporal.client, command, taskQueue, note);
    const options = {
      ...(mcpStateKey ? { requestStateKey: mcpStateKey } : {}),
      client: temporal.client,
      taskQueue,
      agents,
      workflowUrl: (id: string) => workflowUrl(temporal.uiUrl, temporal.namespace, id),
      ...(target.module?.mcpServer ? { extend: target.module.mcpServer } : {}),
    };
    if (command.transport === 'stdio') await onStdio(options, stopped.signal, stop, note);
    else http = await onHttp(options, command, access, stopped.signal, note);
  } finally {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
    if (http) {
      http.close();
      http.closeAllConnections();
    }
    if (worker && worker.getState() === 'RUNNING') worker.shutdown();
    await workerDone?.catch(() => undefined);
    await temporal.close();
  }
}

/** The agents to serve: the task queue's named agents, or those `--agents` names (each must be one). */
async function servedAgents(
  client: Client,
  command: McpCommand,
  taskQueue: string,
  note: (line: string) => void,
): Promise<AgentSummary[]> {
  let agents: AgentSummary[] = await listAgents(client, { taskQueue });
  if (command.agents) {
    const unknown = command.agents.filter((a) => !agents.some((s) => s.name === a));
    if (unknown.length)
      throw new UsageError(
        `--agents: no agent named ${unknown.join(', ')} on task queue "${taskQueue}" (agents: ${agents.map((a) => a.name).join(', ') || 'none'})`,
      );
    agents = agents.filter((a) => command.agents!.includes(a.name));
  }
  if (agents.length === 0)
    note(`Warning: the workers of task queue "${taskQueue}" serve no named agents, so there are no tools to offer.`);
  return agents;
}

type ServeOptions = Parameters<typeof serveAgentsOverStdio>[0];

/** Serves on stdio until the client closes stdin (the end of the session) or a signal stops it. */
async function onStdio(options: ServeOptions, stopped: AbortSignal, stop: () => void, note: (line: string) => void) {
  process.stdin.once('end', stop);
  note(
    `durable-agents MCP server on stdio: agents ${options.agents.map((a) => a.name).join(', ') || 'none'} (task queue "${options.taskQueue}")`,
  );
  const serving = serveAgentsOverStdio(options);
  const connection = await Promise.race([serving, once(stopped, 'abort').then(() => undefined)]);
  if (connection) {
    await Promise.race([connection.closed, once(stopped, 'abort')]);
    await connection.close().catch(() => undefined);
  } else void serving.then((c) => c.close()).catch(() => undefined);
}

/** Serves streamable HTTP on the command's host and port until a signal stops it; the server, to close. */
async function onHttp(
  options: ServeOptions,
  command: McpCommand,
  access: ReturnType<typeof httpAccessFromEnv>,
  stopped: AbortSignal,
  note: (line: string) => void,
): Promise<Server> {
  const http = createMcpHttpServer(options, access);
  http.listen(command.port, command.host);
  const [err] = await Promise.race([once(http, 'listening').then(() => [undefined]), once(http, 'error')]);
  if (err) {
    http.close();
    throw new Error(`cannot listen on ${command.host}:${command.port}: ${(err as Error).message}`);
  }
  const address = http.address() as AddressInfo;
  note(
    `durable-agents MCP server on http://${address.address}:${address.port}/mcp (streamable HTTP): agents ${options.agents.map((a) => a.name).join(', ') || 'none'} (task queue "${options.taskQueue}")`,
  );
  for (const line of accessNotes(access)) note(line);
  await once(stopped, 'abort');
  return http;
}
