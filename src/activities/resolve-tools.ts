import { ApplicationFailure } from '@temporalio/common';
import { agentVersion } from '../core/run/agent-version';
import type { McpToolSource } from '../tools/mcp-client/mcp-tool-source';
import type { ToolRegistry } from '../tools/registry';
import { resolveToolSet } from '../tools/resolve-tool-set';
import type { ResolvedTools, ResolveToolsInput } from '../contracts/activity-interface';

/**
 * Builds the activity that fixes a run's tool set once, at its start: names checked against the
 * registry, immediate flags merged. Recording the answer in history keeps replays deterministic
 * even if the worker's registry changes while the run is open.
 */
export function createResolveTools(deps: { registry: ToolRegistry; mcp?: McpToolSource }) {
  return async function resolveTools(input: ResolveToolsInput): Promise<ResolvedTools> {
    // A run without a tool list gets every tool, the MCP servers' too: list those that can be reached.
    if (deps.mcp) {
      if (input.tools === undefined) await deps.mcp.ready();
      else
        await deps.mcp.ensureTools([...input.tools, ...(input.immediateTools ?? []), ...(input.approvalTools ?? [])]);
    }
    const result = resolveToolSet(deps.registry, input);
    if (!result.ok) throw ApplicationFailure.nonRetryable(result.message, result.type);
    const { tools } = result;
    // Each tool as the model sees it (description, parameters) and as the run treats it.
    const specs = deps.registry.specs(tools.map((t) => t.name).filter((n) => deps.registry.has(n)));
    return { tools, version: agentVersion({ tools, specs }) };
  };
}
