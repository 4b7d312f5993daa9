import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { AgentRegistry, AgentSummary } from '../agents/agent-registry';
import { agentVersion } from '../core/run/agent-version';
import type { ResolvedAgent } from '../core/state/agents';
import type { McpToolSource } from '../tools/mcp-client/mcp-tool-source';
import type { ResolveAgentInput } from '../contracts/activity-interface';
import type { ToolRegistry } from '../tools/registry';

/**
 * Builds the activity that resolves a named agent once, at the start of a run or conversation:
 * its settings (instructions, model, limits) and the run's tools. The answer is recorded in
 * history, so a replay never asks the worker again, and a changed agent declaration cannot change
 * a run already under way.
 */
export function createResolveAgent(deps: { agents: AgentRegistry; mcp?: McpToolSource; registry?: ToolRegistry }) {
  return async function resolveAgent(input: ResolveAgentInput): Promise<ResolvedAgent> {
    const { mcp } = deps;
    const servers = deps.agents.mcpServersOf(input.agent, mcp?.serverNames() ?? []);
    if (mcp) {
      const failures = await mcp.ready(servers);
      // Retryable: the server may be starting; after the attempts the run fails saying which one.
      for (const [server, err] of failures)
        throw ApplicationFailure.create({
          message: `agent "${input.agent}" uses the MCP server "${server}": ${err.message}`,
          type: 'Mcp.Unavailable',
        });
      if (input.tools)
        await mcp.ensureTools([...input.tools, ...(input.immediateTools ?? []), ...(input.approvalTools ?? [])]);
    }
    const mcpTools = mcp ? servers.flatMap((s) => mcp.listedTools(s)) : [];
    const result = deps.agents.resolve(input.agent, input, mcpTools, Context.current().info.taskQueue);
    if (!result.ok) throw ApplicationFailure.nonRetryable(result.message, result.type);
    const { settings, tools } = result.resolved;
    // Each tool as the model sees it (description, parameters) and as the run treats it.
    const specs = deps.registry?.specs(tools.map((t) => t.name).filter((n) => deps.registry!.has(n))) ?? [];
    const version = agentVersion({ settings, tools, specs });
    return { ...result.resolved, version };
  };
}

/**
 * Builds the activity that lists the worker's agents (for `durable-agents agents` and `GET /agents`),
 * each with the model that answers it: its own, else this worker's default.
 */
export function createListAgents(deps: { agents: AgentRegistry; defaultModel: string }) {
  return async function listAgents(): Promise<AgentSummary[]> {
    return deps.agents.catalog().map((a) => ({ ...a, model: a.model ?? deps.defaultModel }));
  };
}
