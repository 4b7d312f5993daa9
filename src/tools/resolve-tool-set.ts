import { workspaceTools } from '../core/workspace/workspace-tools';
import type { ToolInfo } from '../core/messages/tool-info';
import type { ToolRegistry } from './registry';

/** Which tools a run gets, and which of them return immediately or need approval. */
export interface ToolSetRequest {
  /** Default: every registered tool except dynamic ones. */
  tools?: readonly string[];
  immediateTools?: readonly string[];
  approvalTools?: readonly string[];
  /** The run has a workspace: the workspace tools join its tools unless they name one already. */
  workspace?: boolean;
}

/** A run's tool set, or why it cannot have it (`Agent.UnknownTool`, `Agent.InvalidInput`). */
export type ToolSetResult =
  { ok: true; tools: ToolInfo[] } | { ok: false; type: 'Agent.UnknownTool' | 'Agent.InvalidInput'; message: string };

/** Fixes a run's tool set from the registry: names checked, immediate and approval flags merged. */
export function resolveToolSet(registry: ToolRegistry, request: ToolSetRequest): ToolSetResult {
  const listed = request.tools ?? registry.names();
  // A workspace with no tool to use it would be of no use: it comes with the built-in ones.
  const names =
    request.workspace && !listed.some((n) => registry.has(n) && registry.info(n).workspace)
      ? [...listed, ...workspaceTools.filter((n) => registry.has(n))]
      : listed;
  const immediate = request.immediateTools ?? [];
  const approval = request.approvalTools ?? [];
  const unknown = registry.unknown([...names, ...immediate, ...approval]);
  if (unknown.length > 0) {
    const message = `unknown tool${unknown.length > 1 ? 's' : ''}: ${[...new Set(unknown)].join(', ')}. Registered tools: ${registry.names().join(', ') || 'none'}`;
    return { ok: false, type: 'Agent.UnknownTool', message };
  }
  for (const [kind, list] of [
    ['immediate', immediate],
    ['approval', approval],
  ] as const) {
    const notInRun = list.filter((n) => !names.includes(n));
    if (notInRun.length > 0)
      return {
        ok: false,
        type: 'Agent.InvalidInput',
        message: `${kind} tools must be among the run's tools: ${notInRun.join(', ')}`,
      };
  }
  return {
    ok: true,
    tools: [...new Set(names)].map((n) =>
      registry.info(n, { immediate: immediate.includes(n), needsApproval: approval.includes(n) }),
    ),
  };
}
