import { randomBytes } from 'node:crypto';
import {
  McpServer,
  MissingRequiredClientCapabilityError,
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
import { SUPPORTED_PROTOCOL_VERSIONS as LEGACY_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import {
  RequiredCapabilities,
  sdkToolCallHandler,
  undecodedContext,
  type ModernExtensionContext,
} from '../mcp-server-extension';
import { modernAgentCall, type CallState } from './modern-calls';
import { callTask, ExtensionTasks, startedTask, taskPlaceholder } from './extension-tasks';
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
  /** Tells the HTTP handler's listening clients that lists changed (absent over stdio, where none listen). */
  notify?: ModernExtensionContext['notify'],
  /** The tasks of the extension's tools (one set for every request the endpoint serves). */
  tasks: ExtensionTasks = new ExtensionTasks(),
): McpServer {
  const server = new McpServer(
    { name: options.name ?? 'durable-agents', version: SERVER_VERSION },
    {
      instructions:
        'Each tool is a durable agent that runs as a Temporal workflow; results name the workflow id. Runs and conversations are resources (durable-agents://runs/{id}, durable-agents://conversations/{id}); each agent has a prompt with its examples.',
      capabilities: {
        completions: {},
        prompts: {},
        // Subscriptions over HTTP: a listen stream's `resourceSubscriptions` (listened-resources.ts).
        resources: notify ? { subscribe: true } : {},
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
  // The application's own tools, resources and prompts; the SDK's handler calls its tools.
  const required = new RequiredCapabilities();
  const signState = (state: Record<string, unknown>, ctx: ServerContext) =>
    codec.mint(state as unknown as CallState, ctx);
  options.extend?.modern?.(server, {
    ...(notify ? { notify } : {}),
    signState,
    requireClientCapabilities: (tool, capabilities) => required.require(tool, capabilities),
    task: async (ctx, work) =>
      clientTakesTasks(ctx)
        ? taskPlaceholder(tasks.start(tenantOf(ctx) ?? '', work))
        : work(callTask(ctx.mcpReq.signal)),
    taskSupport: (tool, support) => {
      const registered = (server as unknown as { _registeredTools: Record<string, { execution?: unknown }> })
        ._registeredTools[tool];
      if (!registered) throw new Error(`taskSupport("${tool}"): register the tool first`);
      registered.execution = { taskSupport: support };
      if (support === 'required') required.require(tool, { extensions: { [TASKS_EXTENSION]: {} } });
    },
  });
  const sdkCall = options.extend ? sdkToolCallHandler<ServerContext>(server) : undefined;
  server.server.setRequestHandler('tools/call', async (request, ctx) => {
    const agent = options.agents.find((a) => a.name === request.params.name);
    if (!agent && sdkCall) {
      required.check(request.params.name, ctx);
      const result = await sdkCall(request, await undecodedContext(ctx, signState));
      return (startedTask(result) ?? result) as never;
    }
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
  registerTasks(server, options, tasks);
  announceEveryRevision(server);
  return server;
}

/**
 * `server/discover` names every revision the endpoint serves: the SDK's v2 server lists its own
 * (2026-07-28), and the same endpoint answers a 2025-era `initialize` too (the session server,
 * `createAgentMcpServer`), which a client reading the list could not know otherwise.
 * Hand-written: the SDK lists modern revisions only, on purpose (a 2025 revision is negotiated by
 * `initialize`), and its serving entry installs the handler after our factory runs; the answer
 * comes from the instance's `_ondiscover`, which this wraps (a unit test fails when it moves).
 */
function announceEveryRevision(server: McpServer): void {
  const low = server.server as unknown as { _ondiscover?: () => { supportedVersions?: string[] } };
  const own = low._ondiscover?.bind(low);
  if (!own) return;
  low._ondiscover = () => {
    const answer = own();
    const modern = answer.supportedVersions ?? [];
    return { ...answer, supportedVersions: [...modern, ...LEGACY_VERSIONS.filter((v) => !modern.includes(v))] };
  };
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
function registerTasks(server: McpServer, options: AgentMcpServerOptions, tasks: ExtensionTasks): void {
  // Custom methods to the SDK (tasks left its core): registered with their own schemas. A client
  // that did not declare the extension is answered with the missing-capability error (-32021).
  // An extension tool's task is this process's (extension-tasks.ts), an agent's a durable run.
  const own = (taskId: string) => ExtensionTasks.owns(taskId);
  const found = <T>(taskId: string, answer: T | undefined | false): T => {
    if (answer === undefined || answer === false)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Task not found: ${taskId}`);
    return answer;
  };
  server.server.setRequestHandler('tasks/get', { params: TaskId }, (params, ctx) =>
    withTasks(ctx, async () =>
      own(params.taskId)
        ? { ...found(params.taskId, tasks.get(tenantOf(ctx) ?? '', params.taskId)), resultType: 'complete' }
        : getModernTask(options, params.taskId),
    ),
  );
  // The SDK lifts `inputResponses` out of every request's params, tasks/update's too.
  server.server.setRequestHandler('tasks/update', { params: TaskId }, (params, ctx) =>
    withTasks(ctx, async () =>
      own(params.taskId)
        ? (found(params.taskId, tasks.update(tenantOf(ctx) ?? '', params.taskId, ctx.mcpReq.inputResponses ?? {})), {})
        : updateModernTask(options, params.taskId, ctx.mcpReq.inputResponses ?? {}),
    ),
  );
  server.server.setRequestHandler('tasks/cancel', { params: TaskId }, (params, ctx) =>
    withTasks(ctx, async () =>
      own(params.taskId)
        ? (found(params.taskId, tasks.cancel(tenantOf(ctx) ?? '', params.taskId)), {})
        : cancelModernTask(options, params.taskId),
    ),
  );
}

/** `answer()`, for a client that declared the tasks extension; the revision's -32021 for one that did not. */
function withTasks<T>(ctx: ServerContext, answer: () => T): T {
  if (!clientTakesTasks(ctx))
    throw new MissingRequiredClientCapabilityError({
      requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
    });
  return answer();
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
