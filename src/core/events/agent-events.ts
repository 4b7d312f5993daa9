import type { GuardrailKind } from '../state/guardrail-types';
import type { AgentResult, ConversationTurnResult } from '../state/run-results';

/**
 * What a run or conversation tells its subscribers, in order. Every event carries its `offset`
 * (monotonic per workflow id, across continue-as-new) and the `turn` it belongs to (1 for a
 * one-shot run).
 *
 * Reading text: the `text_delta`s of one model call (`call`), concatenated, are its final
 * `content`. A `model_retry` for that call means the text shown so far for it is void (the
 * attempt that wrote it failed, e.g. its worker was killed); the new attempt's deltas follow
 * from the start of the answer. A `model_fallback` says a model call failed for good and the
 * next of the agent's models answers instead, as the call it names (a new call number).
 */
export type AgentEventBody =
  /**
   * `messageId`: the sender's id of the message the turn answers (see `TurnInput.messageId`).
   * `branch`: the branch the turn is on, when not `main`; `forkedAt`: the turn started that branch,
   * its message taking the place of the transcript's message at that index (see `branches.ts`).
   */
  | { type: 'turn_started'; message: string; messageId?: string; branch?: string; forkedAt?: number }
  /** Another branch was made current (`switchBranch`): what the conversation shows changed. */
  | { type: 'branch_switched'; branch: string }
  /** A message sent with `busy: "steer"` joined the running turn: the model sees it at its next call. */
  | { type: 'message_steered'; message: string; messageId?: string }
  | { type: 'model_call_started'; call: number; iteration: number }
  | { type: 'text_delta'; call: number; delta: string }
  | { type: 'model_retry'; call: number; attempt: number; error: string }
  /** The readable reasoning the model gave with a call's reply (thinking text, a reasoning summary), after its text. */
  | { type: 'reasoning'; call: number; text: string }
  | { type: 'model_fallback'; call: number; from: string; to: string; error: string }
  | {
      type: 'tool_call_started';
      id: string;
      name: string;
      arguments: Record<string, unknown>;
      childWorkflowId?: string;
    }
  | { type: 'handoff'; from?: string; to: string }
  | {
      type: 'compaction';
      /** The messages summarised, `[from, to)` of the run's (a conversation: its transcript run's) messages. */
      from: number;
      to: number;
      /** The request's estimated size before, and after with the summary in their place. */
      tokensBefore: number;
      tokensAfter: number;
      /** Why no summary could be written: the messages were dropped instead, with a note in the summary's place. */
      summaryFailed?: string;
    }
  | {
      type: 'tool_call_finished';
      id: string;
      name: string;
      /** A preview of the output (the text the model reads, up to about 16,000 characters). */
      result: string;
      error: boolean;
      /** `result` is the whole JSON of the non-string value the tool returned (see `ToolOutcome.json`). */
      json?: true;
      /** The call changed the run's workspace: the paths it added, changed and removed. */
      workspace?: { added: string[]; changed: string[]; removed: string[] };
    }
  /**
   * A tool call is being tried again: its last attempt's worker was lost (`worker lost`: a crash, a
   * kill, a cut connection), or the tool failed (`tool failed`). Its side effects may have happened
   * in the attempt before (the idempotency key is the same in each).
   */
  | { type: 'tool_retried'; id: string; name: string; attempt: number; reason: 'worker lost' | 'tool failed' }
  /**
   * A running tool told how far it is (`ToolContext.reportProgress`; an MCP server's progress
   * notifications): `progress` of `total` when it knows the total. At most one a second per call.
   */
  | { type: 'tool_progress'; id: string; name: string; progress: number; total?: number; message?: string }
  | {
      type: 'approval_requested';
      callId: string;
      tool: string;
      arguments: Record<string, unknown>;
      summary: string;
      /** The running tool asks a person this (see `PendingApproval.question`). */
      question?: string;
      /** When the approval timeout applies (ISO 8601), with one. */
      deadline?: string;
      /** Asked by an agent called as a tool (at any depth): its run's workflow id and agent. */
      workflowId?: string;
      agent?: string;
    }
  | { type: 'approval_decided'; callId: string; approved: boolean; reason?: string; workflowId?: string }
  /**
   * An MCP server asks for input in the middle of a tool call (elicitation): the form it sent (or
   * the URL to open), for clients that draw it. The `approval_requested` that follows is how it is
   * answered (an approval with the answer as its reason, a rejection to decline).
   */
  | {
      type: 'mcp_elicitation';
      callId: string;
      tool: string;
      server: string;
      message: string;
      requestedSchema?: Record<string, unknown>;
      url?: string;
    }
  /** The approval timeout ran out with `onApprovalTimeout: 'escalate'`: a second period runs until `deadline`. */
  | { type: 'approval_escalated'; callId: string; deadline: string; workflowId?: string }
  /** A durable wait began: a `sleep` (with its reason) or a `wait_for_event` (with the event's name), until `until` at the latest. */
  | { type: 'wait_started'; callId: string; kind: 'sleep' | 'event'; name?: string; reason?: string; until: string }
  | { type: 'wait_ended'; callId: string; kind: 'sleep' | 'event'; outcome: 'elapsed' | 'event' | 'timed_out' }
  /** An event was delivered to the run or conversation (kept until a `wait_for_event` takes it). */
  | { type: 'event_received'; name: string; id?: string; duplicate?: true }
  /** A guardrail refused the request, the answer or a tool call: the run (turn) ends with status `guardrail_tripped`. */
  | { type: 'guardrail_tripped'; guardrail: string; kind: GuardrailKind; reason: string; callId?: string }
  /** A guardrail sent the answer back to the model (`retry`) or made a tool call wait for approval (`approve`). */
  | {
      type: 'guardrail_intervened';
      guardrail: string;
      kind: GuardrailKind;
      action: 'retry' | 'approve';
      reason: string;
      callId?: string;
    }
  /**
   * The policies decided a tool call other than `permit` (see docs/policies.md): `forbid` (the
   * model reads why; the tool does not run) or `ask` (it waits for a person's approval).
   * `enforced` false: the worker's policies only log (`AGENT_POLICY_MODE=log`), and the call went ahead.
   */
  | {
      type: 'policy_decided';
      callId: string;
      tool: string;
      decision: 'forbid' | 'ask';
      policies: string[];
      enforced: boolean;
      /** The policy set that decided (the SHA-256 of its text). */
      policySet: string;
      /** A host of the workspace's allow-list the call was not granted (`grantNetwork`): it runs without it. */
      host?: string;
    }
  | { type: 'turn_completed'; result: AgentResult | ConversationTurnResult }
  | { type: 'turn_failed'; error: string; errorType: string };

/** One event as subscribers receive it. */
export type AgentEvent = AgentEventBody & { offset: number; turn: number };

/** Every event type, e.g. for validating a client's filter. */
export const AGENT_EVENT_TYPES = [
  'turn_started',
  'branch_switched',
  'message_steered',
  'model_call_started',
  'text_delta',
  'model_retry',
  'reasoning',
  'model_fallback',
  'tool_call_started',
  'tool_call_finished',
  'tool_retried',
  'tool_progress',
  'handoff',
  'compaction',
  'approval_requested',
  'approval_decided',
  'mcp_elicitation',
  'approval_escalated',
  'wait_started',
  'wait_ended',
  'event_received',
  'guardrail_tripped',
  'guardrail_intervened',
  'policy_decided',
  'turn_completed',
  'turn_failed',
] as const satisfies readonly AgentEvent['type'][];

/**
 * What the model-call activity signals while the model writes: text of one attempt of one call.
 * `seq` counts the attempt's batches from 1, so a batch delivered twice is applied once.
 * `failed` reports why an attempt is about to fail (Temporal may retry it). `at` is where `text`
 * starts in the attempt's text: a reader that follows the workflow's history takes the batch from
 * its Signal as it arrives, before the workflow has applied it (the live path's positions; see
 * `LiveTextMerge`). The workflow itself does not need it (batches of an attempt come in order).
 */
export interface TextBatch {
  call: number;
  attempt: number;
  seq: number;
  text?: string;
  failed?: string;
  /** Absent from batches of activities older than 2026-11-30: readers then wait for the workflow to apply them. */
  at?: number;
}

/** What a tool-call activity signals as it starts an attempt after the first (see `tool_retried`). */
export interface ToolRetry {
  callId: string;
  name: string;
  attempt: number;
  reason: 'worker lost' | 'tool failed';
}

/** What a tool-call activity signals as its tool reports progress (see `tool_progress`). */
export interface ToolProgress {
  callId: string;
  name: string;
  progress: number;
  total?: number;
  message?: string;
}

/** A page of events (the `events` query's result). */
export interface EventPage {
  events: AgentEvent[];
  /** The offset the next event will get; ask with `after: next - 1` to wait for it. */
  next: number;
  /** The oldest offset still kept; older ones were dropped with their turn (see `EventLog`). */
  firstKept: number;
  /** Whether more events than this page are already there. */
  more: boolean;
}

/** Arguments of the `events` query. */
export interface EventsRequest {
  /** The last offset the subscriber saw; absent: from the start of the current turn. */
  after?: number;
  /**
   * Instead of `after`: from the start of the turn that answers the message with this id (its
   * `turn_started`; for a message sent with `busy: "steer"`, its `message_steered` in the turn it
   * joined), or, when that has not happened (or is no longer kept), no events, with `next` to wait
   * from.
   */
  messageId?: string;
  /** At most this many events (default and cap `MAX_EVENTS_PER_PAGE`, 1000). */
  limit?: number;
}

/** Events in one page at most; pages also stop at {@link MAX_EVENT_PAGE_CHARS} of JSON. */
export const MAX_EVENTS_PER_PAGE = 1000;
/** Keeps a query result well under gRPC's 4 MB default message limit. */
export const MAX_EVENT_PAGE_CHARS = 1_000_000;
