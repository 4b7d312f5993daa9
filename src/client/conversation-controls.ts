import type { Client, WorkflowHandle } from '@temporalio/client';
import type { ConversationResult, ConversationStatus } from '../core/conversation/conversation-status';
import type { AgentEvent } from '../core/events/agent-events';
import type { conversationWorkflow } from '../workflows/bundle';
import { cancelTurnUpdate, conversationStatusQuery, endConversationUpdate } from '../contracts/definitions';
import { ClientError } from './client-error';
import { isTurnEnd, keptEvents, streamEvents } from './event-stream';
import { withOutageRetries } from './outages';
import { forgetOpen } from './recent-conversations';
import { explainFailure, lookupWorkflow } from './workflow-lookup';

/**
 * What people do to an open conversation besides sending it messages (see conversations.ts): read
 * its status, cancel or stop its turn, end it.
 */

/** What the conversation is doing now. */
export async function conversationStatus(client: Client, conversationId: string): Promise<ConversationStatus> {
  try {
    return await handle(client, conversationId).query(conversationStatusQuery);
  } catch (err) {
    throw await explainFailure(client, conversationId, err, 'conversation');
  }
}

/**
 * Cancels the running turn (it ends with status `cancelled`); the conversation stays open. With
 * `turn`, only that turn (refused once it is not running), as one Update with the others that
 * stop it (their id is `stop-<turn>`).
 */
export async function cancelTurn(client: Client, conversationId: string, turn?: number): Promise<{ turn: number }> {
  try {
    return await withOutageRetries(
      () =>
        handle(client, conversationId).executeUpdate(cancelTurnUpdate, {
          args: [turn === undefined ? {} : { turn }],
          ...(turn !== undefined ? { updateId: `stop-${turn}` } : {}),
        }),
      { budgetMs: 30_000, busy: true },
    );
  } catch (err) {
    throw await explainFailure(client, conversationId, err, 'conversation');
  }
}

/** How long {@link stopTurn} waits for the stopped turn to end before it answers anyway. */
const STOP_WAIT_MS = 30_000;

/** Stops under way in this process, by client and conversation: a second Stop of a turn shares the first's. */
const stopping = new WeakMap<Client, Map<string, Promise<{ turn: number; status: string } | undefined>>>();

/**
 * Stops the running turn, as a chat's Stop button means it: the model call and the tools are
 * cancelled (tools get their `AbortSignal`), the partial answer stays in the transcript marked
 * `stopped`, and the next message is answered at once. Resolves once the turn has ended (its
 * `turn_completed`, status `cancelled`), or undefined when no turn runs. Stops of one turn
 * coalesce, here (one request to Temporal for all of this process's callers) and in Temporal
 * (every process's stop of turn N is the one Update `stop-N`): a page's repeated clicks, or many
 * callers at once, cost the conversation's history one Update and each get the same answer.
 */
export function stopTurn(
  client: Client,
  conversationId: string,
): Promise<{ turn: number; status: string } | undefined> {
  let mine = stopping.get(client);
  if (!mine) stopping.set(client, (mine = new Map()));
  const under = mine.get(conversationId);
  if (under) return under;
  const stop = stopOnce(client, conversationId).finally(() => mine.delete(conversationId));
  mine.set(conversationId, stop);
  return stop;
}

async function stopOnce(client: Client, conversationId: string): Promise<{ turn: number; status: string } | undefined> {
  const running = (await conversationStatus(client, conversationId)).currentTurn?.turn;
  if (running === undefined) return undefined;
  let turn: number;
  try {
    ({ turn } = await cancelTurn(client, conversationId, running));
  } catch (err) {
    // Ended between the read and the stop: nothing runs to stop (the next turn is not ours to stop).
    if (err instanceof ClientError && err.kind === 'rejected' && /no turn is running|is not running/.test(err.message))
      return undefined;
    throw err;
  }
  const signal = AbortSignal.timeout(STOP_WAIT_MS);
  const later = (e: AgentEvent) => e.turn > turn;
  for await (const e of streamEvents(client, conversationId, {
    signal,
    until: (e) => isTurnEnd(e, turn) || later(e),
  })) {
    if (isTurnEnd(e, turn)) return { turn, status: e.type === 'turn_completed' ? e.result.status : 'failed' };
    // A later turn already runs (a stop that came late to an ended turn): how it ended is kept.
    if (later(e)) {
      const end = (await keptEvents(client, conversationId)).find((k) => isTurnEnd(k, turn));
      if (end) return { turn, status: end.type === 'turn_completed' ? end.result.status : 'failed' };
      return { turn, status: 'cancelled' };
    }
  }
  return { turn, status: 'cancelling' };
}

/**
 * Closes the conversation after its queued messages are answered. Ending one that has already
 * closed is not an error: its result comes back with `alreadyClosed: true`.
 */
export async function endConversation(
  client: Client,
  conversationId: string,
): Promise<ConversationResult & { alreadyClosed?: true }> {
  forgetOpen(client, conversationId);
  try {
    return await handle(client, conversationId).executeUpdate(endConversationUpdate);
  } catch (err) {
    const found = await lookupWorkflow(client, conversationId).catch(() => undefined);
    if (found?.kind === 'conversation' && found.status === 'COMPLETED') {
      return { ...((await handle(client, conversationId).result()) as ConversationResult), alreadyClosed: true };
    }
    throw await explainFailure(client, conversationId, err, 'conversation');
  }
}

function handle(client: Client, conversationId: string): WorkflowHandle<typeof conversationWorkflow> {
  return client.workflow.getHandle<typeof conversationWorkflow>(conversationId);
}
