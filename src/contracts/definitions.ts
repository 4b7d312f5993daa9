import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { AgentStatus, ConversationTurnResult } from '../core/state/run-results';
import type { ApprovalDecision } from '../core/tool-calls/approvals';
import type { BranchInfo, ConversationInput, TurnInput } from '../core/conversation/conversation-state';
import type { ChatMessage, Usage } from '../core/messages/chat-message';
import type { ConversationResult, ConversationStatus, TranscriptPage } from '../core/conversation/conversation-status';
import type { EventPage, EventsRequest, TextBatch, ToolProgress, ToolRetry } from '../core/events/agent-events';
import type { MemoryForgotten } from '../core/conversation/forgetting';
import type { PendingApproval } from '../core/state/run-state';

export type { AgentStatus, ConversationStatus };

/**
 * Names shared by the workflows, the activities and clients. Importing these is safe outside
 * workflows: `defineQuery` and friends only build descriptors.
 */

/** The one-shot run workflow's type name. */
export const AGENT_WORKFLOW_TYPE = 'agentWorkflow';
/** The conversation workflow's type name. */
export const CONVERSATION_WORKFLOW_TYPE = 'conversationWorkflow';
/** The agent catalog workflow's type name. */
export const LIST_AGENTS_WORKFLOW_TYPE = 'listAgentsWorkflow';
/** The type of the short workflow a schedule starts to send a conversation its scheduled message. */
export const SCHEDULED_TURN_WORKFLOW_TYPE = 'scheduledTurnWorkflow';

/** The sink through which workflows hand new messages to their worker's model calls (see `message-sink.ts`). */
export const AGENT_MESSAGES_SINK = 'agentMessages';
/** The sink through which workflows hand the events they record to readers in their worker's process (see `contracts/live-text.ts`). */
export const AGENT_EVENTS_SINK = 'agentEvents';

/**
 * Events after an offset (runs and conversations): what subscribers read. A query, so reading
 * never adds to the history, however many subscribers there are.
 */
export const eventsQuery = defineQuery<EventPage, [EventsRequest?]>('events');
/** Text a model call is writing, in batches, from the model-call activity (see `TextBatch`). */
export const textBatchSignal = defineSignal<[TextBatch]>('agentText');
/** A tool-call activity starting an attempt after the first (a lost worker, a failed tool): a `tool_retried` event. */
export const toolRetriedSignal = defineSignal<[ToolRetry]>('toolRetried');
/** A running tool's progress, from its tool-call activity (at most one a second): a `tool_progress` event. */
export const toolProgressSignal = defineSignal<[ToolProgress]>('toolProgress');

/** A slice of messages by index. */
export interface MessagesRange {
  offset?: number;
  limit?: number;
}

/** Where a one-shot run is. */
export const statusQuery = defineQuery<AgentStatus>('status');
/** The run's messages as the model sees them, system message first; the model-call activity pages through them. */
export const messagesQuery = defineQuery<ChatMessage[], [MessagesRange?]>('messages');

/** Tool calls awaiting a person's decision (runs and conversations). */
export const pendingApprovalsQuery = defineQuery<PendingApproval[]>('pendingApprovals');
/** Approves or rejects one pending tool call, by id (runs and conversations). */
export const decideApprovalUpdate = defineUpdate<
  { callId: string; approved: boolean; stillPending: number },
  [ApprovalDecision]
>('decideApproval');

/**
 * Delivers an event to a run or conversation: a `wait_for_event` call of that name takes it (one
 * that arrives before anything waits is kept). A signal, so it is recorded even while every worker
 * is down; clients validate the name and payload first (`deliverEvent`).
 */
export const deliverEventSignal = defineSignal<[{ name: string; payload?: unknown; id?: string }]>('deliverEvent');
/**
 * What an agent called as a tool tells its caller while it waits for approvals: every call it (and
 * the agents it calls, at any depth) waits on, each naming its run's workflow id; `pending: []`
 * once none is left. The caller lists them with its own (`pendingApprovals`, `status`).
 */
export const childApprovalsSignal = defineSignal<[ChildApprovals]>('childApprovals');

/** The argument of {@link childApprovalsSignal}. */
export interface ChildApprovals {
  workflowId: string;
  agent?: string;
  pending: PendingApproval[];
  /** Calls decided since the last signal, for the caller's event stream. */
  decided?: Array<{ callId: string; approved: boolean; reason?: string; workflowId: string }>;
  /** Calls escalated since the last signal. */
  escalated?: Array<{ callId: string; deadline: string; workflowId: string }>;
}

/** Sends a user message and returns that turn's result. Rejected (nothing written) when invalid. */
export const sendMessageUpdate = defineUpdate<ConversationTurnResult, [TurnInput]>('sendMessage');
/** Fire-and-forget variant of {@link sendMessageUpdate}. */
export const queueMessageSignal = defineSignal<[TurnInput]>('queueMessage');
/**
 * Asks an idle conversation to move to its deployment's current build now (Worker Versioning):
 * it continues as new onto it when its target build changed, and does nothing otherwise.
 * `deploy promote` sends it to the idle conversations pinned to older builds.
 */
export const moveToCurrentBuildSignal = defineSignal('moveToCurrentBuild');
/**
 * Facts deleted from memory (`durable-agents memory delete`) that this run or conversation holds
 * copies of: it replaces their quotations in its messages and marks the summaries that drew on
 * them (see `forgetQuotes`). Sent by the deletion to each open workflow the facts came from or went to.
 */
export const memoryForgottenSignal = defineSignal<[MemoryForgotten]>('memoryForgotten');
/**
 * Cancels the running turn; it ends with status `cancelled` and the conversation stays open.
 * With `{ turn }`, only that turn: refused once it has ended (a Stop meant for it must not stop
 * the next). Stops of one turn share the Update id `stop-<turn>`, so Temporal answers them as one.
 */
export const cancelTurnUpdate = defineUpdate<{ turn: number }, [{ turn?: number }]>('cancelTurn');
/** Closes the conversation once queued messages are answered. */
export const endConversationUpdate = defineUpdate<ConversationResult>('end');
/** What the conversation is doing. Same name as the run's query: the UI's one place to look. */
export const conversationStatusQuery = defineQuery<ConversationStatus>('status');
/** A slice of a conversation's transcript, of its current branch or another. */
export interface TranscriptRange extends MessagesRange {
  /** A branch's id (see `branchesQuery`); absent: the current branch. */
  branch?: string;
}
/** A page of the transcript, by transcript index. */
export const transcriptQuery = defineQuery<TranscriptPage, [TranscriptRange?]>('transcript');
/** The conversation's branches: the current one first (see `BranchInfo`). */
export const branchesQuery = defineQuery<BranchInfo[]>('branches');
/** Makes another branch current (between turns); answers with the branches as they are then. */
export const switchBranchUpdate = defineUpdate<BranchInfo[], [{ branch: string }]>('switchBranch');
/**
 * The input of a new conversation that starts before a user message of a branch this run keeps
 * (`forkConversation` with `into`): see `forkedConversation`.
 */
export const forkSourceQuery = defineQuery<ConversationInput, [{ atMessage: number; branch?: string }]>('forkSource');
/** Tokens used so far, all turns. */
export const usageQuery = defineQuery<Usage>('usage');

/**
 * The workflow that keeps one A2A task (see `a2a/task-store.ts`): the task as the A2A server last
 * saved it, in plain JSON, until the task ends. Temporal is the A2A task store.
 */
export const A2A_TASK_WORKFLOW_TYPE = 'a2aTaskWorkflow';
/** What an A2A task record holds: the task, and whether it has ended (the record then closes). */
export interface A2ATaskRecord {
  task: unknown;
  final: boolean;
}
/** Saves the task (the record's latest state). A signal: saving never waits for a worker. */
export const a2aTaskSaveSignal = defineSignal<[A2ATaskRecord]>('a2aTaskSave');
/** The task as last saved. */
export const a2aTaskQuery = defineQuery<unknown>('a2aTask');
/** A webhook an A2A task's changes go to (its auth headers ready), with the A2A config it came from. */
export interface A2APushTarget {
  id: string;
  url: string;
  headers: Record<string, string>;
  config: unknown;
}
/** Sets a task's push notification config (`set`), or removes one (`remove`: its id, `*` for all). */
export const a2aTaskPushSignal = defineSignal<[{ set?: A2APushTarget; remove?: string }]>('a2aTaskPush');
/** The task's push notification configs, as the A2A server saved them. */
export const a2aTaskPushQuery = defineQuery<unknown[]>('a2aTaskPushConfigs');

/**
 * How long the record of an ended A2A task stays open for its push notification configs: A2A lets
 * a client set, read, list and delete them on any task, and one set then notifies nothing, but is
 * kept as the others are. Later the record has ended, and a change is refused.
 */
export const A2A_CONFIG_WINDOW_MS = 60 * 60_000;
