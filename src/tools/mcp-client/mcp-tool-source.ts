import { DELEGATED_BY_KEY } from '../../core/policies/policies';
import { ApplicationFailure } from '@temporalio/common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import { parseDuration } from '../../core/time/duration';
import { defineJsonSchemaTool, type ToolContext } from '../define-tool';
import type { JsonSchema } from '../../models/json-schema';
import type { ToolRegistry } from '../registry';
import { ToolError } from '../tool-error';
import { isHttpServer, type McpServerConfig, type McpServers } from './mcp-config';
import { mcpToolOutput } from './mcp-result';
import type { ToolOutput } from '../tool-output';
import { mcpToolNames } from './mcp-tool-names';
import { AskModel, AskPerson, elicit, sample, type InFlightCall } from './mcp-server-requests';
import { loginNeeded, mcpAuthProvider, McpTokenStore, modernAuthProvider } from './mcp-oauth';
import { ProtocolError } from '@modelcontextprotocol/client';
import { connectModern, connectModernStdio, ModernClient } from './modern-connection';

/** A server's client: on MCP 2026-07-28 (the SDK's v2), or on 2025-11-25 and before (SDK 1.x). */
type Connection = Client | ModernClient;

/** A tool call's result, as either SDK gives it (`toolResult`: the pre-2024-11-05 shape). */
type CallResult = { content?: unknown; structuredContent?: unknown; isError?: boolean; toolResult?: unknown };

/** How long connecting to a server (spawn or HTTP, plus the MCP handshake) may take. */
const CONNECT_TIMEOUT_MS = 30_000;
const DEFAULT_TOOL_TIMEOUT_MS = 60_000;

/** JSON-RPC errors that are about the call itself (arguments, the tool's name): the LLM can fix those. */
const CALL_ERRORS = new Set<number>([
  ErrorCode.InvalidParams,
  ErrorCode.MethodNotFound,
  ErrorCode.InvalidRequest,
  ErrorCode.ParseError,
  ErrorCode.InternalError,
]);

/** One server's connection and what it offers. */
interface ServerState {
  config: McpServerConfig;
  /** A tenant's own connection to a server with logins (`mcp login --tenant`): made with its login. */
  tenant?: string;
  client?: Connection;
  connecting?: Promise<Connection>;
  /** LLM-facing tool names registered for this server. */
  registered: string[];
  discovered: boolean;
  /** The server said its tool list changed: list it again when next asked. */
  stale: boolean;
  discovering?: Promise<void>;
  /** Fails the calls in flight on this connection (see `connect`). */
  inflight: Set<(err: Error) => void>;
  /** The calls in flight, oldest first: a server's elicitation is asked for the oldest (see `connect`). */
  calls: Set<InFlightCall>;
}

/** Where log lines go (the worker's logger by default). */
export interface McpLogger {
  warn(message: string, meta?: Record<string, unknown>): void;
}

/**
 * Attempts of an MCP tool call whose server cannot be reached: 1 s, 2 s, 4 s, 8 s and 16 s apart,
 * so a call rides out a server that takes half a minute to come back (a deploy, a restart on a
 * busy machine), where 3 attempts gave up after 3 s. Only an unreachable server is retried: the
 * tool's own errors go back to the model.
 */
const DEFAULT_MCP_ATTEMPTS = 6;

/**
 * The worker's MCP servers: one pooled connection per server, opened on first use and opened
 * again after the server went away (a stdio server that exited is started again; an HTTP server
 * that restarted gets a new session). Their tools are listed when the worker starts and whenever
 * a run needs them and the list is missing or the server said it changed, and registered in the
 * worker's tool registry as `<server>__<tool>`, so runs resolve, describe and execute them like
 * any other tool: each call is one tool activity, with the tool's timeout and retries.
 *
 * Results: text parts joined, other parts described (see `mcpResultText`), images passed on to
 * models that take them (`mcpToolOutput`). An `isError` result and JSON-RPC errors about the call (bad arguments, unknown tool) go back to the LLM as the tool's
 * error. A server that cannot be reached fails the attempt with `Mcp.Unavailable` (retryable), so
 * Temporal tries again, on a fresh connection, under the tool's retry policy.
 */
export class McpToolSource {
  private readonly servers = new Map<string, ServerState>();
  /** Tenants' own connections to servers people log in to (see `stateFor`). */
  private readonly tenantStates = new Map<string, ServerState>();

  private readonly logger: McpLogger;
  private readonly tokens: McpTokenStore;

  constructor(
    servers: McpServers,
    private readonly registry: ToolRegistry,
    /** Where log lines go; where logins to servers with `oauth` are kept (see mcp-oauth.ts). */
    options: { logger?: McpLogger; tokens?: McpTokenStore } = {},
  ) {
    this.logger = options.logger ?? { warn: (message) => process.stderr.write(`durable-agents: ${message}\n`) };
    this.tokens = options.tokens ?? new McpTokenStore();
    for (const [name, config] of Object.entries(servers))
      this.servers.set(name, {
        config,
        registered: [],
        discovered: false,
        stale: false,
        inflight: new Set(),
        calls: new Set(),
      });
  }

  /** The configured server names. */
  serverNames(): string[] {
    return [...this.servers.keys()];
  }

  has(server: string): boolean {
    return this.servers.has(server);
  }

  /** The server an LLM-facing tool name belongs to (`files__read` → `files`), if it is one of ours. */
  serverOf(toolName: string): string | undefined {
    const at = toolName.indexOf('__');
    const server = at > 0 ? toolName.slice(0, at) : undefined;
    return server !== undefined && this.servers.has(server) ? server : undefined;
  }

  /** The tool names a server offers (as the LLM sees them), listing them first when needed. Throws when the server cannot be reached. */
  async toolsOf(server: string): Promise<string[]> {
    await this.discover(server);
    return this.listedTools(server);
  }

  /** The tool names listed for a server so far (none before its first listing). */
  listedTools(server: string): string[] {
    return [...this.state(server).registered];
  }

  /**
   * Lists the tools of the given servers (default: all) that are not listed yet or changed.
   * Servers that cannot be reached are logged and returned with their error, never thrown: a run
   * that does not need them must not fail for them.
   */
  async ready(servers: readonly string[] = this.serverNames()): Promise<Map<string, Error>> {
    const failures = new Map<string, Error>();
    await Promise.all(
      servers.map(async (server) => {
        try {
          await this.discover(server);
        } catch (err) {
          failures.set(server, err as Error);
        }
      }),
    );
    return failures;
  }

  /** Makes sure the MCP tools among `names` are registered (after a worker restart, say); other names are left alone. */
  async ensureTools(names: readonly string[]): Promise<void> {
    const servers = new Set(
      names
        .filter((n) => !this.registry.has(n))
        .map((n) => this.serverOf(n))
        .filter((s): s is string => s !== undefined),
    );
    await this.ready([...servers]);
  }

  /** Closes every connection (stdio servers exit). */
  async close(): Promise<void> {
    await Promise.all(
      [...this.servers.values(), ...this.tenantStates.values()].map(async (state) => {
        const client = state.client ?? (await state.connecting?.catch(() => undefined));
        state.client = undefined;
        state.connecting = undefined;
        await client?.close().catch(() => undefined);
      }),
    );
  }

  /**
   * The connection state a call of `tenant` uses: a server that people log in to (`oauth` with the
   * authorization code grant) gets a connection per tenant, made with that tenant's login; other
   * servers (and runs without a tenant) share the server's one.
   */
  private stateFor(server: string, tenant: string | undefined): ServerState {
    const base = this.state(server);
    const oauth = isHttpServer(base.config) ? base.config.oauth : undefined;
    if (tenant === undefined || !oauth || oauth.grant === 'client_credentials') return base;
    const key = `${server}\u0000${tenant}`;
    let state = this.tenantStates.get(key);
    if (!state) {
      state = { ...base, tenant, client: undefined, connecting: undefined, inflight: new Set(), calls: new Set() };
      this.tenantStates.set(key, state);
    }
    return state;
  }

  private state(server: string): ServerState {
    const state = this.servers.get(server);
    if (!state)
      throw new Error(
        `no MCP server named "${server}" is configured (configured: ${this.serverNames().join(', ') || 'none'})`,
      );
    return state;
  }

  private discover(server: string): Promise<void> {
    const state = this.state(server);
    if (state.discovered && !state.stale) return Promise.resolve();
    state.discovering ??= this.list(server, state).finally(() => (state.discovering = undefined));
    return state.discovering;
  }

  private async list(server: string, state: ServerState): Promise<void> {
    let tools: McpTool[];
    try {
      const client = await this.connection(server);
      tools = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: CONNECT_TIMEOUT_MS });
        // The same wire shape from either SDK.
        tools.push(...(page.tools as McpTool[]));
        cursor = page.nextCursor;
      } while (cursor);
    } catch (err) {
      this.logger.warn(`MCP server "${server}" could not be listed: ${errorText(err)}`, { server });
      throw new Error(`MCP server "${server}" could not be reached: ${errorText(err)}`);
    }
    state.stale = false;
    for (const name of state.registered) this.registry.remove(name);
    state.registered = [];
    const names = mcpToolNames(
      server,
      tools.map((t) => t.name),
    );
    const timeoutMs =
      state.config.timeout === undefined ? DEFAULT_TOOL_TIMEOUT_MS : parseDuration(state.config.timeout);
    for (const tool of tools) {
      const name = names.get(tool.name)!;
      try {
        this.registry.register(
          defineJsonSchemaTool({
            name,
            description: tool.description?.trim() || tool.title || `${tool.name} (from the MCP server "${server}")`,
            parameters: { ...(tool.inputSchema as JsonSchema), type: 'object' },
            timeout: timeoutMs,
            retry: { maximumAttempts: state.config.maxAttempts ?? DEFAULT_MCP_ATTEMPTS },
            execute: (args, ctx) => this.call(server, tool.name, args, ctx, timeoutMs),
          }),
        );
        state.registered.push(name);
      } catch (err) {
        this.logger.warn(`MCP tool "${tool.name}" of server "${server}" was not registered: ${errorText(err)}`, {
          server,
        });
      }
    }
    state.discovered = true;
  }

  /** The server's client, connecting first when there is none (or the last one closed). */
  private connection(server: string, tenant?: string): Promise<Connection> {
    const state = this.stateFor(server, tenant);
    if (state.client) return Promise.resolve(state.client);
    state.connecting ??= this.connect(server, state).finally(() => (state.connecting = undefined));
    return state.connecting;
  }

  private async connect(server: string, state: ServerState): Promise<Connection> {
    const { config } = state;
    // MCP 2026-07-28 with a server that offers it (with its OAuth login, when it has one); a stdio
    // server on the v2 client in whichever revision it speaks.
    const handlers = {
      elicit: (params: Record<string, unknown>, signal: AbortSignal) => elicit(server, state, params as never, signal),
      sample: (params: Parameters<typeof sample>[1], signal: AbortSignal) => sample(state, params, signal),
      toolsChanged: () => (state.stale = true),
    };
    const modern = isHttpServer(config)
      ? await connectModern(
          config.url,
          config.headers ?? {},
          handlers,
          CONNECT_TIMEOUT_MS,
          config.oauth
            ? modernAuthProvider(server, config.url, config.oauth, this.tokens, undefined, state.tenant)
            : undefined,
        )
      : await connectModernStdio(config, handlers, CONNECT_TIMEOUT_MS);
    if (modern) {
      modern.onclose = () => {
        // A stdio server that exited: the next call connects again.
        if (state.client === modern) state.client = undefined;
      };
      state.client = modern;
      return modern;
    }
    // Elicitation: a server's questions go to a person in the run (see `elicit`); the SDK fills
    // in the form's defaults for what the answer leaves out.
    const client = new Client(
      { name: 'durable-agents', version: '0.1.0' },
      { capabilities: { elicitation: { form: { applyDefaults: true }, url: {} }, sampling: {} } },
    );
    const transport = isHttpServer(config)
      ? new StreamableHTTPClientTransport(new URL(config.url), {
          requestInit: { headers: config.headers ?? {} },
          ...(config.oauth
            ? { authProvider: mcpAuthProvider(server, config.url, config.oauth, this.tokens, undefined, state.tenant) }
            : {}),
        })
      : new StdioClientTransport({
          command: config.command,
          args: config.args,
          env: config.env,
          cwd: config.cwd,
          stderr: 'inherit',
        });
    client.onclose = () => {
      // A stdio server that exited, a closed session: the next call connects again.
      if (state.client === client) state.client = undefined;
    };
    client.onerror = (err) => {
      // The SDK's HTTP transport reports a response stream cut off mid-call (the server died) only
      // here, and leaves the call waiting for its timeout: fail it now, so Temporal retries it.
      if (state.client === client && /SSE stream disconnected|reconnect/i.test(err.message))
        for (const fail of state.inflight) fail(err);
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      state.stale = true;
    });
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) =>
      elicit(server, state, request.params, extra.signal),
    );
    client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) =>
      sample(state, request.params, extra.signal),
    );
    await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
    state.client = client;
    return client;
  }

  /** Drops a connection that failed, so the next call (Temporal's retry) opens a new one. */
  private reset(server: string, client: Connection, tenant?: string): void {
    const state = this.stateFor(server, tenant);
    if (state.client === client) state.client = undefined;
    void client.close().catch(() => undefined);
  }

  private async call(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    ctx: ToolContext,
    timeoutMs: number,
  ): Promise<string | ToolOutput> {
    let client: Connection;
    try {
      client = await this.connection(server, ctx.tenant);
    } catch (err) {
      const login = loginNeeded(err);
      // A person logs in (mcp login), then approves: the call is made again with their login.
      if (login) return ctx.askPerson(`${login.message}. Then approve this call to try again.`);
      throw unavailable(server, err);
    }
    const state = this.stateFor(server, ctx.tenant);
    let fail: (err: Error) => void = () => undefined;
    const lost = new Promise<never>((_, reject) => (fail = reject));
    lost.catch(() => undefined);
    state.inflight.add(fail);
    // A server's elicitation during the call that a person must answer ends the wait (and the
    // call at the server: it is made again with the answer).
    const asking = new AbortController();
    const inFlight: InFlightCall = {
      ctx,
      answered: false,
      ask: (question, form) => {
        fail(new AskPerson(question, form));
        asking.abort();
      },
      askModel: (question) => {
        fail(new AskModel(question));
        asking.abort();
      },
    };
    state.calls.add(inFlight);
    try {
      const options = {
        signal: AbortSignal.any([ctx.signal, asking.signal]),
        timeout: timeoutMs,
        // The server's progress notifications: events on the run's stream, and a call that
        // reports progress is not timed out by the SDK for being long (the tool's timeout holds).
        onprogress: (p: { progress: number; total?: number; message?: string }) =>
          ctx.reportProgress({ progress: p.progress, total: p.total, message: p.message }),
        resetTimeoutOnProgress: true,
        maxTotalTimeout: timeoutMs,
      };
      // Under policies: whom this call works for, so an agent behind the server runs under their policies too.
      const params = {
        name: tool,
        arguments: args,
        ...(ctx.delegatedBy?.length ? { _meta: { [DELEGATED_BY_KEY]: ctx.delegatedBy } } : {}),
      };
      const calling: Promise<CallResult> =
        client instanceof ModernClient ? client.callTool(params, options) : client.callTool(params, undefined, options);
      calling.catch(() => undefined); // abandoned when a person is asked
      const result = await Promise.race([calling, lost]);
      // `toolResult` is the pre-2024-11-05 protocol's shape.
      const output =
        'toolResult' in result && !('content' in result)
          ? JSON.stringify(result.toolResult)
          : mcpToolOutput(result as { content?: unknown; structuredContent?: unknown });
      const text = typeof output === 'string' ? output : (output.text ?? '');
      if (result.isError) throw new ToolError(text || `${tool} failed`);
      return output;
    } catch (err) {
      if (err instanceof AskPerson) return ctx.askPerson(err.question, undefined, err.form);
      if (err instanceof AskModel) return ctx.askModel(err.question);
      const login = loginNeeded(err);
      if (login) {
        this.reset(server, client, ctx.tenant);
        return ctx.askPerson(`${login.message}. Then approve this call to try again.`);
      }
      if (err instanceof ToolError || ctx.signal.aborted) throw err;
      if ((err instanceof McpError || err instanceof ProtocolError) && CALL_ERRORS.has(err.code))
        throw new ToolError(`${tool}: ${err.message}`);
      this.reset(server, client, ctx.tenant);
      throw unavailable(server, err);
    } finally {
      state.inflight.delete(fail);
      state.calls.delete(inFlight);
    }
  }
}

/** A server that could not be reached, or went away during the call: Temporal tries again. */
function unavailable(server: string, err: unknown): ApplicationFailure {
  return ApplicationFailure.create({
    message: `MCP server "${server}" is unavailable: ${errorText(err)}`,
    type: 'Mcp.Unavailable',
    cause: err instanceof Error ? err : undefined,
  });
}

function errorText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  // The HTTP transport's errors carry the status as `code`.
  const status = (err as { code?: unknown }).code;
  if (err instanceof StreamableHTTPError && typeof status === 'number' && status >= 100)
    return `HTTP ${status}: ${err.message}`;
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error && !err.message.includes(cause.message)
    ? `${err.message} (${cause.message})`
    : err.message;
}
