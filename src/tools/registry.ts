import { parseDuration, type ToolInfo } from '../core';
import type { Tool, ToolDefinition } from './define-tool';
import { isStrictCompatible, parametersJsonSchema, type JsonSchema } from './json-schema';

/** A tool description in the chat-completions `tools` format. */
export interface OpenAIToolSpec {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema; strict?: boolean };
}

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_RETRY = { maximumAttempts: 3, initialIntervalMs: 1_000 };

/**
 * The tools a worker can run, by name. Lives on the worker side only: workflows see names and
 * {@link ToolInfo}, never implementations.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();
  private readonly specs = new Map<string, OpenAIToolSpec>();

  constructor(tools: Iterable<ToolDefinition<any, any>> = []) {
    for (const t of tools) this.register(t);
  }

  /** Adds a tool; a second tool with the same name is an error, never a silent override. */
  register(tool: ToolDefinition<any, any>): this {
    if (this.tools.has(tool.name)) throw new Error(`a tool named "${tool.name}" is already registered; tool names must be unique`);
    this.tools.set(tool.name, tool as Tool);
    return this;
  }

  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  /** Names in `names` that are not registered. */
  unknown(names: readonly string[]): string[] {
    return names.filter((n) => !this.tools.has(n));
  }

  /** What the workflow needs to schedule a tool. */
  info(name: string, immediate = false): ToolInfo {
    const tool = this.require(name);
    return {
      name,
      immediate: immediate || tool.returnBehavior === 'immediate',
      timeoutMs: tool.timeout === undefined ? DEFAULT_TIMEOUT_MS : parseDuration(tool.timeout),
      retry: {
        maximumAttempts: tool.retry?.maximumAttempts ?? DEFAULT_RETRY.maximumAttempts,
        initialIntervalMs: tool.retry?.initialInterval === undefined ? DEFAULT_RETRY.initialIntervalMs : parseDuration(tool.retry.initialInterval),
      },
    };
  }

  /** The `tools` array for a chat-completions request; schemas are built once per tool and cached. */
  openAISpecs(names: readonly string[]): OpenAIToolSpec[] {
    return names.map((name) => {
      let spec = this.specs.get(name);
      if (!spec) {
        const tool = this.require(name);
        const parameters = parametersJsonSchema(tool.parameters);
        spec = { type: 'function', function: { name, description: tool.description, parameters } };
        if (isStrictCompatible(parameters)) spec.function.strict = true;
        this.specs.set(name, spec);
      }
      return spec;
    });
  }

  private require(name: string): Tool {
    const tool = this.tools.get(name);
    if (!tool) throw new Error(`no tool named "${name}" is registered (registered: ${this.names().join(', ') || 'none'})`);
    return tool;
  }
}
