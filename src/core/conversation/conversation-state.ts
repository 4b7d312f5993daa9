import type { BusyPolicy } from './busy';
import type { EventLogSnapshot } from '../events/event-log';
import type { DeliveredEvent } from '../time/durable-waits';
import type { AgentInput } from '../state/run-options';
import type { RunState } from '../state/run-state';
import type { ChatMessage, ImageRef, Usage } from '../messages/chat-message';
import type { ToolInfo } from '../messages/tool-info';

/**
 * The shapes of a conversation's state, in one module of types that both its bookkeeping
 * (`conversation.ts`) and its branches (`branches.ts`) read, so neither imports the other's.
 */

/** A conversation's settings, fixed when it starts; every turn uses them. */
export interface ConversationOptions extends Omit<AgentInput, 'message' | 'continueAsNewAfter'> {
  /**
   * A window of messages (besides the system message) instead of memory by tokens: the LLM sees
   * the last N, at least 3. Unset: `maxPromptTokens` bounds the requests (its default: from the
   * model's context window) and older messages are summarised.
   */
  memoryWindow?: number;
  /** The conversation closes after this long without a message, e.g. `"24h"` (default). */
  idleTimeout?: string | number;
  /** What a message that arrives while a turn runs does, unless it says (see {@link BUSY_POLICIES}); default `enqueue`. */
  busy?: BusyPolicy;
}

/** The conversation workflow's input: its options, plus the state carried over by continue-as-new. */
export interface ConversationInput extends ConversationOptions {
  carry?: ConversationCarry;
  /** The version of `carry`'s shape (see core/state/carry-versions.ts); none: version 1. */
  carryVersion?: number;
}

/**
 * What a continued-as-new run starts from: the conversation state with only the memory window
 * of messages, never the whole transcript, so every run's history stays bounded.
 */
export type ConversationCarry = Omit<ConversationState, 'options' | 'tools' | 'previousRunId'> & {
  tools: ToolInfo[];
  previousRunId: string;
  /** The event stream's offsets and its last turns, so subscribers see one stream across runs. */
  events?: EventLogSnapshot;
  /** Events delivered that no `wait_for_event` took yet. */
  inbox?: DeliveredEvent[];
  /** The ids of the last events delivered, so a repeated delivery is still dropped after continue-as-new. */
  eventIds?: string[];
  /** The next run is on another build: it resolves its agent again there (see {@link withResolvedAgent}). */
  refreshAgent?: boolean;
};

/** One user message (the `sendMessage` Update's and `queueMessage` Signal's argument). */
export interface TurnInput {
  message: string;
  /** Images sent with the message, by reference (clients store the bytes: see {@link ImageRef}). */
  images?: ImageRef[];
  /** Limit this turn to some of the conversation's tools. */
  tools?: string[];
  /**
   * Tools whose calls need a person's approval from this turn on. They are added to the
   * conversation's approval tools (never removed), so a safety option given to an open
   * conversation is applied, not silently dropped with the start options.
   */
  approvalTools?: string[];
  /**
   * The sender's id for this message (a UI message's id, an `Idempotency-Key`): the same message
   * sent again is answered once, and a client finds the turn it starts by it (`turn_started`).
   */
  messageId?: string;
  /** What this message does if a turn runs when it arrives (default: the conversation's `busy`, else `enqueue`). */
  busy?: BusyPolicy;
  /**
   * Fork the conversation here: this message takes the place of an earlier user message, its turn
   * sees the transcript before it, and the branch it replaces stays readable (see `branches.ts`).
   */
  fork?: ForkPoint;
}

/** Signalled messages that were invalid (signals cannot be refused, so they are counted and reported). */
export interface RejectedMessages {
  count: number;
  lastError?: string;
}

/** Everything a conversation workflow keeps between turns. Plain JSON. */
export interface ConversationState {
  options: ConversationOptions;
  /** Resolved at the start; carried over continue-as-new so a registry change cannot break an open conversation. */
  tools?: ToolInfo[];
  /** The named agent's version, resolved with the tools (see `agentVersion`). */
  agentVersion?: string;
  /**
   * With a named agent: the options as the conversation was started, before the agent's settings
   * were merged in, so a move to another build (Worker Versioning) merges that build's instead.
   */
  given?: ConversationOptions;
  /** With Worker Versioning: the build this run of the conversation is on (not carried: each run has its own). */
  buildId?: string;
  /** Transcript index of `messages[0]`; earlier messages stay readable from earlier runs. */
  transcriptStart: number;
  /** With a workspace: its committed state after the last turn (absent: empty, or none). */
  workspace?: string;
  /** The transcript this run holds, without the system message. */
  messages: ChatMessage[];
  turns: number;
  usage: Usage;
  toolExecutionCount: number;
  /** 1 + how many times the conversation continued as new. */
  runs: number;
  previousRunId?: string;
  /**
   * Set when this conversation was forked from another (`forkConversation` with `into`) and the
   * messages before `transcriptStart` are in that one's run `previousRunId`.
   */
  previousWorkflowId?: string;
  rejectedMessages: RejectedMessages;
  /**
   * The version of the messages, for the worker's message cache: a handoff (which changes the
   * system message), a fork and a switch of branches each make a new one (see `RunState.revision`).
   */
  revision?: number;
  /** With a budget: the size of the last model call, which the next turn's first call will at least be. */
  lastCall?: RunState['lastCall'];
  /** With `maxPromptTokens`: the summary and where the model's view starts (indices into `messages`). */
  context?: RunState['context'];
  /** With `maxPromptTokens`: the last request's size, calibrating the estimates of the next turn. */
  lastPrompt?: RunState['lastPrompt'];
  /** With `maxPromptTokens`: the compactions of all turns so far. */
  compactions?: number;
  /** The ids of the latest answered messages, with the turn that answered each (see `message-ids.ts`). */
  answeredMessages?: Array<[string, number]>;
  /** The branch new messages go to, when the conversation was forked (absent: `main`; see `branches.ts`). */
  branch?: BranchOrigin;
  /** The branches the current one replaced that this run keeps, whole (never carried over continue-as-new). */
  branches?: BranchSnapshot[];
  /** The branches earlier runs keep: where each is read. */
  olderBranches?: BranchInfo[];
  /** How many forks the conversation made (the next branch's id is `b<n + 1>`). */
  branchesMade?: number;
  /** The highest message version (`revision`) a fork or a switch gave this run (see `branches.ts`). */
  revisionsMade?: number;
}

/**
 * Where a new branch starts: at the user message with this transcript index, or with this id
 * (the id its sender gave it, `TurnInput.messageId`, or the id a transcript read as UI messages
 * gives it, `<conversationId>-user-<index>`). The new turn's message takes that message's place.
 */
export type ForkPoint = { atMessage: number } | { atMessageId: string };

/** What the current branch is: its id, and where it parted from the branch it was forked from. */
export interface BranchOrigin {
  id: string;
  /** The branch it was forked from. */
  parent?: string;
  /** The transcript index of the first message that differs from `parent`. */
  forkedAt?: number;
}

/** A branch the current one replaced, kept by this run: the conversation state that is per branch. */
export interface BranchSnapshot extends BranchOrigin {
  /** Its messages from the run's `transcriptStart` on. */
  messages: ChatMessage[];
  context?: ConversationState['context'];
  lastPrompt?: ConversationState['lastPrompt'];
  options: ConversationState['options'];
  tools?: ConversationState['tools'];
  /** Its workspace's committed state. */
  workspace?: string;
}

/** A branch as clients list it (`branches` query, `GET /conversations/:id/branches`). */
export interface BranchInfo extends BranchOrigin {
  /** Messages in the branch's transcript, system message excluded. */
  messageCount: number;
  /** Whether new messages go to this branch. */
  current: boolean;
  /** The text of the branch's first own message (its message at `forkedAt`), shortened: a label for it. */
  label?: string;
  /**
   * Set when an earlier run of the conversation (before it continued as new) keeps the branch: it
   * is read from that run, and cannot be made current again (fork a new conversation from it).
   */
  heldBy?: string;
}
