import { randomBytes } from 'node:crypto';
import {
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceTemplate,
  createRequestStateCodec,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ARGUMENTS, agentArguments, forCall } from '../mcp-agent-tools';
import { complete, agentPrompt, promptMetadata, PROMPT_ARGUMENTS } from '../mcp-prompts';
import { listAgentResources, readAgentResource, resourceTemplate } from '../mcp-resources';
import type { AgentMcpServerOptions } from '../mcp-server-options';
import { modernAgentCall, type CallState } from './modern-calls';
import {
  TASKS_EXTENSION,
  cancelModernTask,
  clientTakesTasks,
  getModernTask,
  startModernTask,
  updateModernTask,
} from './modern-tasks';

/**
 * The agents as an MCP server on the 2026-07-28 revision, on the official SDK's v2 server
 * (`@modelcontextprotocol/server`): one instance per request (the revision is stateless; the
 * HTTP server builds it for each), with the same tools, resources, prompts and completions as
 * the 2025-11-25 server (`createAgentMcpServer`), approvals as `input_required` rounds
 * (modern-calls.ts) and tasks through the tasks extension (modern-tasks.ts). What the revision
 * deprecates (logging's `setLevel`: the level rides in each request) or replaces (resource
 * subscriptions: `subscriptions/listen`) is served on 2025-11-25 only; see docs/mcp.md.
 */
export function createModernAgentMcpServer(
  options: AgentMcpServerOptions,
  codec: RequestStateCodec<CallState>,
): McpServer {
  const server = new McpServer(
    { name: options.name ?? 'durable-agents', version: SERVER_VERSION },
    {
      instructions:
        'Each tool is a durable agent that runs as a Temporal workflow; results name the workflow id. Runs and conversations are resources (durable-agents://runs/{id}, durable-agents://conversations/{id}); each agent has a prompt with its examples.',
      capabilities: {
        completions: {},
        prompts: {},
        resources: {},
        tools: {},
        extensions: { [TASKS_EXTENSION]: {} },
      },
      requestState: { verify: codec.verify },
    },
  );
  for (const agent of options.agents)
    server.registerTool(
      agent.name,
      {
        title: agent.name,
        description: `${agent.description ?? `The ${agent.name} agent.`} A durable agent (a Temporal workflow${agent.tools.length ? `; tools: ${agent.tools.join(', ')}` : ''}). Pass conversationId to keep talking in one conversation.`,
        inputSchema: z.object(ARGUMENTS),
      },
      // Not called: tools/call is answered below (a task is no tool result).
      () => ({ content: [] }),
    );
  server.server.setRequestHandler('tools/call', async (request, ctx) => {
    const agent = options.agents.find((a) => a.name === request.params.name);
    if (!agent) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
    const parsed = agentArguments(agent.name, request.params.arguments);
    if ('problem' in parsed) return { isError: true, content: [{ type: 'text', text: parsed.problem }] };
    const { message, conversationId } = parsed;
    const call = forCall(options, request.params._meta);
    try {
      // A run for a client that takes tasks is a task (a conversation's turn is answered in the call).
      if (!conversationId && !ctx.mcpReq.requestState() && clientTakesTasks(ctx))
        return (await startModernTask(call, agent.name, message)) as never;
      return await modernAgentCall(call, agent.name, message, conversationId, ctx, codec);
    } catch (err) {
      if (err instanceof ProtocolError) throw err;
      return { isError: true, content: [{ type: 'text', text: err instanceof Error ? err.message : String(err) }] };
    }
  });
  registerResources(server, options);
  for (const agent of options.agents)
    server.registerPrompt(agent.name, { ...promptMetadata(agent), argsSchema: z.object(PROMPT_ARGUMENTS) }, (args) =>
      agentPrompt(agent, args.message),
    );
  server.server.setRequestHandler('completion/complete', async (request) => ({
    completion: await complete(options, request.params),
  }));
  registerTasks(server, options);
  return server;
}

/** The server version this package reports to clients. */
const SERVER_VERSION = '0.2.0';

/** Runs and conversations as resource templates, as on 2025-11-25 (without subscriptions). */
function registerResources(server: McpServer, options: AgentMcpServerOptions): void {
  const scope = options.scope ?? {};
  for (const kind of ['run', 'conversation'] as const) {
    const { name, template, metadata } = resourceTemplate(kind);
    server.registerResource(
      name,
      new ResourceTemplate(template, {
        list: () => listAgentResources(options.client, options.taskQueue, scope, kind),
      }),
      metadata,
      (uri, { id }) =>
        readAgentResource(
          options.client,
          uri.href,
          String(id),
          scope,
          (m) => new ProtocolError(ProtocolErrorCode.InvalidParams, m),
        ),
    );
  }
}

const TaskId = z.object({ taskId: z.string().min(1) });

/** The tasks extension's methods (modern-tasks.ts). */
function registerTasks(server: McpServer, options: AgentMcpServerOptions): void {
  // Custom methods to the SDK (tasks left its core): registered with their own schemas.
  server.server.setRequestHandler('tasks/get', { params: TaskId }, (params) => getModernTask(options, params.taskId));
  // The SDK lifts `inputResponses` out of every request's params, tasks/update's too.
  server.server.setRequestHandler('tasks/update', { params: TaskId }, (params, ctx) =>
    updateModernTask(options, params.taskId, ctx.mcpReq.inputResponses ?? {}),
  );
  server.server.setRequestHandler('tasks/cancel', { params: TaskId }, (params) =>
    cancelModernTask(options, params.taskId),
  );
}

/**
 * The codec that signs a call's `requestState`: HMAC with `key` (at least 32 bytes: give every
 * replica the same one, `AGENT_MCP_STATE_KEY`), or a random key of this process when none is
 * given (then one process must serve all of a call's rounds). The state is bound to the tenant
 * the request acts for, and lives a day: a person may take that long to answer.
 */
export function requestStateCodec(key: string | undefined): RequestStateCodec<CallState> {
  return createRequestStateCodec<CallState>({
    key: key ?? randomBytes(32),
    ttlSeconds: 24 * 3600,
    bind: (ctx) => tenantOf(ctx) ?? '',
  });
}

/** The tenant a request acts for, as the HTTP server passes it (`authInfo.extra.tenant`). */
function tenantOf(ctx: ServerContext): string | undefined {
  const tenant = ctx.http?.authInfo?.extra?.tenant;
  return typeof tenant === 'string' ? tenant : undefined;
}
