import { DURABLE_WAIT_SPECS, SLEEP, WAIT_FOR_EVENT } from '../core/time/durable-waits';
import { parseDuration } from '../core/time/duration';
import { READ_TOOL_OUTPUT, READ_TOOL_OUTPUT_SPEC } from '../core/messages/tool-results';
import type { BuiltinTool, ToolInfo } from '../core/messages/tool-info';
import { checkJsonArguments } from './check-json-arguments';
import { ToolError } from './tool-error';
import { defineJsonSchemaTool, isZodTool, type AnyToolDefinition, type ToolContext } from './define-tool';
import { isStrictCompatible, parametersJsonSchema, type JsonSchema } from '../models/json-schema';
import type { ToolSpec } from '../models/chat-model';

/** A tool description in the chat-completions `tools` format. */
export interface OpenAIToolSpec {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema; strict?: boolean };
}

/** Arguments checked against a tool's parameters: the values `execute` gets, or what is wrong. */
export type CheckedArguments = { ok: true; value: Record<string, unknown> } | { ok: false; problems: string[] };

/** How a registered tool is offered. */
export interface RegisterOptions {
  /**
   * Offered only when a tool provider picks it for a model call (see `ToolProvider`), never by
   * default. Runs and conversations may still list it in `tools` explicitly.
   */
  dynamic?: boolean;
}

/** Where a call of a tool goes instead of `execute`: a named agent run as a child workflow, or a handoff. */
export type ToolRoute = { agent: string } | { handoff: string } | { builtin: BuiltinTool };

interface Entry {
  definition: AnyToolDefinition;
  dynamic: boolean;
  route?: ToolRoute;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_RETRY = { maximumAttempts: 3, initialIntervalMs: 1_000 };

/**
 * The tools a worker can run, by name. Lives on the worker side only: workflows see names and
 * {@link ToolInfo}, never implementations.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, Entry>();
  private readonly toolSpecs = new Map<string, ToolSpec>();

  constructor(tools: Iterable<AnyToolDefinition> = []) {
    // Built in, offered to runs that name it (`tools: [..., 'read_tool_output']`): the workflow answers it.
    this.registerRoute(READ_TOOL_OUTPUT, READ_TOOL_OUTPUT_SPEC.description, READ_TOOL_OUTPUT_SPEC.parameters, {
      builtin: READ_TOOL_OUTPUT,
    });
    // The durable waits (`sleep`, `wait_for_event`): workflow timers and conditions, never activities.
    for (const name of [SLEEP, WAIT_FOR_EVENT] as const)
      this.registerRoute(name, DURABLE_WAIT_SPECS[name].description, DURABLE_WAIT_SPECS[name].parameters, {
        builtin: name,
      });
    for (const t of tools) this.register(t);
  }

  /** Adds a tool (zod or JSON Schema); a second tool with the same name is an error, never a silent override. */
  register(tool: AnyToolDefinition, options: RegisterOptions = {}): this {
    if (this.tools.get(tool.name)?.route && 'builtin' in this.tools.get(tool.name)!.route!)
      throw new Error(`"${tool.name}" is the name of a built-in tool; give your tool another name`);
    if (this.tools.has(tool.name))
      throw new Error(`a tool named "${tool.name}" is already registered; tool names must be unique`);
    this.tools.set(tool.name, { definition: tool, dynamic: options.dynamic ?? false });
    return this;
  }

  /**
   * Adds a tool the workflow carries out itself (an agent called as a tool, a handoff): the LLM
   * sees its description and parameters, and `execute` is never called. Agents register these
   * (see `agents` and `handoffs` on `defineAgent`); registering the same route twice is a no-op.
   */
  registerRoute(name: string, description: string, parameters: JsonSchema, route: ToolRoute): this {
    const existing = this.tools.get(name);
    if (existing) {
      if (JSON.stringify(existing.route) === JSON.stringify(route)) return this;
      throw new Error(
        `a tool named "${name}" is already registered; ${'agent' in route ? `the agent "${route.agent}" cannot be offered as a tool under its name` : 'handoff' in route ? `the handoff to "${route.handoff}" cannot use it` : 'the name is taken'}`,
      );
    }
    const definition = defineJsonSchemaTool({
      name,
      description,
      parameters,
      execute: () => {
        throw new ToolError(`${name} is carried out by the agent workflow, not by a tool activity`);
      },
    });
    this.tools.set(name, { definition, dynamic: false, route });
    return this;
  }

  /** Removes a tool (e.g. one its MCP server no longer offers); runs that were offered it get an "unknown tool" result if they call it. */
  remove(name: string): boolean {
    this.toolSpecs.delete(name);
    return this.tools.delete(name);
  }

  /** Whether a tool of that name is registered (dynamic ones included). */
  has(name: string): boolean {
    return this.tools.has(name);
  }

  get(name: string): AnyToolDefinition | undefined {
    return this.tools.get(name)?.definition;
  }

  /** The tools a run gets by default: every registered tool except dynamic ones. */
  names(): string[] {
    // Routed tools (agents, handoffs) belong to the agents that declare them.
    return [...this.tools].filter(([, e]) => !e.dynamic && !e.route).map(([name]) => name);
  }

  /** Names in `names` that are not registered. */
  unknown(names: readonly string[]): string[] {
    return names.filter((n) => !this.tools.has(n));
  }

  /** What the workflow needs to schedule a tool. */
  info(name: string, overrides: { immediate?: boolean; needsApproval?: boolean } = {}): ToolInfo {
    const tool = this.require(name);
    const route = this.tools.get(name)!.route;
    const info: ToolInfo = {
      name,
      immediate: overrides.immediate || tool.returnBehavior === 'immediate',
      timeoutMs: tool.timeout === undefined ? DEFAULT_TIMEOUT_MS : parseDuration(tool.timeout),
      retry: {
        maximumAttempts: tool.retry?.maximumAttempts ?? DEFAULT_RETRY.maximumAttempts,
        initialIntervalMs:
          tool.retry?.initialInterval === undefined
            ? DEFAULT_RETRY.initialIntervalMs
            : parseDuration(tool.retry.initialInterval),
      },
    };
    // Only when set, so tool infos recorded in older histories keep their exact shape.
    if (overrides.needsApproval || tool.needsApproval) info.needsApproval = true;
    if (tool.local) info.local = true;
    if (tool.workspace) info.workspace = true;
    if (route) Object.assign(info, route);
    return info;
  }

  /** Checks parsed JSON arguments against the tool's parameters. */
  checkArguments(name: string, args: unknown): CheckedArguments {
    const tool = this.require(name);
    if (isZodTool(tool)) {
      const validated = tool.parameters.safeParse(args);
      if (validated.success) return { ok: true, value: validated.data as Record<string, unknown> };
      return {
        ok: false,
        problems: validated.error.issues.map(
          (i: { path: PropertyKey[]; message: string }) =>
            `${i.path.length ? i.path.join('.') : '(arguments)'}: ${i.message}`,
        ),
      };
    }
    const problems = checkJsonArguments({ type: 'object', ...tool.parameters }, args);
    return problems.length ? { ok: false, problems } : { ok: true, value: args as Record<string, unknown> };
  }

  /** Runs the tool with checked arguments (see {@link checkArguments}). */
  execute(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> {
    const tool = this.require(name);
    return Promise.resolve().then(() => tool.execute(args as never, ctx));
  }

  /** The tools as a model is offered them (see `ToolSpec`); schemas are built once per tool and cached. */
  specs(names: readonly string[]): ToolSpec[] {
    return names.map((name) => {
      let spec = this.toolSpecs.get(name);
      if (!spec) {
        const tool = this.require(name);
        const parameters = isZodTool(tool)
          ? parametersJsonSchema(tool.parameters)
          : { type: 'object', properties: {}, ...tool.parameters };
        spec = { name, description: tool.description, parameters };
        if (isStrictCompatible(parameters)) spec.strict = true;
        this.toolSpecs.set(name, spec);
      }
      return spec;
    });
  }

  /** The `tools` array of a Chat Completions request (see {@link specs} for the provider-neutral form). */
  openAISpecs(names: readonly string[]): OpenAIToolSpec[] {
    return this.specs(names).map(({ strict, ...spec }) => ({
      type: 'function',
      function: { ...spec, ...(strict ? { strict } : {}) },
    }));
  }

  private require(name: string): AnyToolDefinition {
    const tool = this.tools.get(name)?.definition;
    if (!tool)
      throw new Error(
        `no tool named "${name}" is registered (registered: ${[...this.tools.keys()].join(', ') || 'none'})`,
      );
    return tool;
  }
}
