import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Worker } from '@temporalio/worker';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { modelConfigFromEnv } from '../activities';
import type { AgentSummary } from '../agents/agent-registry';
import { parseFlags, taskQueueProblem, UsageError } from '../cli/option-flags';
import { TASK_QUEUE_HINT, type LocalWorker } from '../cli/session';
import { createAgentWorker, defaultTaskQueue } from '../runtime/agent-worker';
import { listAgents } from '../runtime/list-agents';
import { installRuntimeLogging } from '../runtime/logging';
import { requireWorker } from '../runtime/task-queue-workers';
import { connectTemporal, describeTemporal, workflowUrl } from '../runtime/temporal-env';
import { accessChecker, httpAccessFromEnv, isLoopback, type HttpAccessOptions } from '../http/access';
import { createAgentMcpServer, type AgentMcpServerOptions } from './agent-mcp-server';
import { mcpServersFromEnv } from './mcp-config';

/** The usage line of `mcp`. */
export const MCP_USAGE = 'usage: mcp [--http] [--port 3001] [--host 127.0.0.1] [--agents a,b] [--task-queue NAME]';

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
  const { values, positionals } = parseFlags(argv, { http: { type: 'boolean', default: false }, port: { type: 'string' }, host: { type: 'string' }, agents: { type: 'string' }, 'task-queue': { type: 'string' } });
  if (positionals.length) throw new UsageError(`mcp takes no arguments, got ${positionals.join(' ')}`);
  const port = values.port === undefined ? 3001 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be a port number (0-65535), got "${values.port}"`);
  if (!values.http && (values.port !== undefined || values.host !== undefined)) throw new UsageError('--port and --host go with --http (stdio needs neither)');
  const command: McpCommand = { transport: values.http ? 'http' : 'stdio', port, host: values.host ?? '127.0.0.1' };
  if (values.agents !== undefined) command.agents = values.agents.split(',').map((a) => a.trim()).filter(Boolean);
  if (values['task-queue'] !== undefined) {
    const problem = taskQueueProblem(values['task-queue']);
    if (problem) throw new UsageError(problem);
    command.taskQueue = values['task-queue'];
  }
  return command;
}

/**
 * `npm run mcp` / `durable-agents mcp`: serves the named agents of the task queue's workers as MCP
 * tools, over stdio (for clients that start it as a command) or streamable HTTP (`--http`). With
 * the embedded dev server and a `localWorker` (this repository's `npm run mcp`) it runs that
 * worker in this process, as `client.ts` does; otherwise it is a client of the user's workers.
 * Everything it says goes to stderr: on stdio, stdout belongs to the protocol.
 */
export async function serveMcp(argv: string[], localWorker?: LocalWorker): Promise<void> {
  const command = parseMcpArgs(argv);
  // The same bearer tokens, CORS origins and rate limit as the HTTP API (AGENT_HTTP_*).
  const access = command.transport === 'http' ? httpAccessFromEnv() : {};
  if (command.transport === 'http' && !access.tokens?.length && !isLoopback(command.host)) {
    throw new UsageError(`--host ${command.host} would expose the agents to the network without authentication: set AGENT_HTTP_TOKENS (comma-separated bearer tokens) or keep the default 127.0.0.1`);
  }
  const note = (line: string) => process.stderr.write(`${line}\n`);
  installRuntimeLogging('WARN', { handleSignals: false });
  const mcpServers = localWorker ? (localWorker.mcpServers ?? mcpServersFromEnv()) : {};
  const temporal = await connectTemporal({ persistent: true, start: localWorker !== undefined, announce: false });
  const taskQueue = command.taskQueue ?? defaultTaskQueue();
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
      worker = await createAgentWorker({ connection: temporal.nativeConnection, namespace: temporal.namespace, taskQueue, model: localWorker.model ?? modelConfigFromEnv(), registry: localWorker.registry, agents: localWorker.agents, mcpServers });
      workerDone = worker.run();
    } else await requireWorker(temporal.client, taskQueue, TASK_QUEUE_HINT);
    let agents: AgentSummary[] = await listAgents(temporal.client, { taskQueue });
    if (command.agents) {
      const unknown = command.agents.filter((a) => !agents.some((s) => s.name === a));
      if (unknown.length) throw new UsageError(`--agents: no agent named ${unknown.join(', ')} on task queue "${taskQueue}" (agents: ${agents.map((a) => a.name).join(', ') || 'none'})`);
      agents = agents.filter((a) => command.agents!.includes(a.name));
    }
    if (agents.length === 0) note(`Warning: the workers of task queue "${taskQueue}" serve no named agents, so there are no tools to offer.`);
    const options = { client: temporal.client, taskQueue, agents, workflowUrl: (id: string) => workflowUrl(temporal.uiUrl, temporal.namespace, id) };
    if (command.transport === 'stdio') {
      const transport = new StdioServerTransport();
      const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
      // The client closing stdin is the end of the session.
      process.stdin.once('end', stop);
      await createAgentMcpServer(options).connect(transport);
      note(`durable-agents MCP server on stdio: agents ${agents.map((a) => a.name).join(', ') || 'none'} (task queue "${taskQueue}")`);
      await Promise.race([closed, once(stopped.signal, 'abort')]);
      await transport.close().catch(() => undefined);
    } else {
      http = createMcpHttpServer(options, access);
      http.listen(command.port, command.host);
      const [err] = await Promise.race([once(http, 'listening').then(() => [undefined]), once(http, 'error')]);
      if (err) throw new Error(`cannot listen on ${command.host}:${command.port}: ${(err as Error).message}`);
      const address = http.address() as AddressInfo;
      note(`durable-agents MCP server on http://${address.address}:${address.port}/mcp (streamable HTTP): agents ${agents.map((a) => a.name).join(', ') || 'none'} (task queue "${taskQueue}")`);
      note(access.tokens?.length ? `Bearer tokens required (${access.tokens.length} configured).` : 'No AGENT_HTTP_TOKENS: loopback only, without authentication.');
      note('Press Ctrl+C to stop.');
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

/**
 * The agents as an MCP server over streamable HTTP, at `/mcp`, stateless, behind the HTTP API's
 * access rules (tokens, CORS, rate limit). Every request is answered, whatever it holds, and
 * none ends the server.
 */
export function createMcpHttpServer(options: AgentMcpServerOptions, access: HttpAccessOptions): Server {
  const checkAccess = accessChecker(access);
  return createServer((req, res) => {
    try {
      if (checkAccess(req, res) === 'allowed') {
        handleHttp(req, res, () => createAgentMcpServer(options)).catch((err: unknown) => internalError(res, err));
      }
    } catch (err) {
      internalError(res, err);
    }
  });
}

function internalError(res: ServerResponse, err: unknown): void {
  if (res.headersSent) return void res.end();
  res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: (err as Error)?.message ?? String(err) }, id: null }));
}

/**
 * One HTTP request, stateless: a server and transport of its own (no sessions to keep across
 * requests or processes). Calls are the only requests a client needs to keep.
 */
async function handleHttp(req: IncomingMessage, res: ServerResponse, server: () => ReturnType<typeof createAgentMcpServer>): Promise<void> {
  const path = (req.url ?? '').split('?')[0];
  if (path !== '/mcp') {
    res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not found: the MCP endpoint is /mcp' }));
    return;
  }
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'POST', 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this server is stateless (POST only)' }, id: null }));
    return;
  }
  const mcp = server();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => {
    void transport.close();
    void mcp.close();
  });
  try {
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  } catch (err) {
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: (err as Error).message }, id: randomUUID() }));
  }
}
