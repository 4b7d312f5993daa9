import type { Client } from '@temporalio/client';
import { answersMessage } from '../core/messages/message-ids';
import type { AgentEvent } from '../core/events/agent-events';
import type { ApprovalDecision } from '../core/tool-calls/approvals';
import { decideApproval, readStatus } from './workflow-controls';
import { currentTurnEvents, isTurnEnd, streamEvents } from './event-stream';
import { lookupWorkflow } from './workflow-lookup';
import { withLiveText, type LiveFeed } from './live-events';

/**
 * One turn of a conversation, as the protocol adapters (the AI SDK's UI message stream, AG-UI,
 * A2A) read it: the one event source they share. The turn's events come from the conversation's
 * durable event log, in order, and the turn ends where the protocols end a response: when it
 * completes or fails, or when it waits for a person to decide tool calls (a pause, which the
 * protocols answer with a new request). Each adapter is an encoder of these steps, nothing more.
 */

/** One step of a followed turn. */
export type TurnStep = { kind: 'event'; event: AgentEvent } | { kind: 'paused' };

/** Options of {@link followTurn}. */
export interface FollowTurnOptions {
  /** The last offset already told; absent: from the current turn's first event. */
  after?: number;
  /** The turn to follow; absent: the first to start after `after`. */
  turn?: number;
  /**
   * The turn that answers the message with this id (`TurnInput.messageId`), whenever it starts:
   * messages sent while other turns run or wait are answered in turns of their own, and each
   * request follows its own.
   */
  messageId?: string;
  /** Approvals the turn already waits on (a response that goes on after a pause). */
  pending?: Iterable<string>;
  signal: AbortSignal;
  /** The live path, opened before the message was sent (see `live-events.ts`); default: opened now. */
  live?: LiveFeed;
}

/** How long the turn may stay quiet before a wait for approval counts as a pause. */
const SETTLE_MS = 50;

/**
 * Follows one turn of a conversation: its events until it ends, or `paused` once it waits for
 * approvals and nothing else is happening (the requests of one step are recorded together, so a
 * short quiet after them means the turn waits).
 */
export async function* followTurn(client: Client, id: string, options: FollowTurnOptions): AsyncGenerator<TurnStep> {
  const stop = new AbortController();
  // The model's text as it writes it, when the model call runs in this process (see live-events.ts).
  const { messageId } = options;
  const events = withLiveText(
    id,
    (live) =>
      streamEvents(client, id, {
        ...live,
        ...(messageId === undefined ? { after: options.after } : { messageId }),
        signal: AbortSignal.any([options.signal, stop.signal]),
      }),
    {
      feed: options.live,
      ...(messageId !== undefined ? { startsWith: (e) => answeredBy(e, messageId) } : {}),
    },
  );
  let turn = options.turn;
  const pending = new Set(options.pending ?? []);
  try {
    for (let next = events.next(); ; next = events.next()) {
      let step = await settled(next);
      if (step === 'quiet') {
        if (turn !== undefined && pending.size > 0) {
          next.catch(() => undefined); // ended by `stop`
          yield { kind: 'paused' };
          return;
        }
        step = await next;
      }
      if (step.done) return;
      const e = step.value;
      if (turn === undefined) {
        if (options.messageId !== undefined ? !answeredBy(e, options.messageId) : e.type !== 'turn_started') continue;
        turn = e.turn;
      }
      if (e.turn !== turn) continue;
      if (e.type === 'approval_requested') pending.add(e.callId);
      if (e.type === 'approval_decided') pending.delete(e.callId);
      yield { kind: 'event', event: e };
      if (isTurnEnd(e, turn)) return;
    }
  } finally {
    stop.abort();
    events.return(undefined).catch(() => undefined);
  }
}

/**
 * Whether `e` starts the answer to the message `id`: its turn's start, or, for a message sent with
 * `busy: "steer"`, where it joined the running turn (the rest of that turn answers it).
 */
function answeredBy(e: AgentEvent, id: string): boolean {
  return (e.type === 'turn_started' || e.type === 'message_steered') && answersMessage(e.messageId, id);
}

/** Where a turn paused for approvals: its events through the last request, and what it waits on. */
export interface PausedTurn {
  turn: number;
  /** The turn's events up to and including its last approval request. */
  events: AgentEvent[];
  /** That request's offset: the response that goes on reads from there. */
  after: number;
  pending: string[];
  /** Those of `pending` that are a running tool's question to a person (answered in words). */
  questions: string[];
}

/** The current turn's last pause for approvals, or undefined when it has none. */
export async function pausedTurn(client: Client, id: string): Promise<PausedTurn | undefined> {
  const events = await currentTurnEvents(client, id);
  let last = events.length - 1;
  while (last >= 0 && events[last].type !== 'approval_requested') last--;
  if (last < 0) return undefined;
  const told = events.slice(0, last + 1);
  const pending = new Map<string, boolean>();
  for (const e of told) {
    if (e.type === 'approval_requested') pending.set(e.callId, e.question !== undefined);
    if (e.type === 'approval_decided') pending.delete(e.callId);
  }
  return {
    turn: told[last].turn,
    events: told,
    after: told[last].offset,
    pending: [...pending.keys()],
    questions: [...pending].filter(([, question]) => question).map(([callId]) => callId),
  };
}

/** Whether the conversation `id` has a turn running (or waiting for a person). */
export async function turnInProgress(client: Client, id: string): Promise<boolean> {
  const found = await lookupWorkflow(client, id);
  if (!found?.running || found.kind !== 'conversation') return false;
  const status = await readStatus(client, id);
  return status.state !== 'idle' && status.state !== 'closed';
}

/**
 * Decides the answered approvals that are still pending, and says which it decided. Answers to
 * calls no longer pending (decided in another window, timed out) change nothing: the stream that
 * follows shows what happened to them.
 */
export async function decideAnswered(
  client: Client,
  id: string,
  decisions: readonly ApprovalDecision[],
): Promise<Set<string>> {
  const status = await readStatus(client, id);
  const pending = new Set(status.pendingApprovals.map((p) => p.callId));
  const decided = new Set<string>();
  for (const decision of decisions) {
    if (!pending.has(decision.callId)) continue;
    await decideApproval(client, id, decision);
    decided.add(decision.callId);
  }
  return decided;
}

/** The next event if it comes within {@link SETTLE_MS}, else `quiet`. */
function settled<T>(next: Promise<T>): Promise<T | 'quiet'> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    next,
    new Promise<'quiet'>((resolve) => (timer = setTimeout(() => resolve('quiet'), SETTLE_MS))),
  ]).finally(() => clearTimeout(timer));
}
