import { ApplicationFailure } from '@temporalio/common';
import type { ToolInfo } from '../core';
import type { McpToolSource } from '../tools/mcp/mcp-tool-source';
import type { ToolRegistry } from '../tools/registry';
import { resolveToolSet } from '../tools/resolve-tool-set';
import type { ResolveToolsInput } from '../common/activity-interface';

/**
 * Builds the activity that fixes a run's tool set once, at its start: names checked against the
 * registry, immediate flags merged. Recording the answer in history keeps replays deterministic
 * even if the worker's registry changes while the run is open.
 */
export function createResolveTools(deps: { registry: ToolRegistry; mcp?: McpToolSource }) {
  return async function resolveTools(input: ResolveToolsInput): Promise<ToolInfo[]> {
    // A run without a tool list gets every tool, the MCP servers' too: list those that can be reached.
    if (deps.mcp) {
      if (input.tools === undefined) await deps.mcp.ready();
      else
        await deps.mcp.ensureTools([...input.tools, ...(input.immediateTools ?? []), ...(input.approvalTools ?? [])]);
    }
    const result = resolveToolSet(deps.registry, input);
    if (!result.ok) throw ApplicationFailure.nonRetryable(result.message, result.type);
    return result.tools;
  };
}
