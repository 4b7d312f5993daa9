import type { PolicyPrincipal } from './policy-types';
import type { Budget, OnBudget } from './limits';
import type { ChatMessage, ImageRef } from '../messages/chat-message';
import type { AgentMemory } from '../facts/memory-options';
import type { WorkspaceOptions } from './workspace-types';
/** A JSON Schema, as plain JSON. */
export type JsonSchemaObject = Record<string, unknown>;

/** What happens when `maxIterations` is reached: stop with a fixed message, or one last LLM call without tools. */
export type OnLimit = 'stop' | 'generate';

/** Model settings for a run. Anything unset falls back to the worker's environment (`AGENT_MODEL`). */
export interface ModelSettings {
  /**
   * The model, with its provider as a prefix: `anthropic:claude-sonnet-5`,
   * `openai-responses:gpt-5.4`, `openai:gpt-5.4-mini` (the default provider when there is none).
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
  /**
   * Temporal's priority key for the run's tasks when its task queue backs up: 1 (first) to 5
   * (last); default 3. Interactive agents above batch ones, say.
   */
  priority?: number;
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
   * Memory across conversations for the run's `user`: each turn starts with the facts that bear on
   * its message (`recall`) and ends with the model proposing facts to keep (`extract`); see
   * {@link AgentMemory}. Needs a `user`; without one it does nothing.
   */
  memory?: AgentMemory;
  /**
   * A workspace for the run's tools (`true`, or its options): a directory where `bash` runs
   * commands in a sandbox and the file tools read and write, saved after each call that changed
   * it (see docs/workspaces.md). A run that names a workspace tool gets one without this.
   */
  workspace?: boolean | WorkspaceOptions;
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
  /**
   * History events after which the run continues as new (a new workflow run with the same id,
   * invisible to clients). Default: when Temporal suggests it (about 4,000 events or 4 MB of
   * history on a default server). At least 100.
   */
  continueAsNewAfter?: number;
  /**
   * The customer the run works for (see `tenantProblem`): recorded as the `AgentTenant` search
   * attribute, the fairness key Temporal shares dispatch by, the scope of the tenant's budget and
   * credentials, and `ctx.tenant` for tools. Carried to child agents and across continue-as-new.
   */
  tenant?: string;
  /**
   * The person the run works for (see `userProblem`): the scope of memory across conversations,
   * within the tenant. The memory tools (`remember`, `recall`, `forget`) and an agent's automatic
   * memory keep and find facts about this user; `ctx.user` for tools. Carried to child agents
   * and across continue-as-new.
   */
  user?: string;
  /**
   * The agents this run works for, outermost first: a sub-agent's callers (set by the runtime
   * when an agent calls another as a tool). Each caller's policies decide the run's tool calls as
   * well as its own, so delegating never widens what may be done (docs/policies.md).
   */
  delegatedBy?: PolicyPrincipal[];
}

/** Every key of {@link RunOptions} (a record, so a key added there and missing here does not compile). */
export const RUN_OPTION_FIELDS: Record<keyof RunOptions, true> = {
  maxIterations: true,
  maxExecutionTime: true,
  modelCallTimeout: true,
  onLimit: true,
  toolCalling: true,
  approvalTimeout: true,
  onApprovalTimeout: true,
  maxWait: true,
  waitsCountTowardTimeLimit: true,
  budget: true,
  onBudget: true,
  maxToolResultTokens: true,
  maxPromptTokens: true,
  summaryModel: true,
  memory: true,
  workspace: true,
  inputGuardrails: true,
  outputGuardrails: true,
  toolGuardrails: true,
  priority: true,
};
