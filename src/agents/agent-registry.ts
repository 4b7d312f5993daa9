import { z } from 'zod';
import { handoffToolName } from '../core/tool-calls/handoffs';
import type { AgentSettings, ResolvedAgent } from '../core/state/agents';
import type { AnyToolDefinition } from '../tools/define-tool';
import type { ToolRegistry } from '../tools/registry';
import { guardrailRefName, type GuardrailDefinition } from './define-guardrail';
import { resolveToolSet, type ToolSetRequest } from '../tools/resolve-tool-set';
import { agentRefName, toolRefName, type AgentDefinition, type ToolRef } from './define-agent';
import type { AgentSummary } from '../contracts/activity-interface';
import { outputJsonSchema } from '../models/json-schema';

export type { AgentSummary } from '../contracts/activity-interface';

/** The parameters of an agent offered as a tool. */
const AGENT_TOOL_PARAMETERS = {
  type: 'object',
  properties: {
    message: {
      type: 'string',
      description: 'The whole task for the agent, with every detail it needs: it does not see this conversation.',
    },
  },
  required: ['message'],
  additionalProperties: false,
};

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
    // Agents named by reference: definitions are registered along (like tools), names must exist.
    for (const agent of [...this.agents.values()]) this.addReferenced(agent);
    for (const agent of this.agents.values()) this.registerRoutes(agent);
    for (const agent of this.agents.values()) this.checkNoCycle(agent.name, []);
  }

  private addReferenced(agent: AgentDefinition<any>): void {
    for (const ref of [...(agent.agents ?? []), ...(agent.handoffs ?? [])]) {
      if (typeof ref === 'string') continue;
      const existing = this.agents.get(ref.name);
      if (existing === ref) continue;
      if (existing)
        throw new Error(
          `agent "${agent.name}" names an agent "${ref.name}" that differs from the registered agent of that name; agent names must be unique`,
        );
      this.add(ref);
      this.addReferenced(ref);
    }
  }

  /** The guardrails the agents declare (definitions; names must be registered with the plugin). */
  /** Every model the agents name (their fallbacks included), as they name it. */
  models(): string[] {
    const names = new Set<string>();
    for (const agent of this.agents.values())
      for (const m of typeof agent.model === 'string' ? [agent.model] : (agent.model ?? [])) names.add(m);
    return [...names];
  }

  guardrails(): GuardrailDefinition[] {
    const found: GuardrailDefinition[] = [];
    for (const agent of this.agents.values())
      for (const ref of [
        ...(agent.inputGuardrails ?? []),
        ...(agent.outputGuardrails ?? []),
        ...(agent.toolGuardrails ?? []),
      ])
        if (typeof ref !== 'string' && !found.includes(ref)) found.push(ref);
    return found;
  }

  /** Names of guardrails the agents refer to that `registry` lacks. */
  unknownGuardrails(registry: { get(name: string): unknown }): string[] {
    const names = new Set<string>();
    for (const agent of this.agents.values())
      for (const ref of [
        ...(agent.inputGuardrails ?? []),
        ...(agent.outputGuardrails ?? []),
        ...(agent.toolGuardrails ?? []),
      ])
        if (!registry.get(guardrailRefName(ref))) names.add(`${agent.name}: ${guardrailRefName(ref)}`);
    return [...names];
  }

  /** The tools that stand for the agent's `agents` and `handoffs`. */
  private registerRoutes(agent: AgentDefinition<any>): void {
    for (const ref of agent.agents ?? []) {
      const target = this.require(agent.name, agentRefName(ref), 'agents');
      this.tools.registerRoute(
        target.name,
        target.description ?? `Ask the ${target.name} agent`,
        AGENT_TOOL_PARAMETERS,
        { agent: target.name },
      );
    }
    for (const ref of agent.handoffs ?? []) {
      const target = this.require(agent.name, agentRefName(ref), 'handoffs');
      const name = handoffToolName(target.name);
      if (name.length > 64)
        throw new Error(
          `agent "${agent.name}" hands off to "${target.name}", whose tool name ${name} is longer than OpenAI's 64 characters; use a shorter agent name`,
        );
      const about = target.description ? `: ${target.description}` : '';
      this.tools.registerRoute(
        name,
        `Hand the conversation off to the ${target.name} agent${about}. Call it when the request is that agent's to handle; it takes over from the next step.`,
        { type: 'object', properties: {} },
        { handoff: target.name },
      );
    }
  }

  private require(from: string, name: string, key: string): AgentDefinition<any> {
    const target = this.agents.get(name);
    if (!target)
      throw new Error(`agent "${from}" names the agent "${name}" in ${key}, which is not registered on this worker`);
    return target;
  }

  /** Agents called as tools run as children: a cycle would nest runs without end. */
  private checkNoCycle(name: string, path: string[]): void {
    if (path.includes(name))
      throw new Error(
        `agents call each other as tools in a cycle (${[...path, name].join(' -> ')}); agents as tools must not call themselves, directly or through others`,
      );
    for (const ref of this.agents.get(name)?.agents ?? []) this.checkNoCycle(agentRefName(ref), [...path, name]);
  }

  private add(agent: AgentDefinition<any>): void {
    if (this.agents.has(agent.name))
      throw new Error(`an agent named "${agent.name}" is already registered; agent names must be unique`);
    for (const ref of [...agent.tools, ...(agent.immediateTools ?? []), ...(agent.approvalTools ?? [])])
      this.registerTool(agent.name, ref);
    const names = agent.tools.map(toolRefName);
    for (const key of ['immediateTools', 'approvalTools'] as const) {
      const outside = (agent[key] ?? []).map(toolRefName).filter((n) => !names.includes(n));
      if (outside.length)
        throw new Error(`agent "${agent.name}": ${key} must be among its tools: ${outside.join(', ')}`);
    }
    this.agents.set(agent.name, agent);
  }

  private registerTool(agent: string, ref: ToolRef): void {
    if (typeof ref === 'string') {
      if (!this.tools.has(ref))
        throw new Error(`agent "${agent}" names the tool "${ref}", which is not registered on this worker`);
      return;
    }
    const existing = this.tools.get(ref.name);
    if (existing === undefined) this.tools.register(ref as AnyToolDefinition);
    else if (existing !== ref)
      throw new Error(
        `agent "${agent}" has a tool "${ref.name}" that differs from the registered tool of that name; tool names must be unique`,
      );
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
      if (missing.length)
        throw new Error(
          `agent "${agent.name}" uses MCP server${missing.length > 1 ? 's' : ''} ${missing.map((s) => `"${s}"`).join(', ')}, which this worker does not configure (mcpServers: ${configured.join(', ') || 'none'})`,
        );
    }
  }

  /**
   * The agent's settings and the run's tools. The run's own `tools` and `immediateTools` replace
   * the agent's; its `approvalTools` are added to the agent's, so a gate is never dropped.
   * `mcpTools` are the listed tools of the agent's MCP servers; `taskQueue`, the worker's, names
   * where an unknown agent was looked for.
   */
  resolve(
    name: string,
    request: ToolSetRequest,
    mcpTools: readonly string[] = [],
    taskQueue?: string,
  ): AgentResolution {
    const agent = this.agents.get(name);
    if (!agent) {
      const served = this.names().join(', ') || 'no named agents';
      const where =
        taskQueue === undefined
          ? `on this worker (it serves: ${served})`
          : `on task queue "${taskQueue}" (its workers serve: ${served})`;
      return { ok: false, type: 'Agent.UnknownAgent', message: `no agent named "${name}" ${where}` };
    }
    const tools = request.tools ?? [
      ...agent.tools.map(toolRefName),
      ...mcpTools,
      ...(agent.agents ?? []).map(agentRefName),
      ...(agent.handoffs ?? []).map((r) => handoffToolName(agentRefName(r))),
    ];
    const approval = [
      ...new Set([
        ...(agent.approvalTools ?? []).map(toolRefName).filter((n) => tools.includes(n)),
        ...(request.approvalTools ?? []),
      ]),
    ];
    const toolSet = resolveToolSet(this.tools, {
      tools,
      immediateTools:
        request.immediateTools ?? (agent.immediateTools ?? []).map(toolRefName).filter((n) => tools.includes(n)),
      approvalTools: approval,
      ...(request.workspace || agent.workspace ? { workspace: true } : {}),
    });
    if (!toolSet.ok) return toolSet;
    return { ok: true, resolved: { settings: settingsOf(agent), tools: toolSet.tools } };
  }

  /** Every agent with its tools, for listings. */
  catalog(): AgentSummary[] {
    return [...this.agents.values()].map((a) => {
      const summary: AgentSummary = {
        name: a.name,
        tools: a.tools.map(toolRefName),
        structuredOutput: a.output !== undefined,
      };
      if (a.description) summary.description = a.description;
      if (a.model) summary.model = typeof a.model === 'string' ? a.model : a.model.join(', then ');
      if (a.examples?.length) summary.examples = [...a.examples];
      if (a.agents?.length) summary.agents = a.agents.map(agentRefName);
      if (a.handoffs?.length) summary.handoffs = a.handoffs.map(agentRefName);
      return summary;
    });
  }
}

/** What an agent contributes to a run, as plain JSON (recorded once in the run's history). */
function settingsOf(agent: AgentDefinition<any>): AgentSettings {
  const settings: AgentSettings = { name: agent.name, instructions: agent.instructions };
  const model: NonNullable<AgentSettings['modelSettings']> = {};
  if (typeof agent.model === 'string') model.model = agent.model;
  else if (agent.model?.length) {
    model.model = agent.model[0];
    if (agent.model.length > 1) model.fallbackModels = agent.model.slice(1);
  }
  if (agent.temperature !== undefined) model.temperature = agent.temperature;
  if (agent.maxTokens !== undefined) model.maxTokens = agent.maxTokens;
  if (agent.thinking !== undefined) model.thinking = { budgetTokens: agent.thinking.budgetTokens };
  if (agent.reasoningEffort !== undefined) model.reasoningEffort = agent.reasoningEffort;
  if (Object.keys(model).length) settings.modelSettings = model;
  for (const key of [
    'maxIterations',
    'maxExecutionTime',
    'onLimit',
    'toolCalling',
    'approvalTimeout',
    'onApprovalTimeout',
    'maxWait',
    'waitsCountTowardTimeLimit',
    'modelCallTimeout',
    'budget',
    'onBudget',
    'maxToolResultTokens',
    'maxPromptTokens',
    'summaryModel',
    'priority',
    'workspace',
  ] as const) {
    if (agent[key] !== undefined) (settings as unknown as Record<string, unknown>)[key] = agent[key];
  }
  for (const key of ['inputGuardrails', 'outputGuardrails', 'toolGuardrails'] as const)
    if (agent[key]?.length) settings[key] = agent[key].map(guardrailRefName);
  // Plain JSON for the workflow: the profile's zod schema as JSON Schema.
  if (agent.memory) {
    const { profile, ...memory } = agent.memory;
    settings.memory = { ...memory, ...(profile ? { profile: outputJsonSchema(profile) } : {}) };
  }
  return settings;
}
