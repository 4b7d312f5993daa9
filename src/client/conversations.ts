import { randomBytes, randomUUID } from 'node:crypto';
import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowUpdateFailedError,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import { fairnessWeightProblem } from '../core/fleet/tenants';
import { runSummary } from '../core/context/summaries';
import { turnProblem, validateConversationOptions } from '../core/conversation/conversation';
import { workflowIdProblem } from '../core/run/run-input';
import type { ConversationOptions, TurnInput } from '../core/conversation/conversation-state';
import type { ConversationTurnResult } from '../core/state/run-results';
import type { conversationWorkflow } from '../workflows/bundle';
import {
  conversationStatusQuery,
  CONVERSATION_WORKFLOW_TYPE,
  queueMessageSignal,
  sendMessageUpdate,
} from '../contracts/definitions';
import { ClientError } from './client-error';
import { withOutageRetries, type OutageOptions } from './outages';
import { forgetOpen, recentlyOpen, seenOpen } from './recent-conversations';
import { explainFailure, lookupWorkflow } from './workflow-lookup';
import { acceptedWithin, notAcceptedYet } from './accepted-within';
import { openedBefore } from './opened-before';
import { storedImages } from './stored-images';
import { explainTenantStart, tenantStartOptions } from './tenant-scope';
import { troubleClause, workflowTaskTrouble } from './workflow-task-failure';
import type { BlobStore } from '../storage/blob-store';
import type { ImageInput } from '../storage/images';

export { cancelTurn, conversationStatus, endConversation, stopTurn } from './conversation-controls';
export { seenOpen } from './recent-conversations';

/**
 * Client side of conversations: one workflow per conversation id. Sending a message starts the
 * conversation if it is not open (Update-with-Start), so callers never need a separate "create".
 * Failures are {@link ClientError}s that say what happened.
 */

/** A fresh conversation id, e.g. `chat-3f9a1c2b`. */
export function newConversationId(): string {
  return `chat-${randomBytes(4).toString('hex')}`;
}

/** Where new conversations run, and with which options (they apply only when the message starts the conversation). */
export interface ConversationStart {
  taskQueue: string;
  /** The conversation's options, applied when the message opens it (`options.tenant`: whose it is). */
  options?: ConversationOptions;
  /** The tenant's share when the task queue backs up (default 1). */
  fairnessWeight?: number;
  /** Where the message's images are stored (default: the file store `AGENT_BLOB_DIR` names); the worker must read the same store. */
  blobStore?: BlobStore;
}

/**
 * A user message as clients send it: the turn input, with `images` as URLs, data URLs or bytes
 * (stored in the blob store first; the conversation gets references).
 */
export type MessageRequest = Omit<TurnInput, 'images'> & { images?: readonly ImageInput[] };

/** The turn input for a message: its images stored, references in their place. */
async function turnInput(client: Client, message: MessageRequest, store: BlobStore | undefined): Promise<TurnInput> {
  const { images, ...rest } = message;
  const refs = await storedImages(client, images, store);
  return refs ? { ...rest, images: refs } : rest;
}

/** A message the conversation accepted, or that Temporal keeps for it (`queued`). */
export interface SentMessage {
  /**
   * The conversation was already open, so `options` of {@link ConversationStart} were not applied
   * (the turn's own `tools` and `approvalTools` were). Looked up while the message went: should
   * Temporal not answer that lookup, false.
   */
  wasOpen: boolean;
  /** The message's id (the one given, else a new one): the turn that answers it names it (`turn_started.messageId`). */
  messageId: string;
  /**
   * No worker accepted the message within `acceptWithinMs`, so it was queued durably (a Signal
   * Temporal keeps): the conversation answers it once a worker runs it. `result()` then fails
   * with a `queued` ClientError; follow the turn by `messageId` instead.
   */
  queued: boolean;
  /** The turn's result; rides out Temporal outages like {@link sendMessage}. */
  result(): Promise<ConversationTurnResult>;
}

/** How {@link startMessage} waits for the conversation to accept a message. */
export interface SendOptions extends OutageOptions {
  /**
   * How long to wait for a worker to accept the message; past it, the message is queued durably
   * instead (`SentMessage.queued`). Default: as long as it takes (a worker that never comes
   * leaves the call waiting).
   */
  acceptWithinMs?: number;
}

/**
 * Sends a message and waits for the turn's result; starts the conversation when it is not open.
 * Waiting rides out a Temporal outage of up to `wait.budgetMs` (default 10 minutes); the message
 * carries an update id, so asking again after an outage never sends it twice.
 */
export async function sendMessage(
  client: Client,
  conversationId: string,
  turn: MessageRequest,
  start: ConversationStart,
  wait: SendOptions = {},
): Promise<ConversationTurnResult> {
  return (await startMessage(client, conversationId, turn, start, wait)).result();
}

/**
 * Sends a message and returns once the conversation accepted it; `result()` waits for the turn.
 * Chat clients use it to show progress while the turn runs. A message refused by a conversation
 * it would have started leaves nothing behind: that empty conversation is removed again.
 */
export async function startMessage(
  client: Client,
  conversationId: string,
  message: MessageRequest,
  start: ConversationStart,
  wait: SendOptions = {},
): Promise<SentMessage> {
  // Every message has an id: its Update's id (Temporal answers the same Update sent twice once),
  // the conversation's (it answers the same message once), and how followers find its turn.
  const messageId = message.messageId ?? randomUUID();
  // Checked before its images are stored, and with them after: a refused message leaves no blob.
  checkLocally(conversationId, { ...message, images: undefined, messageId }, start);
  const turn = await turnInput(client, { ...message, messageId }, start.blobStore);
  checkLocally(conversationId, turn, start);
  // Whether it was open is learnt while the message goes (see opened-before.ts): a conversation
  // this process sent to a moment ago is taken as open without asking.
  const opened = recentlyOpen(client, conversationId)
    ? Promise.resolve(true)
    : openedBefore(client, conversationId, undefined, messageId);
  // An id of another kind of workflow (a one-shot run's) stops the message as soon as the lookup
  // says so: sent meanwhile, it could wait for an acceptance that never comes.
  const refused = new AbortController();
  opened.catch((err: unknown) => {
    if (err instanceof ClientError && err.kind === 'wrong_kind') refused.abort(err);
  });
  // Whether it was open, once the lookup answered: an id of another kind of workflow is refused,
  // and a lookup the server could not answer is made again (waiting out an outage as the message
  // does) where the kind decides what happens next; elsewhere it is taken as not open.
  const wasOpenBefore = (certain = false) =>
    opened.catch((err: unknown) => {
      if (err instanceof ClientError && err.kind === 'wrong_kind') throw err;
      return certain ? openedBefore(client, conversationId, wait, messageId) : false;
    });
  // `runId`: the run the message went to, once the Update was accepted.
  const failed = async (err: unknown, wasOpen: boolean, runId?: string) => {
    if (!wasOpen && err instanceof WorkflowUpdateFailedError) await discardIfUnused(client, conversationId, runId);
    const tenantless = explainTenantStart(client, err);
    if (tenantless !== err) return tenantless;
    return explainFailure(client, conversationId, err, 'conversation');
  };
  // `again`: the id's last run has closed, so the message starts it afresh.
  const send = (again: boolean, signal?: AbortSignal) =>
    withOutageRetries(
      () =>
        client.workflow.startUpdateWithStart(sendMessageUpdate, {
          args: [turn],
          updateId: messageId,
          waitForStage: 'ACCEPTED',
          // A with-start operation is single-use: a fresh one for every attempt.
          startWorkflowOperation: startOperation(conversationId, turn, start, again),
        }),
      { ...wait, signal },
    );
  const accept = async (again: boolean) => {
    const stop = AbortSignal.any([refused.signal, ...(wait.signal ? [wait.signal] : [])]);
    try {
      return wait.acceptWithinMs === undefined
        ? await client.withAbortSignal(stop, () => send(again, stop))
        : await acceptedWithin(client, (signal) => send(again, signal), {
            acceptWithinMs: wait.acceptWithinMs,
            signal: stop,
          });
    } catch (err) {
      if (refused.signal.aborted) throw refused.signal.reason;
      throw err;
    }
  };
  let handle;
  // The message started a closed conversation afresh: it was not open.
  let reopened = false;
  try {
    try {
      handle = await accept(false);
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      // A closed workflow holds the id, which a lookup from now says (not the one under way, nor
      // the cache, which may predate its closing): a one-shot run's is refused, a conversation's
      // starts afresh.
      forgetOpen(client, conversationId);
      reopened = await openedBefore(client, conversationId, wait).then(() => true);
      handle = await accept(true);
    }
  } catch (err) {
    if (err instanceof ClientError && err.kind === 'wrong_kind') throw err;
    const wasOpen = reopened ? false : await wasOpenBefore();
    const explained = await failed(err, wasOpen);
    // Its workers fail its tasks, so it cannot accept an Update now; a Signal the server keeps.
    if (wasOpen && explained instanceof ClientError && explained.kind === 'worker_failing')
      throw await queueWhileFailing(client, conversationId, turn, explained);
    throw explained;
  }
  // Answered long ago (the message's acceptance takes a workflow task); before a Signal that would
  // start a workflow under the id, for certain.
  const wasOpen = reopened ? false : await wasOpenBefore(handle === 'not accepted');
  if (handle === 'not accepted') {
    // No worker answers now (none runs, or the one that ran it died): Temporal keeps the message
    // as a Signal, and the conversation answers it once a worker runs it. Should the Update be
    // accepted later too, the conversation knows the message by its id and answers it once.
    try {
      await queueSignal(client, conversationId, turn, start);
    } catch (err) {
      throw await explainFailure(client, conversationId, err, 'conversation');
    }
    return {
      wasOpen,
      messageId,
      queued: true,
      result: () => Promise.reject(notAcceptedYet(conversationId, wait.acceptWithinMs!)),
    };
  }
  const accepted = handle;
  seenOpen(client, conversationId);
  return {
    wasOpen,
    messageId,
    queued: false,
    result: async () => {
      try {
        return await withOutageRetries(() => accepted.result(), wait);
      } catch (err) {
        throw await failed(err, wasOpen, accepted.workflowRunId);
      }
    },
  };
}

/** Sends a turn as the `queueMessage` Signal, starting the conversation when it is not open. */
async function queueSignal(
  client: Client,
  conversationId: string,
  turn: TurnInput,
  start: ConversationStart,
): Promise<void> {
  await client.workflow.signalWithStart<typeof conversationWorkflow, [TurnInput]>(CONVERSATION_WORKFLOW_TYPE, {
    workflowId: conversationId,
    taskQueue: start.taskQueue,
    args: [start.options ?? {}],
    signal: queueMessageSignal,
    signalArgs: [turn],
    staticSummary: conversationSummary(turn),
    ...startPriority(start),
  });
}

/**
 * Queues a message an open conversation could not accept now because its workers fail its tasks:
 * as the `queueMessage` Signal, which Temporal keeps whatever the workers do, so the conversation
 * takes it once a worker can run it. Returns the `queued` error that says so (or, when even the
 * Signal could not be sent, the original error: the message was not accepted).
 */
async function queueWhileFailing(
  client: Client,
  conversationId: string,
  turn: TurnInput,
  refused: ClientError,
): Promise<ClientError> {
  // Read before the Signal: the Signal schedules a new workflow task, whose first attempt says nothing yet.
  const before = await workflowTaskTrouble(client, conversationId).catch(() => undefined);
  try {
    await handle(client, conversationId).signal(queueMessageSignal, turn);
  } catch {
    return new ClientError(
      'worker_failing',
      `${refused.message.replace(/ It goes on once a worker can run it\.$/, '')} The message was not accepted: send it again later.`,
      conversationId,
    );
  }
  const trouble = before ?? (await workflowTaskTrouble(client, conversationId).catch(() => undefined));
  const why = trouble ? troubleClause(trouble) : 'its workers fail its workflow tasks';
  return new ClientError(
    'queued',
    `"${conversationId}" cannot answer now: ${why}. The message is queued (Temporal keeps it) and the conversation takes it once a worker can run it; its answer will be in the conversation's history and event stream.`,
    conversationId,
  );
}

/**
 * Fire-and-forget: queues a message (a Signal) without waiting for the turn. A signal cannot be
 * refused, so an invalid one is dropped by the conversation and counted in its status.
 */
export async function queueMessage(
  client: Client,
  conversationId: string,
  message: MessageRequest,
  start: ConversationStart,
): Promise<{ wasOpen: boolean }> {
  const request = { ...message, messageId: message.messageId ?? randomUUID() };
  checkLocally(conversationId, { ...request, images: undefined }, start);
  const turn = await turnInput(client, request, start.blobStore);
  checkLocally(conversationId, turn, start);
  const wasOpen = await openedBefore(client, conversationId);
  try {
    await queueSignal(client, conversationId, turn, start);
  } catch (err) {
    throw await explainFailure(client, conversationId, err, 'conversation');
  }
  return { wasOpen };
}

function handle(client: Client, conversationId: string): WorkflowHandle<typeof conversationWorkflow> {
  return client.workflow.getHandle<typeof conversationWorkflow>(conversationId);
}

/**
 * Removes the conversation a refused first message started, which holds nothing: Update-with-Start
 * starts the workflow before the Update's validator runs, and a conversation whose agent cannot be
 * resolved fails once its first message is answered. Without this either would stay behind (open
 * and empty, or failed) under the id. An open one is removed only while it is still empty; a
 * closed one only when it is `runId`, the run the refused message started and went to. Deleted
 * when the server allows it (at once while the workflow runs; a closed one the server removes
 * about half a minute later), else terminated.
 */
async function discardIfUnused(client: Client, conversationId: string, runId?: string): Promise<void> {
  const found = await lookupWorkflow(client, conversationId).catch(() => undefined);
  if (found?.kind !== 'conversation' || (runId !== undefined && found.runId !== runId)) return;
  const ours = client.workflow.getHandle(conversationId, found.runId);
  if (found.running) {
    const status = await ours.query(conversationStatusQuery).catch(() => undefined);
    if (!status || status.turns > 0 || status.queuedMessages > 0 || status.currentTurn || status.messageCount > 0)
      return;
  } else if (runId === undefined || found.status !== 'FAILED') return;
  try {
    await client.workflowService.deleteWorkflowExecution({
      namespace: client.options.namespace,
      workflowExecution: { workflowId: conversationId, runId: found.runId },
    });
  } catch {
    if (found.running) await ours.terminate('its first message was refused').catch(() => undefined);
  }
}

function startOperation(conversationId: string, turn: TurnInput, start: ConversationStart, again: boolean) {
  return new WithStartWorkflowOperation<typeof conversationWorkflow>(CONVERSATION_WORKFLOW_TYPE, {
    workflowId: conversationId,
    taskQueue: start.taskQueue,
    args: [start.options ?? {}],
    // An open conversation takes the message. A closed workflow under the id is refused at first
    // (it may be a one-shot run's, which a conversation must not take over): once looked up, a
    // closed conversation is started afresh under the same id (`again`).
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: again ? 'ALLOW_DUPLICATE' : 'REJECT_DUPLICATE',
    staticSummary: conversationSummary(turn),
    ...startPriority(start),
  });
}

/** The tenant's search attribute and priority of a conversation a message opens (see `tenantStartOptions`). */
function startPriority(start: ConversationStart) {
  return tenantStartOptions({
    tenant: start.options?.tenant,
    priorityKey: start.options?.priority,
    fairnessWeight: start.fairnessWeight,
  });
}

function conversationSummary(turn: TurnInput): string {
  return `conversation: ${runSummary(turn.message ?? '')}`;
}

/** The same checks the workflow makes, done before any network call so mistakes fail fast. */
function checkLocally(conversationId: string, turn: TurnInput, start: ConversationStart): void {
  const options = start.options;
  const problem =
    workflowIdProblem(conversationId, 'the conversation id') ??
    turnProblem(turn, undefined, false) ??
    validateConversationOptions(options ?? {})[0] ??
    fairnessWeightProblem(start.fairnessWeight);
  if (problem) throw new ClientError('invalid', problem, conversationId);
}
