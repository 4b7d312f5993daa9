import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { workflowIdProblem } from '../core/run/run-input';
import type { BranchInfo, ForkPoint } from '../core/conversation/conversation-state';
import type { ChatMessage } from '../core/messages/chat-message';
import type { ConversationTurnResult } from '../core/state/run-results';
import type { conversationWorkflow } from '../workflows/bundle';
import {
  branchesQuery,
  CONVERSATION_WORKFLOW_TYPE,
  forkSourceQuery,
  switchBranchUpdate,
  transcriptQuery,
} from '../contracts/definitions';
import { tenantStartOptions } from './tenant-scope';
import { ClientError } from './client-error';
import { seenOpen, startMessage, type ConversationStart, type MessageRequest, type SendOptions } from './conversations';
import { explainFailure, lookupWorkflow } from './workflow-lookup';
import { adoptStartingState } from './workspaces';

/**
 * Client side of a conversation's branches (see `core/conversation/branches.ts`): fork it at an
 * earlier user message (in place, or into a new conversation), list its branches, make one
 * current again. Reading a branch is `readTranscript(client, id, { branch })`.
 */

/** Where and how {@link forkConversation} forks. */
export type ForkOptions = ForkPoint & {
  /**
   * The message that takes the forked message's place: its text, or the whole message (images,
   * tools, `busy`). Absent: the forked message again (regenerate its answer).
   */
  message?: string | Omit<MessageRequest, 'fork'>;
  /**
   * Fork into a new conversation with this id instead: it starts with the transcript before the
   * message (of the current branch, or of `branch`), and the source stays as it is.
   */
  into?: string;
  /** With `into`: the branch to fork from (default: the current one). */
  branch?: string;
};

/** What a fork did. */
export interface ForkResult {
  /** The conversation the new branch is in: the same one, or `into`. */
  conversationId: string;
  /** The new branch (`main` for a new conversation). */
  branch: string;
  /** The answer to the message, when one was sent (a fork into a new conversation may have none). */
  result?: ConversationTurnResult;
}

/**
 * Forks a conversation at an earlier user message: the message (a new one, or the same again)
 * takes its place, and its turn sees the transcript before it. In place, the branch it replaces
 * stays readable (`readTranscript(..., { branch })`) and can be made current again
 * ({@link switchBranch}); with `into`, a new conversation starts from there.
 */
export async function forkConversation(
  client: Client,
  conversationId: string,
  fork: ForkOptions,
  start: ConversationStart,
  wait: SendOptions = {},
): Promise<ForkResult> {
  if (fork.into !== undefined) return forkInto(client, conversationId, fork, start, wait);
  if (fork.branch !== undefined)
    throw new ClientError(
      'invalid',
      '"branch" is the branch a fork into a new conversation ("into") starts from; a fork in place forks the current branch (make another one current first)',
      conversationId,
    );
  const point: ForkPoint = 'atMessage' in fork ? { atMessage: fork.atMessage } : { atMessageId: fork.atMessageId };
  const message = fork.message ?? (await forkedMessage(client, conversationId, point));
  const request = typeof message === 'string' ? { message } : message;
  const base = request.messageId ?? ('atMessageId' in point ? point.atMessageId : undefined);
  const sent = await startMessage(
    client,
    conversationId,
    { ...request, fork: point, messageId: forkMessageId(base) },
    { ...start, options: undefined },
    wait,
  );
  const result = await sent.result();
  return { conversationId, branch: result.branch ?? 'main', result };
}

/**
 * The id a fork's message is sent with: `<id>~<suffix>`. Each fork is a new message to the
 * conversation (its own Update, its own turn), and readers that know the message by its first id
 * (a page's `useChat`) find the newest turn that answers it (see `answersMessage`).
 */
export function forkMessageId(base: string | undefined): string {
  const suffix = randomBytes(4).toString('hex');
  return base === undefined ? `fork-${suffix}` : `${base.replace(/~[^~]*$/, '')}~${suffix}`;
}

/** The conversation's branches, the current one first. */
export async function listBranches(client: Client, conversationId: string): Promise<BranchInfo[]> {
  try {
    return await client.workflow.getHandle(conversationId).query(branchesQuery);
  } catch (err) {
    throw await explainFailure(client, conversationId, err, 'conversation');
  }
}

/** Makes a branch current again, between turns; the one that was current stays readable. Returns the branches. */
export async function switchBranch(client: Client, conversationId: string, branch: string): Promise<BranchInfo[]> {
  try {
    return await client.workflow.getHandle(conversationId).executeUpdate(switchBranchUpdate, { args: [{ branch }] });
  } catch (err) {
    throw await explainFailure(client, conversationId, err, 'conversation');
  }
}

/** The user message a regenerate sends again: the one at the fork point. */
async function forkedMessage(client: Client, conversationId: string, point: ForkPoint): Promise<MessageRequest> {
  if (!('atMessage' in point))
    throw new ClientError(
      'invalid',
      'give the message to send ("message"), or fork by transcript index ("atMessage") to send the same message again',
      conversationId,
    );
  let page;
  try {
    page = await client.workflow
      .getHandle(conversationId)
      .query(transcriptQuery, { offset: point.atMessage, limit: 1 });
  } catch (err) {
    throw await explainFailure(client, conversationId, err, 'conversation');
  }
  const m: ChatMessage | undefined = page.offset === point.atMessage ? page.messages[0] : undefined;
  if (m?.role !== 'user')
    throw new ClientError(
      'invalid',
      m === undefined
        ? `"${conversationId}" has no message ${point.atMessage} its current run holds word for word`
        : `message ${point.atMessage} of "${conversationId}" is the ${m.role}'s: fork at a user message`,
      conversationId,
    );
  return { message: m.content, ...(m.images?.length ? { images: m.images } : {}) };
}

async function forkInto(
  client: Client,
  conversationId: string,
  fork: ForkOptions,
  start: ConversationStart,
  wait: SendOptions,
): Promise<ForkResult> {
  const into = fork.into!;
  const problem = workflowIdProblem(into, 'the new conversation id');
  if (problem) throw new ClientError('invalid', problem, into);
  if (!('atMessage' in fork))
    throw new ClientError('invalid', 'a fork into a new conversation names its message by "atMessage"', into);
  if (await lookupWorkflow(client, into))
    throw new ClientError('already_running', `"${into}" exists already: fork into a new id`, into);
  let input;
  try {
    input = await client.workflow
      .getHandle(conversationId)
      .query(forkSourceQuery, { atMessage: fork.atMessage, ...(fork.branch ? { branch: fork.branch } : {}) });
  } catch (err) {
    throw await explainFailure(client, conversationId, err, 'conversation');
  }
  // Its workspace starts as its source's was there, in a copy of its own (see adoptStartingState).
  const carried = input.carry?.workspace;
  if (carried)
    input = {
      ...input,
      carry: { ...input.carry!, workspace: await adoptStartingState(client, carried, into, start.blobStore) },
    };
  try {
    await client.workflow.start<typeof conversationWorkflow>(CONVERSATION_WORKFLOW_TYPE, {
      workflowId: into,
      taskQueue: start.taskQueue,
      args: [input],
      staticSummary: `conversation: forked from ${conversationId} at message ${fork.atMessage}`,
      // The new conversation is its source's tenant's (a fork's options are its source's).
      ...tenantStartOptions({ tenant: (input as { tenant?: string }).tenant }),
    });
  } catch (err) {
    // Started by another request since the lookup above.
    if (err instanceof WorkflowExecutionAlreadyStartedError)
      throw new ClientError('already_running', `"${into}" exists already: fork into a new id`, into);
    throw err;
  }
  // Open now, whatever a lookup finds of so young a run: a refused first message must not remove the fork.
  seenOpen(client, into);
  if (fork.message === undefined) return { conversationId: into, branch: 'main' };
  const request = typeof fork.message === 'string' ? { message: fork.message } : fork.message;
  const sent = await startMessage(client, into, request, { ...start, options: undefined }, wait);
  return { conversationId: into, branch: 'main', result: await sent.result() };
}
