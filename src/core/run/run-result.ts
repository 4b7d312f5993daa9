import type { TenantBudgetReport } from '../fleet/tenant-ledger';
import type { BudgetReport } from './limits';
import type { GuardrailTrip } from '../guardrails/guardrail-types';
import type { MemoryReport } from '../context/run-context';
import type { Usage } from '../messages/chat-message';
import { pendingApprovals } from '../tool-calls/approvals';
import { budgetReport, budgetSpent } from './limits';
import { nextStep } from './agent-loop';
import { memoryReport } from '../context/run-context';
import type { ActiveWait, PendingApproval, RunState, RunStatus } from './run-state';
import type { RecordedToolExecution, ToolExecution } from '../tool-calls/tool-results';

/**
 * The agent workflow's result. `O` is the type of the structured output, when the client knows
 * it (e.g. `startAgentRun(client, supportAgent, ...)` with an agent whose `output` is a zod schema).
 */
export interface AgentResult<O = unknown> {
  workflowId: string;
  /** The tenant the run worked for, when it had one. */
  tenant?: string;
  /** The run was stopped (`budget_exceeded`) by its tenant's budget: the tenant's figures. */
  tenantBudget?: TenantBudgetReport;
  status: Exclude<RunStatus, 'failed'>;
  content: string | null;
  /** Structured output: the final answer, parsed and valid under the output schema (sent as JSON). */
  output?: O;
  toolExecutions: ToolExecution[];
  iterations: number;
  usage: Usage;
  /** The agent that gave the answer, when the run was handed off to another than it started with. */
  agent?: string;
  /** The model that answered each model call, in order: only when more than one model answered (fallbacks, handoffs). */
  models?: string[];
  /** With a budget: its limits, what was spent and what is left (a conversation's turn: the conversation's). */
  budget?: BudgetReport;
  /** Status `guardrail_tripped`: which guardrail refused what, and why. */
  guardrail?: GuardrailTrip;
  /** A named agent's version (a hash of its definition as the worker resolved it, see `agentVersion`). */
  agentVersion?: string;
  /** With Worker Versioning: the build that ran it (see `AgentsPluginOptions.deployment`). */
  buildId?: string;
}

/** The agent workflow's own result: an {@link AgentResult} whose tool executions may leave out results the history holds. */
export interface AgentWorkflowResult<O = unknown> extends Omit<AgentResult<O>, 'toolExecutions'> {
  toolExecutions: RecordedToolExecution[];
}

/**
 * A turn's (or run's) outcome: a run result, or `failed` with the reason (`error`, and
 * `errorType` such as `ModelCall.Auth`) and what was done so far. `O`: see {@link AgentResult}.
 */
export type TurnResult<O = unknown> = Omit<AgentResult<O>, 'status'> & {
  status: RunStatus;
  error?: string;
  errorType?: string;
};

/** A turn's result: the same shape as a run's, plus its number in the conversation (1-based). */
export type ConversationTurnResult<O = unknown> = TurnResult<O> & {
  turn: number;
  /** The branch the turn is on, when the conversation was forked (absent: `main`; see `branches.ts`). */
  branch?: string;
};

/** A {@link TurnResult} as a workflow receives it from a child run: tool outputs its history holds may be left out (see {@link RecordedToolExecution}). */
export type RecordedTurnResult<O = unknown> = Omit<TurnResult<O>, 'toolExecutions'> & {
  toolExecutions: RecordedToolExecution[];
};

/**
 * What a run or conversation is doing, in one vocabulary for the CLI, the HTTP API and dashboards:
 * working (`thinking`, `running_tools`), waiting for a person (`awaiting_approval`), a
 * conversation between turns (`idle`) or closed (`closed`), or how a run ended.
 */
export type AgentState =
  'thinking' | 'running_tools' | 'awaiting_approval' | 'escalated' | 'waiting' | 'idle' | 'closed' | RunStatus;

/** Where a run is, for people and dashboards (the `status` query). */
export interface AgentStatus {
  /** What the run is doing now, or how it ended. */
  state: Exclude<AgentState, 'idle' | 'closed' | 'failed'>;
  status: 'running' | Exclude<RunStatus, 'failed'>;
  /** What the run waits on now. */
  phase: 'model' | 'tools' | 'approval' | 'wait' | 'done';
  /** LLM calls made so far. */
  iteration: number;
  maxIterations: number;
  pendingToolCalls: Array<{ id: string; name: string; arguments: Record<string, unknown> }>;
  pendingApprovals: PendingApproval[];
  /** The durable waits under way (`sleep`, `wait_for_event`): what for, and until when. */
  waits?: ActiveWait[];
  messageCount: number;
  toolExecutionCount: number;
  usage: Usage;
  /** The agent the run is on, when it was handed off to another than it started with. */
  agent?: string;
  /** With a budget: its limits, what was spent and what is left. */
  budget?: BudgetReport;
  /** With memory by tokens: the bound, the estimated size of the next request, and what summaries took in. */
  memory?: MemoryReport;
  /** A named agent's version (see `agentVersion`). */
  agentVersion?: string;
  /** With Worker Versioning: the build the run runs on. */
  buildId?: string;
}

/**
 * What a run shows outside the workflow: its `status` while it runs, its result when it ends.
 * Pure, like the loop it reports on (`agent-loop.ts`).
 */

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
