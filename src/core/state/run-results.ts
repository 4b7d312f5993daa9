/**
 * What a run or turn reports: its result, its status for people and dashboards, in one
 * vocabulary. Types only, shared by the loop, the events and every surface; `run/run-result.ts`
 * computes them from a run's state.
 */
import type { TenantBudgetReport } from '../fleet/tenant-ledger';
import type { Usage } from '../messages/chat-message';
import type { RecordedToolExecution, ToolExecution } from '../messages/tool-results';
import type { GuardrailTrip } from './guardrail-types';
import type { BudgetReport } from './limits';
import type { ActiveWait, PendingApproval, RunStatus } from './run-state';

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

/** Memory by tokens as `status` reports it. */
export interface MemoryReport {
  maxPromptTokens: number;
  /** The next request's size as estimated (calibrated by the provider's last count). */
  promptTokens: number;
  /** Compactions so far (a conversation: over all its turns). */
  compactions: number;
}
