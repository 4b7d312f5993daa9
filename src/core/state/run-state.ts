import type { PolicyRequest, RunPolicies } from './policy-types';
import type { TenantBudgetReport } from '../fleet/tenant-ledger';
import type { GuardrailStep, GuardrailTrip, RunGuardrails } from './guardrail-types';
import type { ChatMessage, ToolCall, Usage } from '../messages/chat-message';
import type {
  JsonSchemaObject,
  ModelSettings,
  OnApprovalTimeout,
  OnLimit,
  ToolCallingMode,
  RerunSeed,
} from './run-options';
import type { Budget, OnBudget } from './limits';
import type { ToolExecution, ToolOutcome } from '../messages/tool-results';
import type { ToolInfo } from '../messages/tool-info';
import type { RunWorkspace } from './workspace-types';

/**
 * The state of one run, as the agent loop (`agent-loop.ts`), approvals and handoffs share it:
 * types only, so those modules depend on it and not on each other. Plain JSON throughout. It
 * imports only other types-only modules, so no import of the core leads back to it.
 */

/** The run limits after defaults are applied. */
export interface RunLimits {
  maxIterations: number;
  maxExecutionTimeMs?: number;
  onLimit: OnLimit;
  /** A pending approval counts as rejected (or what `onApprovalTimeout` says) after this long; unset: it waits forever. */
  approvalTimeoutMs?: number;
  onApprovalTimeout?: OnApprovalTimeout;
  /** The longest durable wait; unset: {@link DEFAULT_MAX_WAIT_MS}. */
  maxWaitMs?: number;
  /** Durable waits count toward `maxExecutionTimeMs` (they do not unless set). */
  waitsCountTowardTimeLimit?: true;
  /** Set only when the run chose one; {@link modelCallTimeoutMs} applies the default. */
  modelCallTimeoutMs?: number;
  /** What this run may spend (a conversation: all its turns together). */
  budget?: Budget;
  onBudget?: OnBudget;
  /** Set only when the run chose one ({@link DEFAULT_MAX_TOOL_RESULT_TOKENS} applies otherwise). */
  maxToolResultTokens?: number;
  /** Summarise old messages when a request would pass this many tokens. */
  maxPromptTokens?: number;
  summaryModel?: string;
}

/** A tool call waiting for a human's decision. */
export interface PendingApproval {
  callId: string;
  name: string;
  arguments: Record<string, unknown>;
  /** `send_email(to="bob@example.com")`: what a person is asked to approve (or the tool's question). */
  summary: string;
  /**
   * The running tool asks a person this (`ToolContext.askPerson`), rather than asking to run: an
   * approval with a reason answers it ("yes", or what the tool asked for), a rejection declines.
   */
  question?: string;
  /** When the approval timeout applies (ISO 8601), with one. */
  deadline?: string;
  /** The timeout escalated it: a second period runs until `deadline`. */
  escalated?: true;
  /**
   * An agent called as a tool asks it (at any depth): its run's workflow id and agent. Deciding it
   * through the caller's id (`approve <callerId> <callId>`) reaches that run.
   */
  workflowId?: string;
  agent?: string;
}

/** A durable wait under way, as `status` shows it. */
export interface ActiveWait {
  callId: string;
  kind: 'sleep' | 'event';
  /** The event waited for. */
  name?: string;
  /** Why the model sleeps. */
  reason?: string;
  /** When it ends at the latest (ISO 8601). */
  until: string;
}

/**
 * How a run (or a conversation turn) ended. `cancelled`: a client cancelled the turn. `failed`:
 * the model could not be reached or refused; reported by clients, and by conversations per turn.
 */
export type RunStatus =
  | 'completed'
  | 'immediate'
  | 'max_iterations'
  | 'time_limit'
  | 'budget_exceeded'
  | 'guardrail_tripped'
  | 'cancelled'
  | 'failed';

/** Where a call that needs approval stands. */
export type ApprovalState =
  | {
      status: 'pending';
      /** When the approval timeout applies (ISO 8601), once the run waits with one. */
      deadline?: string;
      /** Set once the timeout escalated it (`onApprovalTimeout: 'escalate'`). */
      escalated?: true;
      /** The running tool asked a person this (`ToolContext.askPerson`): the answer goes back to it. */
      question?: string;
    }
  | { status: 'approved' }
  | { status: 'rejected'; reason?: string }
  /** A person answered the running tool's question: the tool gets the answer. */
  | { status: 'answered'; approved: boolean; reason?: string };

/**
 * The agent a run speaks as: the one it started as, or after a handoff the one it was handed to.
 * Model calls take their agent name, model settings, tool-calling mode and output schema from it.
 * Plain JSON.
 */
export interface CurrentAgent {
  /** Unset for a run of no named agent. */
  name?: string;
  modelSettings?: ModelSettings;
  toolCalling?: ToolCallingMode;
  /** The run's structured-output schema (a handoff keeps it). */
  output?: JsonSchemaObject;
}

/**
 * A tool call from the last LLM reply: either one to run with its tool's settings, or one already
 * answered without an activity (the LLM named a tool this run was not given).
 */
export type PlannedToolCall = {
  call: ToolCall;
  /** The parsed arguments, or `{}` when they don't parse (the tool activity reports that error). */
  arguments: Record<string, unknown>;
  immediate: boolean;
  /** Present when the tool needs a human's approval before it runs. */
  approval?: ApprovalState;
  /** Hosts of the workspace's allow-list the policies did not grant this call (`grantNetwork`): it runs without them. */
  deniedHosts?: string[];
} & ({ tool: ToolInfo; resolved?: undefined } | { tool?: undefined; resolved: ToolOutcome });

/** What the workflow should do next. */
export type NextStep =
  | {
      type: 'call_model';
      iteration: number;
      toolNames: string[];
      final: boolean;
      /** A final call because the budget would be passed (`onBudget: 'wrap_up'`): the model is told so. */
      wrapUp?: true;
    }
  | {
      type: 'compact';
      /** The messages to summarise, `[from, to)`; `previous` is the summary they include, if any. */
      from: number;
      to: number;
      previous?: number;
      tokensBefore: number;
    }
  | GuardrailStep
  | { type: 'check_policies'; requests: PolicyRequest[] }
  | { type: 'await_approval'; pending: PendingApproval[] }
  | { type: 'run_tools'; calls: PlannedToolCall[] }
  | { type: 'finish'; status: Exclude<RunStatus, 'failed'>; content: string | null };

/** Where a run is: waiting for the model, running (or awaiting approval of) tool calls, or done. */
export type RunPhase =
  | { kind: 'model' }
  /** A final answer that output guardrails check before the run ends with it. */
  | { kind: 'answered'; content: string; output?: unknown }
  /** `guarded`: the tool guardrails have checked these calls; `policed`: the policies have. */
  | { kind: 'tools'; calls: PlannedToolCall[]; guarded?: true; policed?: true }
  | { kind: 'done'; status: Exclude<RunStatus, 'failed'>; content: string | null };

/** Everything the workflow keeps for one run. Plain JSON. */
export interface RunState {
  /** The named agent's version the run started with (see `agentVersion`). */
  agentVersion?: string;
  /** With Worker Versioning: the build the run runs on (its worker's `buildId`). */
  buildId?: string;
  limits: RunLimits;
  tools: ToolInfo[];
  messages: ChatMessage[];
  /**
   * A one-shot run that continued as new: how many of its messages (after the system message)
   * came before `messages[1]`, held by its earlier workflow runs (see `RunCarry`). Absent: none.
   */
  messagesBefore?: number;
  /** LLM calls made so far. */
  iterations: number;
  toolExecutions: ToolExecution[];
  usage: Usage;
  phase: RunPhase;
  /**
   * Conversations only: how many messages (besides the system message) the LLM sees. Unset: the
   * whole run.
   */
  memoryWindow?: number;
  /** Structured output: the final answer, parsed and valid under the output schema. */
  output?: unknown;
  /** The agent the run speaks as now. */
  agent: CurrentAgent;
  /** The run's workspace, when it has one: its limits and its committed state (see `RunWorkspace`). */
  workspace?: RunWorkspace;
  /** Set once the run was handed off (see `applyHandoff`). */
  handedOff?: true;
  /** How many times the system message changed (handoffs); model calls name it so caches stay right. */
  revision?: number;
  /** The model that answered each model call, in order (replies that name it: runs of older workers have none). */
  models?: string[];
  /** The size of the last model call (with a budget: the next one is at least as large). */
  lastCall?: { tokens: number; costUsd?: number };
  /** With `maxPromptTokens`: where the model's view starts after the last compaction, and the summary message's index. */
  context?: { from: number; summary: number };
  /**
   * Automatic recall (an agent's `memory.recall`): what the model reads of the user's facts this
   * turn, sent right after message `after` (the turn's message) and never kept in the
   * conversation, so the prefix before it stays the same for the prompt cache.
   */
  recall?: { text: string; after: number };
  /** With `maxPromptTokens`: how many compactions the run made. */
  compactions?: number;
  /**
   * With `maxPromptTokens`: the last request's prompt tokens as the provider counted them, and as
   * estimated: the difference corrects later estimates (see `calibration`).
   */
  lastPrompt?: { tokens: number; estimated: number };
  /** The durable waits under way (`sleep`, `wait_for_event` calls), while there are any. */
  waits?: ActiveWait[];
  /** With a budget: what was spent toward it before this run (a conversation's earlier turns). */
  spentBefore?: { totalTokens: number; costUsd?: number };
  /** The guardrails the run applies (absent: none). */
  guardrails?: RunGuardrails;
  /** What the guardrails already checked: the input, once. */
  guarded?: { input?: true };
  /** Why the run ended at a guardrail (status `guardrail_tripped`). */
  tripped?: GuardrailTrip;
  /** The run was stopped by its tenant's budget (see `stopForTenantBudget`): the tenant's figures then. */
  tenantBudget?: TenantBudgetReport;
  /** Its worker's policies, when it has some (see `core/policies`): each reply's tool calls are checked before they run. */
  policies?: RunPolicies;
  /** Calls the policies forbade so far, by tool name (policies read it as `context.run.denied`). */
  policyDenied?: Record<string, number>;
  /** A re-run: recorded tool calls not yet matched, whose outputs answer identical calls. */
  recorded?: NonNullable<RerunSeed['toolCalls']>;
}
