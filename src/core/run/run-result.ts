/**
 * What a run shows outside the workflow: its `status` while it runs, its result when it ends.
 * Pure, like the loop it reports on (`agent-loop.ts`).
 */

import { pendingApprovals } from '../tool-calls/approvals';
import { budgetReport, budgetSpent } from '../state/limits';
import { nextStep } from './agent-loop';
import { memoryReport } from '../context/run-context';
import type { RunState } from '../state/run-state';
import type { AgentResult, AgentStatus, AgentWorkflowResult } from '../state/run-results';
import type { RecordedToolExecution, ToolExecution } from '../messages/tool-results';

/** The `status` query's answer. */
export function runStatus(state: RunState): AgentStatus {
  const { phase } = state;
  const approvals = phase.kind === 'tools' ? pendingApprovals(phase.calls) : [];
  const waits = phase.kind === 'tools' ? (state.waits ?? []) : [];
  // A run that ends at a limit (max_iterations, budget_exceeded) ends in the core's finish step,
  // its phase still the model's: its status is that step's.
  const step = nextStep(state);
  const ended = step.type === 'finish' ? step.status : undefined;
  return {
    state: ended ?? runActivity(state),
    status: ended ?? 'running',
    phase:
      approvals.length > 0 ? 'approval' : waits.length > 0 ? 'wait' : phase.kind === 'answered' ? 'model' : phase.kind,
    iteration: state.iterations,
    maxIterations: state.limits.maxIterations,
    pendingToolCalls:
      phase.kind === 'tools'
        ? phase.calls.map((c) => ({ id: c.call.id, name: c.call.function.name, arguments: c.arguments }))
        : [],
    pendingApprovals: approvals,
    ...(waits.length > 0 ? { waits } : {}),
    messageCount: state.messages.length + (state.messagesBefore ?? 0),
    toolExecutionCount: state.toolExecutions.length,
    usage: state.usage,
    ...(state.handedOff ? { agent: state.agent.name } : {}),
    ...(state.limits.budget ? { budget: budgetReport(state.limits.budget, budgetSpent(state)) } : {}),
    ...(state.limits.maxPromptTokens !== undefined ? { memory: memoryReport(state) } : {}),
    ...(state.agentVersion ? { agentVersion: state.agentVersion } : {}),
    ...(state.buildId ? { buildId: state.buildId } : {}),
  };
}

/**
 * What a run is doing, going by its phase alone: its final status once the phase is `done`, else
 * what it waits for. (Before the end status of runs stopped at a limit, that was their `AgentStatus`
 * to the end: histories of such runs replay with it, see `SearchAttributeSettings.endStatus`.)
 */
export function runActivity(state: RunState): AgentStatus['state'] {
  const { phase } = state;
  if (phase.kind === 'done') return phase.status;
  const approvals = phase.kind === 'tools' ? pendingApprovals(phase.calls) : [];
  if (approvals.length > 0) return approvals.some((a) => a.escalated) ? 'escalated' : 'awaiting_approval';
  if (phase.kind === 'tools' && (state.waits ?? []).length > 0) return 'waiting';
  return phase.kind === 'tools' ? 'running_tools' : 'thinking';
}

/** The run's result, once {@link nextStep} says `finish`. */
export function runResult(state: RunState, workflowId: string): AgentResult;
/** The same, leaving out (with `omitRecordedResults`) the tool outputs the run's history holds. */
export function runResult(
  state: RunState,
  workflowId: string,
  options: { omitRecordedResults: boolean },
): AgentWorkflowResult;
/** Implementation of the overloads above. */
export function runResult(
  state: RunState,
  workflowId: string,
  options?: { omitRecordedResults: boolean },
): AgentWorkflowResult {
  const step = nextStep(state);
  if (step.type !== 'finish') throw new Error(`runResult: the run is not finished (next step: ${step.type})`);
  const result: AgentWorkflowResult = {
    workflowId,
    status: step.status,
    content: step.content,
    toolExecutions: state.toolExecutions.map(options?.omitRecordedResults ? withoutRecordedResult : withoutHistoryMark),
    iterations: state.iterations,
    usage: state.usage,
  };
  if (state.output !== undefined) result.output = state.output;
  if (state.handedOff) result.agent = state.agent.name;
  if (new Set(state.models).size > 1) result.models = state.models;
  if (state.limits.budget) result.budget = budgetReport(state.limits.budget, budgetSpent(state));
  if (state.tripped) result.guardrail = state.tripped;
  if (state.tenantBudget) result.tenantBudget = state.tenantBudget;
  if (state.agentVersion) result.agentVersion = state.agentVersion;
  if (state.buildId) result.buildId = state.buildId;
  return result;
}

/**
 * An execution without the result its activity recorded already. An immediate tool's result is
 * kept: it is the run's answer, and it ends the run, so it is stored twice at most once.
 */
function withoutRecordedResult(execution: ToolExecution): RecordedToolExecution {
  if (!execution.resultInHistory || execution.immediate) return withoutHistoryMark(execution);
  const { result: _result, value: _value, ...rest } = execution;
  return rest;
}

/**
 * The execution without its `resultInHistory` mark, which matters only where its result was left
 * out: results that carry their outputs (turn results, failure details, statuses) stay as they were.
 */
export function withoutHistoryMark<T extends { resultInHistory?: boolean }>(execution: T): T {
  if (execution.resultInHistory === undefined) return execution;
  const { resultInHistory: _, ...rest } = execution;
  return rest as T;
}
