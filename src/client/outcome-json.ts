import type { RunOutcome } from './run-agent';

/**
 * A run's outcome as JSON, exactly as the CLI contract spells it (`run --json`), which the HTTP
 * API and the MCP server answer with too.
 */
export function outcomeJson(outcome: RunOutcome): Record<string, unknown> {
  const json: Record<string, unknown> = {
    workflowId: outcome.workflowId,
    ...(outcome.tenant !== undefined ? { tenant: outcome.tenant } : {}),
    status: outcome.status,
    content: outcome.content,
    ...(outcome.output !== undefined ? { output: outcome.output } : {}),
    toolExecutions: outcome.toolExecutions.map((e) => ({
      id: e.id,
      name: e.name,
      arguments: e.arguments,
      result: e.result,
      error: e.error,
      immediate: e.immediate,
      ...(e.approval ? { approval: e.approval } : {}),
      ...(e.images ? { images: e.images } : {}),
    })),
    iterations: outcome.iterations,
    usage: outcome.usage,
    ...(outcome.models ? { models: outcome.models } : {}),
    ...(outcome.budget ? { budget: outcome.budget } : {}),
    ...(outcome.tenantBudget ? { tenantBudget: outcome.tenantBudget } : {}),
    ...(outcome.agentVersion ? { agentVersion: outcome.agentVersion } : {}),
    ...(outcome.buildId ? { buildId: outcome.buildId } : {}),
  };
  if (outcome.error !== undefined) json.error = outcome.error;
  if (outcome.errorType !== undefined) json.errorType = outcome.errorType;
  return json;
}
