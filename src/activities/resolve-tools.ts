import { ApplicationFailure } from '@temporalio/common';
import type { ToolInfo } from '../core/types';
import type { ToolRegistry } from '../tools/registry';
import type { ResolveToolsInput } from './types';

/**
 * Builds the activity that fixes a run's tool set once, at its start: names checked against the
 * registry, immediate flags merged. Recording the answer in history keeps replays deterministic
 * even if the worker's registry changes while the run is open.
 */
export function createResolveTools(deps: { registry: ToolRegistry }) {
  const { registry } = deps;
  return async function resolveTools(input: ResolveToolsInput): Promise<ToolInfo[]> {
    const names = input.tools ?? registry.names();
    const immediate = input.immediateTools ?? [];
    const approval = input.approvalTools ?? [];
    const unknown = registry.unknown([...names, ...immediate, ...approval]);
    if (unknown.length > 0) {
      throw ApplicationFailure.nonRetryable(
        `unknown tool${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}. Registered tools: ${registry.names().join(', ') || 'none'}`,
        'Agent.UnknownTool',
      );
    }
    for (const [kind, list] of [['immediate', immediate], ['approval', approval]] as const) {
      const notInRun = list.filter((n) => !names.includes(n));
      if (notInRun.length > 0) {
        throw ApplicationFailure.nonRetryable(`${kind} tools must be among the run's tools: ${notInRun.join(', ')}`, 'Agent.InvalidInput');
      }
    }
    return [...new Set(names)].map((n) => registry.info(n, { immediate: immediate.includes(n), needsApproval: approval.includes(n) }));
  };
}
