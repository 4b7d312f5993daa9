import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Worker } from '@temporalio/worker';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { AgentSummary } from '../common/activity-interface';
import { parseFlags, UsageError } from './option-flags';
import { accessNotes, refuseOpenExposure, serverFlags } from './server-flags';
import { TASK_QUEUE_HINT, type LocalWorker } from './session';
import { clientSettings, type ClientSettings } from '../connection/settings';
import { createAgentWorker } from '../worker/create-agent-worker';
import { listAgents } from '../client/list-agents';
import { installRuntimeLogging } from '../telemetry/logging';
import { requireWorker } from '../client/task-queue-workers';
import { connectTemporal, describeTemporal, workflowUrl } from '../connection/temporal-env';
import { httpAccessFromEnv } from '../http/access';
import { createAgentMcpServer } from '../mcp/agent-mcp-server';
import { createMcpHttpServer } from '../mcp/mcp-http-server';
import { mcpServersFromEnv } from '../tools/mcp/mcp-config';
import { mcpLogin, MCP_LOGIN_USAGE } from './mcp-login-command';

/** The usage line of `mcp`. */
export const MCP_USAGE = `usage: mcp [--http] [--port 3001] [--host 127.0.0.1] [--agents a,b] [--task-queue NAME]\n       ${MCP_LOGIN_USAGE.replace('usage: ', '')}`;

/** A parsed `mcp` command line. */
export interface McpCommand {
  transport: 'stdio' | 'http';
  port: number;
  host: string;
  /** Offer only these agents (default: every agent of the task queue's workers). */
  agents?: string[];
  /** The workers' task queue (default `AGENT_TASK_QUEUE`, else `agents`). */
  taskQueue?: string;
}

/** Parses `mcp` arguments. */
export function parseMcpArgs(argv: string[]): McpCommand {
  const { values, positionals } = parseFlags(argv, {
    http: { type: 'boolean', default: false },
    port: { type: 'string' },
    host: { type: 'string' },
    agents: { type: 'string' },
    'task-queue': { type: 'string' },
  });
  if (positionals.length) throw new UsageError(`mcp takes no arguments, got ${positionals.join(' ')}`);
  if (!values.http && (values.port !== undefined || values.host !== undefined))
    throw new UsageError('--port and --host go with --http (stdio needs neither)');
  const command: McpCommand = { transport: values.http ? 'http' : 'stdio', ...serverFlags(values, 3001) };
  if (values.agents !== undefined)
    command.agents = values.agents
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean);
  return command;
}

/**
 * `npm run mcp` / `durable-agents mcp`: serves the named agents of the task queue's workers as MCP
 * tools, over stdio (for clients that start it as a command) or streamable HTTP (`--http`). With
 * the embedded dev server and a `localWorker` (this repository's `npm run mcp`) it runs that
 * worker in this process, as `client.ts` does; otherwise it is a client of the user's workers.
 * Everything it says goes to stderr: on stdio, stdout belongs to the protocol.
 */
export async function serveMcp(
  argv: string[],
  localWorker?: LocalWorker,
  settings: ClientSettings = clientSettings(),
): Promise<void> {
  if (argv[0] === 'login') return mcpLogin(argv.slice(1), settings.env);
  const command = parseMcpArgs(argv);
  // The same bearer tokens, CORS origins and rate limit as the HTTP API (AGENT_HTTP_*).
  const access = command.transport === 'http' ? httpAccessFromEnv(settings.env) : {};
  if (command.transport === 'http') refuseOpenExposure(command.host, access);
  const note = (line: string) => process.stderr.write(`${line}\n`);
  installRuntimeLogging('WARN', { ...settings.logging, handleSignals: false });
  const mcpServers = localWorker ? (localWorker.mcpServers ?? mcpServersFromEnv(settings.env)) : {};
  const temporal = await connectTemporal(
    { persistent: true, start: localWorker !== undefined, announce: false },
    settings,
  );
  const taskQueue = command.taskQueue ?? settings.taskQueue;
  let worker: Worker | undefined;
  let workerDone: Promise<void> | undefined;
  let http: Server | undefined;
  const stopped = new AbortController();
  const stop = () => stopped.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    for (const line of describeTemporal(temporal)) note(line);
    if (temporal.mode !== 'configured' && localWorker) {
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
    let agents: AgentSummary[] = await listAgents(temporal.client, { taskQueue });
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
    const options = {
      client: temporal.client,
      taskQueue,
      agents,
      workflowUrl: (id: string) => workflowUrl(temporal.uiUrl, temporal.namespace, id),
    };
    if (command.transport === 'stdio') {
      const transport = new StdioServerTransport();
      const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
      // The client closing stdin is the end of the session.
      process.stdin.once('end', stop);
      await createAgentMcpServer(options).connect(transport);
      note(
        `durable-agents MCP server on stdio: agents ${agents.map((a) => a.name).join(', ') || 'none'} (task queue "${taskQueue}")`,
      );
      await Promise.race([closed, once(stopped.signal, 'abort')]);
      await transport.close().catch(() => undefined);
    } else {
      http = createMcpHttpServer(options, access);
      http.listen(command.port, command.host);
      const [err] = await Promise.race([once(http, 'listening').then(() => [undefined]), once(http, 'error')]);
      if (err) throw new Error(`cannot listen on ${command.host}:${command.port}: ${(err as Error).message}`);
      const address = http.address() as AddressInfo;
      note(
        `durable-agents MCP server on http://${address.address}:${address.port}/mcp (streamable HTTP): agents ${agents.map((a) => a.name).join(', ') || 'none'} (task queue "${taskQueue}")`,
      );
      for (const line of accessNotes(access)) note(line);
      await once(stopped.signal, 'abort');
    }
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
