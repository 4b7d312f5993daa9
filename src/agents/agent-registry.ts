import { z } from 'zod';
import type { AgentSettings, JsonSchemaObject, ResolvedAgent } from '../core';
import type { AnyToolDefinition } from '../tools/define-tool';
import type { ToolRegistry } from '../tools/registry';
import { resolveToolSet, type ToolSetRequest } from '../tools/resolve-tool-set';
import { toolRefName, type AgentDefinition, type ToolRef } from './define-agent';

/** An agent as `durable-agents agents` and `GET /agents` list it. */
export interface AgentSummary {
  name: string;
  description?: string;
  tools: string[];
  model?: string;
  /** Whether its final answers are structured (JSON under a schema). */
  structuredOutput: boolean;
}

/** An agent's resolution, or why it failed (`Agent.UnknownAgent`, `Agent.UnknownTool`, `Agent.InvalidInput`). */
export type AgentResolution = { ok: true; resolved: ResolvedAgent } | { ok: false; type: string; message: string };

/**
 * The agents a worker serves, by name. Tools the agents hold by reference are registered in the
 * worker's tool registry; a name that means two different tools is refused.
 */
export class AgentRegistry {
  private readonly agents = new Map<string, AgentDefinition<any>>();

  constructor(
    agents: Iterable<AgentDefinition<any>>,
    /** The worker's tools; the agents' own tools are added to it. */
    readonly tools: ToolRegistry,
  ) {
    for (const agent of agents) this.add(agent);
  }

  private add(agent: AgentDefinition<any>): void {
    if (this.agents.has(agent.name)) throw new Error(`an agent named "${agent.name}" is already registered; agent names must be unique`);
    for (const ref of [...agent.tools, ...(agent.immediateTools ?? []), ...(agent.approvalTools ?? [])]) this.registerTool(agent.name, ref);
    const names = agent.tools.map(toolRefName);
    for (const key of ['immediateTools', 'approvalTools'] as const) {
      const outside = (agent[key] ?? []).map(toolRefName).filter((n) => !names.includes(n));
      if (outside.length) throw new Error(`agent "${agent.name}": ${key} must be among its tools: ${outside.join(', ')}`);
    }
    this.agents.set(agent.name, agent);
  }

  private registerTool(agent: string, ref: ToolRef): void {
    if (typeof ref === 'string') {
      if (!this.tools.has(ref)) throw new Error(`agent "${agent}" names the tool "${ref}", which is not registered on this worker`);
      return;
    }
    const existing = this.tools.get(ref.name);
    if (existing === undefined) this.tools.register(ref as AnyToolDefinition);
    else if (existing !== ref) throw new Error(`agent "${agent}" has a tool "${ref.name}" that differs from the registered tool of that name; tool names must be unique`);
  }

  has(name: string): boolean {
    return this.agents.has(name);
  }

  get(name: string): AgentDefinition<any> | undefined {
    return this.agents.get(name);
  }

  names(): string[] {
    return [...this.agents.keys()];
  }

  /** The agent's output schema, when its answers are structured. */
  outputSchema(name: string | undefined): z.ZodType | undefined {
    return name === undefined ? undefined : this.agents.get(name)?.output;
  }

  /** The MCP servers an agent takes tools from (`all`: every one of `configured`). */
  mcpServersOf(name: string, configured: readonly string[]): string[] {
    const servers = this.agents.get(name)?.mcpServers;
    if (servers === undefined) return [];
    return servers === 'all' ? [...configured] : [...servers];
  }

  /** Refuses agents that name MCP servers the worker does not have (checked when the worker is built). */
  checkMcpServers(configured: readonly string[]): void {
    for (const agent of this.agents.values()) {
      if (agent.mcpServers === undefined || agent.mcpServers === 'all') continue;
      const missing = agent.mcpServers.filter((s) => !configured.includes(s));
      if (missing.length) throw new Error(`agent "${agent.name}" uses MCP server${missing.length > 1 ? 's' : ''} ${missing.map((s) => `"${s}"`).join(', ')}, which this worker does not configure (mcpServers: ${configured.join(', ') || 'none'})`);
    }
  }

  /**
   * The agent's settings and the run's tools. The run's own `tools` and `immediateTools` replace
   * the agent's; its `approvalTools` are added to the agent's, so a gate is never dropped.
   * `mcpTools` are the listed tools of the agent's MCP servers.
   */
  resolve(name: string, request: ToolSetRequest, mcpTools: readonly string[] = []): AgentResolution {
    const agent = this.agents.get(name);
    if (!agent) {
      return { ok: false, type: 'Agent.UnknownAgent', message: `no agent named "${name}" on this worker; agents: ${this.names().join(', ') || 'none'}` };
    }
    const tools = request.tools ?? [...agent.tools.map(toolRefName), ...mcpTools];
    const approval = [...new Set([...(agent.approvalTools ?? []).map(toolRefName).filter((n) => tools.includes(n)), ...(request.approvalTools ?? [])])];
    const toolSet = resolveToolSet(this.tools, {
      tools,
      immediateTools: request.immediateTools ?? (agent.immediateTools ?? []).map(toolRefName).filter((n) => tools.includes(n)),
      approvalTools: approval,
    });
    if (!toolSet.ok) return toolSet;
    return { ok: true, resolved: { settings: settingsOf(agent), tools: toolSet.tools } };
  }

  /** Every agent with its tools, for listings. */
  catalog(): AgentSummary[] {
    return [...this.agents.values()].map((a) => {
      const summary: AgentSummary = { name: a.name, tools: a.tools.map(toolRefName), structuredOutput: a.output !== undefined };
      if (a.description) summary.description = a.description;
      if (a.model) summary.model = a.model;
      return summary;
    });
  }
}

/** What an agent contributes to a run, as plain JSON (recorded once in the run's history). */
function settingsOf(agent: AgentDefinition<any>): AgentSettings {
  const settings: AgentSettings = { name: agent.name, instructions: agent.instructions };
  const model: NonNullable<AgentSettings['modelSettings']> = {};
  if (agent.model !== undefined) model.model = agent.model;
  if (agent.temperature !== undefined) model.temperature = agent.temperature;
  if (agent.maxTokens !== undefined) model.maxTokens = agent.maxTokens;
  if (Object.keys(model).length) settings.modelSettings = model;
  for (const key of ['maxIterations', 'maxExecutionTime', 'onLimit', 'toolCalling', 'approvalTimeout', 'modelCallTimeout'] as const) {
    if (agent[key] !== undefined) (settings as unknown as Record<string, unknown>)[key] = agent[key];
  }
  return settings;
}

/** A zod schema as JSON Schema, for `response_format` and for clients. */
export function outputJsonSchema(schema: z.ZodType): JsonSchemaObject {
  const json = z.toJSONSchema(schema) as JsonSchemaObject;
  delete json.$schema;
  return json;
}
