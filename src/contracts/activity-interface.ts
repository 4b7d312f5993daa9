import type { PolicyCheck, PolicyMode, PolicyPrincipal, PolicyRequest } from '../core/state/policy-types';
import type { MemoryAdminRequest, MemoryAdminResult } from './memory-admin';
import type { RunWorkspace } from '../core/state/workspace-types';
import type { ResolvedAgent } from '../core/state/agents';
import type { ModelCallInput } from '../core/run/model-call-input';
import type { SearchAttributeSettings } from '../core/run/search-attributes';
import type { ConversationOptions, TurnInput } from '../core/conversation/conversation-state';
import type { GuardrailCheck, GuardrailKind } from '../core/state/guardrail-types';
import type { ModelReply } from '../core/messages/model-reply';
import type { ModelSettings } from '../core/state/run-options';
import type { ToolInfo } from '../core/messages/tool-info';
import type { ToolOutcome } from '../core/messages/tool-results';
import type { Usage } from '../core/messages/chat-message';
import type { A2ATaskEndJson } from './a2a-task-json';

/**
 * The contract between the workflows and the worker's activities, written out: the workflows
 * proxy this interface (`import type` only), and the worker's `createActivities` implements it.
 * Inputs and results are plain JSON. Inputs carry references, never the conversation: the event
 * history records every activity input, so passing the transcript would make history grow
 * quadratically.
 */
export interface AgentActivities {
  /**
   * One model call: reads the conversation the input refers to (from the worker's cache, or the
   * workflow's `messages` query), offers the named tools, and returns only the new message.
   * Retried by Temporal; failures are typed (`ModelCall.*`).
   */
  callModel(input: ModelCallInput): Promise<ModelReply>;
  /**
   * Summarises messages `[from, to)` of the run (an earlier summary among them folded in) for
   * compaction: reads them like a model call, asks the run's model (or its `summaryModel`) with
   * no tools, and returns only the summary. Retried and classified like a model call.
   */
  summarizeMessages(input: SummarizeInput): Promise<SummaryReply>;
  /**
   * A model call a running tool asked for (an MCP server's sampling request): the messages it
   * gave, to the run's model, without tools; the reply's text and what it cost. Retried and
   * classified like a model call.
   */
  sampleModel(input: SampleInput): Promise<SummaryReply>;
  /**
   * Automatic recall (an agent's `memory.recall`): the user's facts that bear on the turn's
   * message, and their profile, as the block the model reads after the message. Retried.
   */
  recallMemory(input: RecallMemoryInput): Promise<RecalledMemory>;
  /**
   * Automatic extraction (an agent's `memory.extract`), at the end of a turn: one model call reads
   * the turn's exchange beside the facts kept, and the facts it proposes are kept, updated or
   * retired, each write under a key of the turn's, so a retried activity writes nothing twice.
   */
  extractMemory(input: ExtractMemoryInput): Promise<ExtractedMemory>;
  /** People's control of memory (list, show, delete, export), for `memoryAdminWorkflow`. */
  administerMemory(request: MemoryAdminRequest): Promise<MemoryAdminResult>;
  /**
   * One tool call, as the LLM wrote it. Mistakes the LLM can fix come back as an outcome with
   * `error: true`; a tool that throws fails the attempt (`Tool.ExecutionError`) for Temporal to retry.
   */
  executeTool(input: ToolCallInput): Promise<ToolOutcome>;
  /** The tools a run without a named agent may call (a local activity, recorded once). */
  resolveTools(input: ResolveToolsInput): Promise<ResolvedTools>;
  /** A named agent's settings and the run's tools (a local activity, recorded once); `Agent.UnknownAgent` when the worker has none by that name. */
  resolveAgent(input: ResolveAgentInput): Promise<ResolvedAgent>;
  /** The worker's named agents, for clients (the `listAgentsWorkflow`). */
  listAgents(): Promise<AgentSummary[]>;
  /** What a workflow learns from its worker once per run: the search attributes it may upsert. */
  describeWorker(): Promise<WorkerDescription>;
  /**
   * Sends a schedule's message to its conversation (opening it on this worker's task queue when
   * it is not open) and returns once the conversation accepted it; the turn goes on there. The
   * message carries the scheduled workflow run's id as its update id, so a retried attempt never
   * sends it twice. A refused message fails with `Schedule.MessageRefused` (not retried).
   */
  sendScheduledMessage(input: ScheduledTurnInput): Promise<ScheduledTurnResult>;
  /**
   * Runs guardrails on a run's input, its final answer (both read by reference, like a model call
   * reads the conversation) or its tool calls, and returns each one's verdict. A guardrail that is
   * a function runs here; one that is an agent runs as an agent run of its own, which this
   * activity waits for. A guardrail that throws fails the attempt (retried); the workflow treats
   * one that cannot decide as refusing.
   */
  checkGuardrails(input: GuardrailCheckInput): Promise<GuardrailCheck[]>;
  /**
   * The worker's policies' decision on each of a reply's tool calls (a local activity: recorded
   * once, in the workflow task that goes on to run them, so no workflow task is added). A policy
   * set that cannot evaluate a request answers `forbid` with why (in `log` mode, `permit`).
   */
  decidePolicies(input: PolicyDecisionInput): Promise<PolicyCheck>;
  /**
   * POSTs a notification to a webhook (an A2A task's push notification). Fails the attempt when
   * the webhook cannot be reached or answers with an error, so the workflow's retries deliver it
   * later; a 4xx other than 408 and 429 fails it for good (`Webhook.Refused`).
   */
  deliverWebhook(input: WebhookDelivery): Promise<void>;
  /**
   * Waits (at most `waitMs`, heartbeating) for the conversation turn an A2A task runs as to end,
   * and returns what the task becomes: its final status and artifacts, as A2A's JSON. `null` when
   * the turn goes on past `waitMs` (the task's record asks again). What lets a task reach its
   * final state, and its webhooks hear of it, when the A2A server that ran it died mid-task.
   */
  awaitA2aTaskEnd(input: A2ATaskEndInput): Promise<A2ATaskEndJson | null>;
}

/** Input of `awaitA2aTaskEnd`: the task, the conversation turn it runs as, and how long to wait. */
export interface A2ATaskEndInput {
  taskId: string;
  contextId: string;
  /** The conversation's workflow id, when it is not the contextId (a tenant's context is in its id space: `acme:<contextId>`). */
  workflowId?: string;
  turn: number;
  waitMs: number;
}

/** Input of `deliverWebhook`. */
export interface WebhookDelivery {
  url: string;
  /** Authentication headers (`authorization`, `X-A2A-Notification-Token`). */
  headers: Record<string, string>;
  contentType: string;
  body: string;
}

/** Input of `checkGuardrails`. */
export interface GuardrailCheckInput {
  workflowId: string;
  runId: string;
  kind: GuardrailKind;
  /** The guardrails to run, by name. */
  names: string[];
  /** Input and output guardrails: the message to check, by its index in the run's messages. */
  messageIndex?: number;
  /** How many times a handoff replaced the system message (as for `callModel`). */
  revision?: number;
  /** Tool guardrails: the calls to check. */
  calls?: { id: string; name: string; arguments: Record<string, unknown> }[];
  /** The run's agent, which guardrail functions are told about. */
  agent?: string;
}

/** Input of `sendScheduledMessage` (and of the `scheduledTurnWorkflow` a schedule starts). */
export interface ScheduledTurnInput {
  conversationId: string;
  turn: TurnInput;
  /** The options a conversation opened by this message starts with. */
  options?: ConversationOptions;
}

/** What `sendScheduledMessage` did. */
export interface ScheduledTurnResult {
  conversationId: string;
  /** The conversation was open already (so `options` did not apply). */
  wasOpen: boolean;
}

/** What a workflow learns from its worker once per run (recorded, so replays never ask again). */
export interface WorkerDescription {
  searchAttributes: SearchAttributeSettings;
  /**
   * The context windows of the worker's named models, in tokens (`{ smart: 200000 }`), for the
   * default `maxPromptTokens`.
   */
  contextWindows: Record<string, number>;
  /** The worker's default model (`AGENT_MODEL`). */
  defaultModel?: string;
  /** The worker has policies (`AGENT_POLICIES`): runs check each reply's tool calls with it. */
  policies?: { mode: PolicyMode };
}

/** Input of `decidePolicies`: the requests of one reply's tool calls (see `core/policies`). */
export interface PolicyDecisionInput {
  requests: PolicyRequest[];
}

/** An agent as `durable-agents agents` and `GET /agents` list it. */
export interface AgentSummary {
  name: string;
  description?: string;
  tools: string[];
  /** The model that answers: the agent's own, else its worker's default (`AGENT_MODEL`). */
  model?: string;
  /** Questions to try (see `AgentDefinition.examples`). */
  examples?: string[];
  /** Whether its final answers are structured (JSON under a schema). */
  structuredOutput: boolean;
  /** Agents it calls as tools. */
  agents?: string[];
  /** Agents it may hand off to. */
  handoffs?: string[];
}

/** Input of `callModel`: see `ModelCallInput` in the core (core/run/model-call-input.ts), which builds it from a run's state. */
export type { ModelCallInput };

/** Input of `summarizeMessages`: a range of the run's messages, by reference. */
export interface SummarizeInput {
  workflowId: string;
  runId: string;
  /** Summarise messages `[from, to)`; a summary message among them is the earlier summary to fold in. */
  from: number;
  to: number;
  /** The model that writes it, with the run's settings. */
  settings?: ModelSettings;
  /** See `ModelCallInput.revision`. */
  revision?: number;
  /** See `ModelCallInput.timeoutMs`. */
  timeoutMs?: number;
  /** The run's tenant: its budget is charged for the summary. */
  tenant?: string;
}

/** Input of `sampleModel`: a tool's own short exchange (not the run's conversation). */
export interface SampleInput {
  messages: ModelQuestion['messages'];
  system?: string;
  maxTokens?: number;
  /** The run's model and its settings. */
  settings?: ModelSettings;
  /** See `ModelCallInput.timeoutMs`. */
  timeoutMs?: number;
  /** The run's tenant: its budget is charged for the call. */
  tenant?: string;
}

/** Whose memory an automatic recall or extraction reaches: the run's tenant and user, and the agent when it keeps its own. */
export interface MemoryScopeInput {
  tenant?: string;
  user: string;
  /** Set for an agent with `memory.scope: "agent"`. */
  agent?: string;
}

/** Input of `recallMemory`: the turn's message (the query), and how many facts. */
export interface RecallMemoryInput extends MemoryScopeInput {
  query: string;
  limit: number;
}

/** What `recallMemory` found: the block the model reads (empty: nothing), and the facts' ids. */
export interface RecalledMemory {
  text: string;
  facts: string[];
}

/** Input of `extractMemory`: the turn's exchange (clipped), and where it happened. */
export interface ExtractMemoryInput extends MemoryScopeInput {
  workflowId: string;
  runId: string;
  turn: number;
  exchange: Array<{ role: 'user' | 'assistant'; text: string }>;
  /** The model that reads it (default: the run's), with the run's settings. */
  settings?: ModelSettings;
  timeoutMs?: number;
  /** The JSON Schema of the agent's profile of the user (working memory), when it keeps one. */
  profile?: Record<string, unknown>;
}

/** What `extractMemory` changed, and what its model call cost. */
export interface ExtractedMemory {
  added: string[];
  updated: string[];
  retired: string[];
  /** The profile's fields that changed (and were valid under its schema). */
  profile?: string[];
  usage: Usage;
  model?: string;
}

/** What a running tool asks the run's model (`ToolContext.askModel`): a short exchange of text. */
export interface ModelQuestion {
  messages: Array<{ role: 'user' | 'assistant'; content: string }>;
  system?: string;
  maxTokens?: number;
}

/** What `summarizeMessages` returns: the summary's text and what writing it cost. */
export interface SummaryReply {
  text: string;
  usage: Usage;
  /** The model that wrote it, by the name runs use. */
  model?: string;
}

/** Input of `executeTool`: one tool call, as the LLM wrote it. */
export interface ToolCallInput {
  name: string;
  toolCallId: string;
  /** The raw JSON arguments string; parsed and validated inside the activity. */
  arguments: string;
  /**
   * The call again, after its tool asked a person or the model (its outcome's `asked`): the
   * answer (`approved` false: declined; `text`: what they said, or what the model `model` wrote)
   * and the progress the tool asked with.
   */
  answer?: { approved: boolean; text?: string; progress?: unknown; model?: string };
  /** The run's tenant (given to the tool as `ctx.tenant`, and choosing its credentials); absent without one. */
  tenant?: string;
  /** The run's user (given to the tool as `ctx.user`: the memory tools' scope); absent without one. */
  user?: string;
  /**
   * Under policies: the agents the call works for, outermost first, the calling agent last (given
   * to the tool as `ctx.delegatedBy`): a tool that hands work to another agent passes it on.
   */
  delegatedBy?: PolicyPrincipal[];
  /**
   * A tool that works in the run's workspace (the built-in `bash`, `read_file`, ..., or one
   * defined with `workspace: true`): the workspace's limits and its committed state (`ref`, the
   * reference of its manifest in the blob store; absent: empty). The activity restores that state
   * before the tool runs, on whichever worker takes the attempt, and when the tool changed it,
   * saves the new state and answers its reference in the outcome's `workspace`.
   */
  workspace?: RunWorkspace;
}

/** Input of `resolveTools`. */
export interface ResolveToolsInput {
  tools?: string[];
  immediateTools?: string[];
  approvalTools?: string[];
  /** The run asked for a workspace: without a tool list, or one with no workspace tool, it gets the workspace tools. */
  workspace?: boolean;
}

/**
 * What `resolveTools` answers: the run's tools, and their version (a hash of each tool as the
 * model sees it, its description and parameters, and as the run treats it), from which a run
 * without a named agent gets its `agentVersion`.
 */
export interface ResolvedTools {
  tools: ToolInfo[];
  version: string;
}

/** Input of `resolveAgent`: the agent, and the run's own tool settings (which override the agent's). */
export interface ResolveAgentInput extends ResolveToolsInput {
  agent: string;
}
