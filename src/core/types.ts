import type { GuardrailTrip } from './guardrail-types';
/**
 * Plain-JSON shapes shared by the workflow, the activities and clients. Nothing here may hold a
 * `Map`, `Date` or class instance: every value crosses a Temporal boundary (activity input/result,
 * query, workflow result) and must survive JSON round trips unchanged.
 */

export * from './chat-message';
import type { ChatMessage, ImageRef, ReasoningPart, ToolCall, Usage } from './chat-message';

/** What the model-call activity returns: only the new assistant message, never the conversation. */
export interface ModelReply {
  content: string | null;
  toolCalls: ToolCall[];
  finishReason: string | null;
  usage: Usage;
  /** Tools a worker's tool provider added to this one model call (dynamic tools), beyond the run's own. */
  providedTools?: ToolInfo[];
  /** Structured output: the final answer parsed and valid under the run's output schema. */
  output?: unknown;
  /** Structured output: why the final answer is not valid under the schema; it goes back to the LLM. */
  outputError?: string;
  /** The activity attempt that produced this reply, when not the first (it voids text streamed by earlier ones). */
  attempt?: number;
  /** The model's reasoning, for the provider to get back with the rest of the conversation. */
  reasoning?: ReasoningPart[];
  /** The model that answered, by the name runs use (its usage is counted under it). */
  model?: string;
  /**
   * With memory by tokens: the tokens of the messages sent from `countFrom` on, as `[index, tokens]`,
   * counted by the activity's tokenizer (absent when the worker has none).
   */
  counted?: Array<[number, number]>;
}

/** A JSON Schema, as plain JSON. */
export type JsonSchemaObject = Record<string, unknown>;

/** What one tool call produced, as the tool-call activity (or the core, for rejected calls) reports it. */
export interface ToolOutcome {
  /** The text the LLM sees. */
  result: string;
  /** The tool's original return value (as JSON); absent for errors, `undefined` and strings (then `result` is the value). */
  value?: unknown;
  error: boolean;
  /** Set by the workflow, never by tools: this outcome is an activity's result, so the history holds it. */
  recorded?: boolean;
  /** Set by the tool activity when it runs locally: a local activity's marker does not record its input, so its result names the call. */
  toolCallId?: string;
  /** An agent called as a tool: the tokens its run used (they count toward the caller's). */
  usage?: Usage;
  /** An agent called as a tool: its run's workflow id (a child workflow). */
  childWorkflowId?: string;
  /** Images the tool returned, stored in the blob store: they go to the model with `result`. */
  images?: ImageRef[];
  /** Set by the tool activity when the call took more than one attempt (see {@link ToolExecution.attempts}). */
  attempts?: number;
  /** Set with `attempts`: the attempts whose worker was lost. */
  workerLosses?: number;
}

/** A finished tool execution, as it appears in the run result. */
export interface ToolExecution {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  result: string;
  /** The original return value; absent for errors, `undefined` and strings (then `result` is the value). */
  value?: unknown;
  error: boolean;
  immediate: boolean;
  /** Set for tools that needed a human's approval: what the human decided. */
  approval?: 'approved' | 'rejected';
  /** The result is also recorded in the workflow history, as the result of the tool's activity. */
  resultInHistory?: boolean;
  /** An agent called as a tool: the workflow id of its run (a child workflow of this one). */
  childWorkflowId?: string;
  /** Images the tool returned, by reference (they went to the model with `result`). */
  images?: ImageRef[];
  /**
   * How many attempts the call took, when more than one: its side effects may have happened that
   * many times (the tool's own idempotency key is the same in each). Absent: one.
   */
  attempts?: number;
  /** Of those, attempts whose worker was lost (a crash, a kill, a cut connection) before they ended. */
  workerLosses?: number;
}

/**
 * A tool execution in a run's workflow result as the history records it: `result` and `value` are
 * left out when the history holds them already (`resultInHistory`), so a long run does not store
 * every tool output twice. `runOutcome` (and `restoreToolResults`) put them back.
 */
export type RecordedToolExecution = Omit<ToolExecution, 'result'> & { result?: string };

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

/**
 * The most a run may spend (a conversation: all its turns; an agent: the agents it calls too, out
 * of the same budget). Each limit is optional.
 */
export interface Budget {
  /** Tokens, input and output together (what `usage.totalTokens` counts). */
  tokens?: number;
  /** US dollars, by the worker's price table (`usage.costUsd`; a model without a price cannot be run under it). */
  costUsd?: number;
}

/** When the next model call would pass the budget: `stop` (the default) or `wrap_up` (one last call without tools for the best answer so far). */
export type OnBudget = 'stop' | 'wrap_up';

/** A budget's state, as `status` and the run result report it. */
export interface BudgetReport {
  limit: Budget;
  spent: { tokens: number; costUsd: number };
  /** What is left of each limit that is set (never below 0). */
  left: Budget;
}

/** What happens when `maxIterations` is reached: stop with a fixed message, or one last LLM call without tools. */
export type OnLimit = 'stop' | 'generate';

/** Model settings for a run. Anything unset falls back to the worker's environment (`AGENT_MODEL`). */
export interface ModelSettings {
  /**
   * The model, with its provider as a prefix: `anthropic:claude-sonnet-4-5`,
   * `openai-responses:gpt-5`, `openai:gpt-4.1-mini` (the default provider when there is none).
   */
  model?: string;
  /** Defaults to 0: agents should be reproducible. (Claude models take none: Anthropic's API dropped it.) */
  temperature?: number;
  maxTokens?: number;
  /** Anthropic's extended thinking: the tokens the model may spend thinking before it answers (at least 1024). */
  thinking?: { budgetTokens: number };
  /** Reasoning models (OpenAI's Responses API, Anthropic's effort): how hard the model thinks. */
  reasoningEffort?: 'minimal' | 'low' | 'medium' | 'high';
  /** Models that answer, in order, when `model` cannot (it failed after its attempts, or is overloaded). */
  fallbackModels?: string[];
}

/**
 * How tools reach the model: `tools` (chat-completions `tools`/`tool_calls`, the default),
 * `functions` (the legacy `functions`/`function_call`, one call per reply) or `react` (no tool
 * API: a ReAct text prompt, parsed with LangChain's ReActSingleInputOutputParser semantics).
 */
export type ToolCallingMode = 'tools' | 'functions' | 'react';

/**
 * How a run behaves: its limits and how it calls tools. The one source of these options: a run's
 * input ({@link AgentInput}), a conversation's options, a named agent's settings and its
 * definition (`defineAgent`) all take them from here, so they mean the same everywhere.
 */
export interface RunOptions {
  /** Maximum number of LLM calls (default 15). */
  maxIterations?: number;
  /** Wall-clock budget for the whole run, e.g. `"30s"`, `"5m"`, or milliseconds. */
  maxExecutionTime?: string | number;
  /**
   * The longest one model call may take, all its retries together, counting the time spent
   * waiting for the model, e.g. `"2m"`; default `"5m"`. After it the call fails with `ModelCall.Timeout`.
   */
  modelCallTimeout?: string | number;
  /** What happens at `maxIterations`: `stop` (default) or `generate` (one last model call without tools). */
  onLimit?: OnLimit;
  /** How tools reach the model; default `tools`. */
  toolCalling?: ToolCallingMode;
  /** How long a tool call waits for approval before `onApprovalTimeout` applies, e.g. `"1h"`; default: forever. */
  approvalTimeout?: string | number;
  /**
   * What the approval timeout does to a call still undecided: `reject` (default; the LLM reads
   * why), `approve`, or `escalate` (an `approval_escalated` event, `AgentStatus=escalated`, and
   * another period of the same length, after which the call is rejected).
   */
  onApprovalTimeout?: OnApprovalTimeout;
  /** The longest durable wait the run allows (a `sleep`, a `wait_for_event`'s timeout), e.g. `"7d"`; default 30 days. */
  maxWait?: string | number;
  /**
   * Whether time spent in durable waits (`sleep`, `wait_for_event`) counts toward
   * `maxExecutionTime`; default false: the time limit bounds the work, not the waiting.
   */
  waitsCountTowardTimeLimit?: boolean;
  /** The most the run may spend, in tokens and/or dollars; agents it calls as tools draw from it. */
  budget?: Budget;
  /** What happens when the next model call would pass the budget (default `stop`: status `budget_exceeded`). */
  onBudget?: OnBudget;
  /**
   * The most of one tool output the model sees, in tokens (default 8,000): a longer output is
   * shown as its head and tail with a note; the run keeps all of it (and `read_tool_output`, when
   * the run has it, reads the rest).
   */
  maxToolResultTokens?: number;
  /**
   * The most tokens a request may hold: when the next one would pass it, the oldest messages are
   * summarised (a model call of its own, recorded once) and the model sees the system message,
   * the summary, then the recent messages. Default: three quarters of the model's context window
   * (at most 128,000), unless a conversation sets `memoryWindow`.
   */
  maxPromptTokens?: number;
  /** The model that writes those summaries (a named model, e.g. a cheaper one); default: the run's. */
  summaryModel?: string;
  /**
   * Guardrails (by the name the worker registered them under) that check the user's message before
   * the first model call; one may refuse it (status `guardrail_tripped`). An agent's add to these.
   */
  inputGuardrails?: string[];
  /** Guardrails that check the final answer: one may refuse it, or send it back to the model with a reason. */
  outputGuardrails?: string[];
  /** Guardrails that check each tool call's arguments before it runs: one may refuse it, or require approval. */
  toolGuardrails?: string[];
}

/** What an approval timeout does to a call still undecided (see `RunOptions.onApprovalTimeout`). */
export type OnApprovalTimeout = 'reject' | 'approve' | 'escalate';

/** What a re-run starts from (see `AgentInput.rerun`). */
export interface RerunSeed {
  /** The recorded run's workflow id. */
  of: string;
  /** The model call (1-based) the re-run starts at. */
  fromStep: number;
  /** The recorded messages before that model call, the system message left out. */
  messages: ChatMessage[];
  /** Recorded tool calls whose outputs answer identical calls (absent: every tool runs live). */
  toolCalls?: { name: string; arguments: Record<string, unknown>; result: string; error: boolean }[];
}

/** The agent workflow's input. */
export interface AgentInput extends RunOptions {
  message: string;
  /** Images sent with the message, by reference (clients store the bytes: see {@link ImageRef}). */
  images?: ImageRef[];
  /**
   * A named agent of the worker (see `defineAgent`): its instructions, tools, model and limits
   * apply, and every field set here overrides the agent's (approval tools add up).
   */
  agent?: string;
  system?: string;
  /** Tool names for this run; default: every tool registered on the worker. */
  tools?: string[];
  /** Tool names that return immediately in this run, in addition to tools declared `immediate`. */
  immediateTools?: string[];
  /** Tool names that need a human's approval in this run, in addition to tools declared `needsApproval`. */
  approvalTools?: string[];
  modelSettings?: ModelSettings;
  /**
   * Whether model calls stream their text to subscribers as it is written (default true). With
   * false, events still arrive, but a model call's text comes in one `text_delta` when it returns,
   * and no signal is sent for it.
   */
  stream?: boolean;
  /**
   * The final answer must be JSON valid under this schema (structured output); the result then
   * carries it parsed as `output`. Overrides a named agent's output schema.
   */
  output?: JsonSchemaObject;
  /**
   * A re-run of a recorded run (`durable-agents rerun`): the run starts from the recorded messages
   * before model call `fromStep`, and tool calls identical to recorded ones get the recorded
   * outputs instead of running.
   */
  rerun?: RerunSeed;
}

/**
 * The agent workflow's result. `O` is the type of the structured output, when the client knows
 * it (e.g. `startAgentRun(client, supportAgent, ...)` with an agent whose `output` is a zod schema).
 */
export interface AgentResult<O = unknown> {
  workflowId: string;
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
}

/** The agent workflow's own result: an {@link AgentResult} whose tool executions may leave out results the history holds. */
export interface AgentWorkflowResult<O = unknown> extends Omit<AgentResult<O>, 'toolExecutions'> {
  toolExecutions: RecordedToolExecution[];
}

/** The tools the workflow carries out itself, offered to runs that name them. */
export type BuiltinTool = 'read_tool_output' | 'sleep' | 'wait_for_event';

/** A tool as the workflow knows it: a name and how to schedule it, never its implementation. */
export interface ToolInfo {
  name: string;
  immediate: boolean;
  /** The call waits for a human's approve/reject before it runs. */
  needsApproval?: boolean;
  /** Activity start-to-close timeout in ms. */
  timeoutMs: number;
  retry: { maximumAttempts: number; initialIntervalMs: number };
  /** Runs as a local activity (see the tool's `local` setting). */
  local?: boolean;
  /** The tool is this named agent: a call runs it as a child workflow, and its answer is the result. */
  agent?: string;
  /** Calling the tool hands the run (or conversation) off to this named agent. */
  handoff?: string;
  /** A built-in tool the workflow answers itself, without an activity (`read_tool_output`). */
  builtin?: BuiltinTool;
}

/** A tool call waiting for a human's decision. */
export interface PendingApproval {
  callId: string;
  name: string;
  arguments: Record<string, unknown>;
  /** `send_email(to="bob@example.com")`: what a person is asked to approve. */
  summary: string;
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

/** A human's decision on a pending tool call (the approve/reject Update's argument). */
export interface ApprovalDecision {
  callId: string;
  approve: boolean;
  /** Why it was rejected; the LLM reads it as the tool's result. */
  reason?: string;
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
export type ConversationTurnResult<O = unknown> = TurnResult<O> & { turn: number };

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

/** Memory by tokens as `status` reports it. */
export interface MemoryReport {
  maxPromptTokens: number;
  /** The next request's size as estimated (calibrated by the provider's last count). */
  promptTokens: number;
  /** Compactions so far (a conversation: over all its turns). */
  compactions: number;
}
