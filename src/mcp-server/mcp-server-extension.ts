import type { McpServer as LegacyMcpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ExtensionTask } from './modern/extension-tasks';
import {
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  type CallToolResult,
  type ClientCapabilities,
  type McpServer as ModernMcpServer,
  type ServerContext,
} from '@modelcontextprotocol/server';

/**
 * What a module serves over MCP beside the agents: tools, resources and prompts of its own,
 * registered with the official SDK's `McpServer` of each revision a client may speak. A client of
 * 2025-11-25 gets a session whose server is `@modelcontextprotocol/sdk`'s; a request of
 * 2026-07-28 gets a server built for it from `@modelcontextprotocol/server` (the SDK's v2). A
 * module that serves both registers in both (the two SDKs' types differ); one it leaves out is
 * not offered in that revision. `durable-agents mcp --module <file>` serves the module's export
 * `mcpServer`; see docs/mcp.md.
 */
export interface McpServerExtension {
  /** Registers on a 2025-11-25 session's server, once per session. */
  legacy?(server: LegacyMcpServer): void;
  /** Registers on a 2026-07-28 request's server, once per request. */
  modern?(server: ModernMcpServer, context: ModernExtensionContext): void;
}

/** What a 2026-07-28 extension may use besides its server. */
export interface ModernExtensionContext {
  /**
   * Tells the clients listening (`subscriptions/listen`) that the tools, prompts or resources
   * changed. Absent over stdio, where no client listens.
   */
  notify?: { toolsChanged(): void; promptsChanged(): void; resourcesChanged?(): void };
  /**
   * Signs the `requestState` of a multi-round call (an `input_required` result) as this server
   * verifies it: a state the extension signs another way is refused on the next round. Read it back
   * with `ctx.mcpReq.requestState()`.
   */
  signState(state: Record<string, unknown>, ctx: ServerContext): Promise<string>;
  /**
   * Answers calls of `tool` with the revision's missing-capability error (-32021, HTTP 400) when
   * the request's client does not declare `capabilities` (say `{ sampling: {} }`), before the tool
   * runs: an error its callback throws would be a tool result instead.
   */
  requireClientCapabilities(tool: string, capabilities: ClientCapabilities): void;
  /**
   * Runs a call's work as a task of the tasks extension (SEP-2663) when the request's client
   * declares the extension: return its value from the tool's callback, and the call answers at
   * once with the task, which the client follows with `tasks/get` and `tasks/update` (the work's
   * `task.input(...)` asks it for input) and stops with `tasks/cancel`. A client that does not
   * take tasks gets the work's result in the call. Such tasks run in this process (see
   * `ExtensionTasks`).
   */
  task(ctx: ServerContext, work: (task: ExtensionTask) => Promise<CallToolResult>): Promise<CallToolResult>;
  /**
   * Declares that a tool registered above answers as a task (`execution.taskSupport` in
   * `tools/list`): `optional`, or `required`, whose calls from a client that did not declare the
   * tasks extension are answered with -32021 before the tool runs.
   */
  taskSupport(tool: string, support: 'optional' | 'required'): void;
}

/** A request handler of either SDK: request in, result out. */
type Handler<C> = (request: { params: { name: string; [key: string]: unknown } }, ctx: C) => unknown;

/**
 * The handler the SDK's `McpServer` installed for `method` (for `tools/call`, the one that calls
 * the tools registered with `registerTool`), for ours to hand on to. Hand-written: the SDKs
 * answer each method with one handler and offer no public way to compose it with another (ours
 * answers the agents' calls, which start workflows and may be tasks). Both keep their handlers in
 * a private map; a unit test fails when a new version moves it.
 */
export function sdkRequestHandler<C>(server: { server: object }, method: string): Handler<C> | undefined {
  const inner = server.server as {
    _requestHandlers?: Map<string, Handler<C>>;
    _getRequestHandler?: (method: string) => Handler<C> | undefined;
  };
  return inner._getRequestHandler?.(method) ?? inner._requestHandlers?.get(method);
}

/** {@link sdkRequestHandler} of `tools/call`. */
export function sdkToolCallHandler<C>(server: { server: object }): Handler<C> | undefined {
  return sdkRequestHandler<C>(server, 'tools/call');
}

/**
 * The 2026-07-28 context a call of an extension's tool is handed on with. Our handler's context
 * carries the call's `requestState` verified and decoded by the SDK, and the SDK's own handler
 * verifies it again from its signed text, which the decoding dropped: it is signed again (the
 * same value, bound to the same request), so the tool reads what it signed.
 */
export async function undecodedContext(
  ctx: ServerContext,
  sign: (state: Record<string, unknown>, ctx: ServerContext) => Promise<string>,
): Promise<ServerContext> {
  const decoded = ctx.mcpReq.requestState<Record<string, unknown>>();
  if (decoded === undefined) return ctx;
  const signed = await sign(decoded, ctx);
  return { ...ctx, mcpReq: { ...ctx.mcpReq, requestState: (() => signed) as ServerContext['mcpReq']['requestState'] } };
}

/** The capabilities each extension tool needs, checked before it runs (see `requireClientCapabilities`). */
export class RequiredCapabilities {
  private readonly needs = new Map<string, ClientCapabilities>();

  require(tool: string, capabilities: ClientCapabilities): void {
    this.needs.set(tool, capabilities);
  }

  /** Throws the revision's -32021 when the request's client lacks what `tool` needs. */
  check(tool: string, ctx: ServerContext): void {
    const needed = this.needs.get(tool);
    if (!needed) return;
    // Read here, not through modern-calls' `envelope`: that module imports this one.
    const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
    const declared = (envelope[CLIENT_CAPABILITIES_META_KEY] ?? {}) as Record<string, unknown>;
    const missing = Object.fromEntries(
      Object.entries(needed).flatMap(([name, value]): [string, unknown][] => {
        if (name !== 'extensions') return declared[name] === undefined ? [[name, value]] : [];
        // Extensions by their identifiers: a client declaring some is not declaring all.
        const have = (declared.extensions ?? {}) as Record<string, unknown>;
        const lacking = Object.entries(value as Record<string, unknown>).filter(([id]) => have[id] === undefined);
        return lacking.length ? [[name, Object.fromEntries(lacking)]] : [];
      }),
    );
    if (Object.keys(missing).length > 0)
      throw new MissingRequiredClientCapabilityError({ requiredCapabilities: missing as ClientCapabilities });
  }
}
