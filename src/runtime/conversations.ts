import { randomBytes } from 'node:crypto';
import { WithStartWorkflowOperation, WorkflowUpdateFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import {
  runSummary,
  turnProblem,
  validateConversationOptions,
  type ApprovalDecision,
  type ChatMessage,
  type ConversationOptions,
  type ConversationResult,
  type ConversationStatus,
  type ConversationTurnResult,
  type TurnInput,
} from '../core';
import type { conversationWorkflow } from '../workflows';
import {
  cancelTurnUpdate,
  conversationStatusQuery,
  CONVERSATION_WORKFLOW_TYPE,
  decideApprovalUpdate,
  endConversationUpdate,
  queueMessageSignal,
  sendMessageUpdate,
  transcriptQuery,
} from '../workflows/definitions';

/**
 * Client side of conversations: one workflow per conversation id. Sending a message starts the
 * conversation if it is not open (Update-with-Start), so callers never need a separate "create".
 */

/** Why a conversation call failed: `invalid` input (nothing was written), `not_found`, or `rejected` by the workflow. */
export class ConversationError extends Error {
  constructor(
    readonly kind: 'invalid' | 'not_found' | 'rejected',
    message: string,
  ) {
    super(message);
    this.name = 'ConversationError';
  }
}

/** A fresh conversation id, e.g. `chat-3f9a1c2b`. */
export function newConversationId(): string {
  return `chat-${randomBytes(4).toString('hex')}`;
}

/** Where new conversations run, and with which options (ignored when the conversation is already open). */
export interface ConversationStart {
  taskQueue: string;
  options?: ConversationOptions;
}

/** Sends a message and waits for the turn's result; starts the conversation when it is not open. */
export async function sendMessage(client: Client, conversationId: string, turn: TurnInput, start: ConversationStart): Promise<ConversationTurnResult> {
  checkLocally(conversationId, turn, start.options);
  return translate(conversationId, () =>
    client.workflow.executeUpdateWithStart(sendMessageUpdate, { args: [turn], startWorkflowOperation: startOperation(conversationId, turn, start) }),
  );
}

/**
 * Sends a message and returns once the conversation accepted it; `result()` waits for the turn.
 * Chat clients use it to show progress while the turn runs.
 */
export async function startMessage(client: Client, conversationId: string, turn: TurnInput, start: ConversationStart): Promise<{ result(): Promise<ConversationTurnResult> }> {
  checkLocally(conversationId, turn, start.options);
  const handle = await translate(conversationId, () =>
    client.workflow.startUpdateWithStart(sendMessageUpdate, {
      args: [turn],
      waitForStage: 'ACCEPTED',
      startWorkflowOperation: startOperation(conversationId, turn, start),
    }),
  );
  return { result: () => translate(conversationId, () => handle.result()) };
}

/** Fire-and-forget: queues a message (a Signal) without waiting for the turn. */
export async function queueMessage(client: Client, conversationId: string, turn: TurnInput, start: ConversationStart): Promise<void> {
  checkLocally(conversationId, turn, start.options);
  await client.workflow.signalWithStart<typeof conversationWorkflow, [TurnInput]>(CONVERSATION_WORKFLOW_TYPE, {
    workflowId: conversationId,
    taskQueue: start.taskQueue,
    args: [start.options ?? {}],
    signal: queueMessageSignal,
    signalArgs: [turn],
    staticSummary: conversationSummary(turn),
  });
}

/** What the conversation is doing now. */
export function conversationStatus(client: Client, conversationId: string): Promise<ConversationStatus> {
  return translate(conversationId, () => handle(client, conversationId).query(conversationStatusQuery));
}

/** The whole transcript, across continue-as-new runs, oldest first. */
export async function readTranscript(client: Client, conversationId: string): Promise<{ system?: string; messages: ChatMessage[] }> {
  return translate(conversationId, async () => {
    const { system, messages } = await readRange(client, conversationId, undefined, 0, undefined);
    return system === undefined ? { messages } : { system, messages };
  });
}

/** Approves or rejects a tool call awaiting approval. */
export function decideApproval(client: Client, conversationId: string, decision: ApprovalDecision): Promise<{ callId: string; approved: boolean; stillPending: number }> {
  return translate(conversationId, () => handle(client, conversationId).executeUpdate(decideApprovalUpdate, { args: [decision] }));
}

/** Cancels the running turn (it ends with status `cancelled`); the conversation stays open. */
export function cancelTurn(client: Client, conversationId: string): Promise<{ turn: number }> {
  return translate(conversationId, () => handle(client, conversationId).executeUpdate(cancelTurnUpdate));
}

/** Closes the conversation after its queued messages are answered. */
export function endConversation(client: Client, conversationId: string): Promise<ConversationResult> {
  return translate(conversationId, () => handle(client, conversationId).executeUpdate(endConversationUpdate));
}

function handle(client: Client, conversationId: string, runId?: string): WorkflowHandle<typeof conversationWorkflow> {
  return client.workflow.getHandle<typeof conversationWorkflow>(conversationId, runId);
}

function startOperation(conversationId: string, turn: TurnInput, start: ConversationStart) {
  return new WithStartWorkflowOperation<typeof conversationWorkflow>(CONVERSATION_WORKFLOW_TYPE, {
    workflowId: conversationId,
    taskQueue: start.taskQueue,
    args: [start.options ?? {}],
    // An open conversation takes the message; a closed one is started afresh under the same id.
    workflowIdConflictPolicy: 'USE_EXISTING',
    staticSummary: conversationSummary(turn),
  });
}

function conversationSummary(turn: TurnInput): string {
  return `conversation: ${runSummary(turn.message ?? '')}`;
}

/** The same checks the workflow makes, done before any network call so mistakes fail fast. */
function checkLocally(conversationId: string, turn: TurnInput, options: ConversationOptions | undefined): void {
  if (!conversationId.trim()) throw new ConversationError('invalid', 'the conversation id must not be empty');
  const problem = turnProblem(turn, undefined, false) ?? validateConversationOptions(options ?? {})[0];
  if (problem) throw new ConversationError('invalid', problem);
}

/**
 * Reads transcript indices `[from, to)` from a run, reaching into earlier runs (continue-as-new)
 * for what this one no longer holds. Closed runs answer queries by replay on a worker.
 */
async function readRange(
  client: Client,
  conversationId: string,
  runId: string | undefined,
  from: number,
  to: number | undefined,
): Promise<{ system?: string; messages: ChatMessage[] }> {
  const h = handle(client, conversationId, runId);
  const first = await h.query(transcriptQuery, { offset: from, limit: to === undefined ? undefined : to - from });
  const end = to ?? first.total;
  const older =
    from < first.heldFrom && first.previousRunId ? (await readRange(client, conversationId, first.previousRunId, from, first.heldFrom)).messages : [];
  const messages = [...first.messages];
  for (let next = first.offset + messages.length; next < end; next = first.offset + messages.length) {
    const page = await h.query(transcriptQuery, { offset: next, limit: end - next });
    if (page.messages.length === 0) break;
    messages.push(...page.messages);
  }
  return { system: first.system, messages: [...older, ...messages] };
}

async function translate<T>(conversationId: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError || (err as { code?: number }).code === 5 /* gRPC NOT_FOUND */) {
      throw new ConversationError('not_found', `no conversation "${conversationId}" exists`);
    }
    if (err instanceof WorkflowUpdateFailedError) {
      const cause = err.cause as Error | undefined;
      throw new ConversationError('rejected', cause?.message ?? err.message);
    }
    throw err;
  }
}
