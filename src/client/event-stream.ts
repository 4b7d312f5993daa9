import { WorkflowNotFoundError } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { Client } from '@temporalio/client';
import type { AgentEvent, EventPage, EventsRequest } from '../core/events/agent-events';
import type { LivePiece } from '../core/events/live-text-merge';
import { eventsQuery } from '../contracts/definitions';
import { signalledText } from './signalled-text';
import { ClientError } from './client-error';
import { isServerUnreachable } from './outages';
import { explainFailure, isPlaintextRefused, isUndecodable } from './workflow-lookup';

const EventType = temporal.api.enums.v1.EventType;

/** Options of {@link streamEvents}. */
export interface StreamEventsOptions {
  /**
   * The last offset already seen: events after it follow, each once, in order. Absent: from the
   * start of the current turn (the whole run, for a one-shot run).
   */
  after?: number;
  /**
   * Instead of `after`: from the start of the turn that answers the message with this id (see
   * `TurnInput.messageId`), or, while it has not started, from the events to come.
   */
  messageId?: string;
  /** Stop after the first event this returns true for (e.g. {@link isTurnEnd}). */
  until?: (event: AgentEvent) => boolean;
  /** Ends the stream (the iterator returns). */
  signal?: AbortSignal;
  /**
   * Called when events cannot be read for a while (no worker answers, the server is down); the
   * stream keeps trying and picks up where it was. Default: keep quiet.
   */
  onWaiting?: (reason: string) => void;
  /**
   * Read the log now, without waiting for the history to show a change: the live path (see
   * `contracts/live-text.ts`) knows the workflow recorded something before the long poll does.
   */
  nudge?: Nudge;
  /**
   * Gets each batch of a model call's text as its Signal reaches the history, before the workflow
   * has applied it (see `signalled-text.ts`): the live path's pieces, for a reader to merge (see
   * `LiveTextMerge`). Default: the text comes with the events only.
   */
  onText?: (piece: LivePiece) => void;
  /** Called once the first read shows where the stream starts: the offset of the first event it yields (or will). */
  onStart?: (offset: number) => void;
  /**
   * Called once the first read found the offset asked for readable (not past the end, still kept):
   * from then on the stream can only yield events or wait for them.
   */
  onChecked?: () => void;
}

/**
 * A wake-up for {@link streamEvents}: `notify` makes a waiting stream read again at once; one that
 * comes while nobody waits (a read is under way) is kept for the next wait. A wait cut short by a
 * change of the history stays the same promise until a notify settles it, so none is lost.
 */
export class Nudge {
  private pending = false;
  private promise?: Promise<'nudged'>;
  private resolve?: (value: 'nudged') => void;

  notify(): void {
    if (!this.resolve) {
      this.pending = true;
      return;
    }
    this.resolve('nudged');
    this.promise = this.resolve = undefined;
  }

  /** Resolves at the next `notify` (at once if one came since the last wait). */
  wait(): Promise<'nudged'> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve('nudged');
    }
    return (this.promise ??= new Promise((resolve) => (this.resolve = resolve)));
  }
}

/**
 * The events of a run or conversation, live: an async iterator that yields events as the
 * workflow records them and ends when the workflow closes (or when `until` says so). It follows a conversation across continue-as-new; offsets go on.
 *
 * How it waits, without adding to the history: it long-polls the run's history (which returns
 * as soon as the workflow has done something, e.g. applied a batch of text) and then reads the
 * new events with the `events` query. Nothing is written, so any number of subscribers cost the
 * workflow's history nothing; each wake-up costs one query.
 */
export async function* streamEvents(
  client: Client,
  workflowId: string,
  options: StreamEventsOptions = {},
): AsyncGenerator<AgentEvent> {
  let after = options.after;
  const { signal } = options;
  const watch = new HistoryWatch(client, workflowId, options.onText);
  await watch.start();
  const isEnd = options.until ?? (() => false);
  // The first read finds the message's turn, if it has started; the next ones go on from there.
  let first: EventsRequest | undefined = options.messageId === undefined ? undefined : { messageId: options.messageId };
  let waiting: Promise<'changed' | 'closed' | 'aborted'> | undefined;
  let started = false;
  let checked = false;
  for (let closed = false; ;) {
    const page = await readPage(client, workflowId, first ?? (after === undefined ? {} : { after }), options);
    if (!page) return; // aborted
    if (first) {
      first = undefined;
      if (page.events.length === 0) after = page.next - 1;
    }
    if (!started) {
      started = true;
      options.onStart?.(page.events[0]?.offset ?? (after === undefined ? page.next : after + 1));
    }
    // An offset this stream never gave (a Last-Event-ID past the end): there is nothing to resume from.
    if (after !== undefined && after >= page.next) {
      throw new ClientError(
        'invalid',
        `event offset ${after} is past the last event of "${workflowId}" (${page.next - 1}); resume from an offset you were sent, or -1 for the beginning`,
        workflowId,
      );
    }
    if (after !== undefined && page.firstKept > after + 1) {
      throw new ClientError(
        'gone',
        `events ${after + 1}..${page.firstKept - 1} of "${workflowId}" are no longer kept (a conversation keeps its recent turns); read the transcript instead`,
        workflowId,
      );
    }
    if (!checked) {
      checked = true;
      options.onChecked?.();
    }
    for (const event of page.events) {
      yield event;
      after = event.offset;
      if (isEnd(event)) return;
    }
    // A subscriber that found nothing yet goes on from here.
    after ??= page.next - 1;
    if (page.more) continue;
    if (closed) return;
    // A wait a nudge cut short goes on: the next round takes it over, so no change of the history is missed.
    waiting ??= watch.next(signal);
    const change = await (options.nudge ? Promise.race([waiting, options.nudge.wait()]) : waiting);
    if (change === 'nudged') continue;
    waiting = undefined;
    if (change === 'aborted') return;
    // Closed: one more read for whatever the workflow recorded before it closed, then the end.
    closed = change === 'closed';
  }
}

/**
 * The offset to pass as `after` to see only what happens from now on: the last offset so far,
 * or -1 when the workflow is not running (a message then starts it, and its events start at 0).
 */
export async function eventsPosition(client: Client, workflowId: string): Promise<number> {
  const handle = client.workflow.getHandle(workflowId);
  try {
    const { status } = await handle.describe();
    if (status.name !== 'RUNNING') return -1;
    const page = await handle.query(eventsQuery, { after: Number.MAX_SAFE_INTEGER - 1, limit: 1 });
    return page.next - 1;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError || (err as { code?: number }).code === 5) return -1;
    throw err;
  }
}

/**
 * The events of the current (or, between turns, the last) turn recorded so far, without waiting
 * for more: what a client needs to pick up a turn it showed part of.
 */
export async function currentTurnEvents(client: Client, workflowId: string): Promise<AgentEvent[]> {
  return eventsSoFar(client, workflowId, {});
}

/** Every event still kept (a conversation keeps its recent turns), without waiting for more. */
export async function keptEvents(client: Client, workflowId: string): Promise<AgentEvent[]> {
  return eventsSoFar(client, workflowId, { after: -1 });
}

async function eventsSoFar(client: Client, workflowId: string, first: EventsRequest): Promise<AgentEvent[]> {
  const handle = client.workflow.getHandle(workflowId);
  const events: AgentEvent[] = [];
  try {
    for (let page = await handle.query(eventsQuery, first); ;) {
      events.push(...page.events);
      if (!page.more || page.events.length === 0) return events;
      page = await handle.query(eventsQuery, { after: page.events[page.events.length - 1].offset });
    }
  } catch (err) {
    // A missing id, a closed workflow, an outage: said as such, not as a fault of the caller's.
    throw await explainFailure(client, workflowId, err, 'agent');
  }
}

/** Whether an event ends a turn (`turn_completed` or `turn_failed`), optionally a given one. */
export function isTurnEnd(event: AgentEvent, turn?: number): boolean {
  return (
    (event.type === 'turn_completed' || event.type === 'turn_failed') && (turn === undefined || event.turn === turn)
  );
}

/** Reads one page with the `events` query, waiting out missing workers and server outages. */
async function readPage(
  client: Client,
  workflowId: string,
  request: EventsRequest,
  options: StreamEventsOptions,
): Promise<EventPage | undefined> {
  for (let delay = 250; ; delay = Math.min(delay * 2, 5000)) {
    if (options.signal?.aborted) return undefined;
    try {
      return await client.workflow.getHandle(workflowId).query(eventsQuery, request);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError || (err as { code?: number }).code === 5)
        throw new ClientError('not_found', `no run or conversation "${workflowId}" exists`, workflowId);
      const message = err instanceof Error ? err.message : String(err);
      if (/no registered handler|did not register a handler|unknown query/i.test(message)) {
        throw new ClientError(
          'unsupported',
          `"${workflowId}" has no event stream (it is not an agent run or conversation, or it was started by an older version)`,
          workflowId,
        );
      }
      // Encrypted, and this client has no keys: waiting would never read it.
      if (isUndecodable(err) || isPlaintextRefused(err)) throw await explainFailure(client, workflowId, err, 'agent');
      options.onWaiting?.(
        isServerUnreachable(err) ? `Temporal is unreachable: ${message}` : `waiting for a worker to answer: ${message}`,
      );
      await sleep(delay, options.signal);
    }
  }
}

/**
 * Follows the history of the workflow's latest run with long polls, to learn when there may be
 * new events: after each completed workflow task, and when the run closes. A run that continued
 * as new is followed into its successor.
 */
class HistoryWatch {
  private runId?: string;
  private token?: Uint8Array;

  constructor(
    private readonly client: Client,
    private readonly workflowId: string,
    private readonly onText?: (piece: LivePiece) => void,
  ) {}

  /** Positions the watch at the end of the latest run's history (reading it once, in pages). */
  async start(): Promise<void> {
    let described;
    try {
      described = await this.client.workflow.getHandle(this.workflowId).describe();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError || (err as { code?: number }).code === 5)
        throw new ClientError('not_found', `no run or conversation "${this.workflowId}" exists`, this.workflowId);
      throw err;
    }
    await this.follow(described.runId, Number(described.historyLength));
  }

  /** Waits until something happened: `changed` (read again), `closed` (the last read), or `aborted`. */
  async next(signal?: AbortSignal): Promise<'changed' | 'closed' | 'aborted'> {
    for (;;) {
      if (signal?.aborted) return 'aborted';
      if (!this.token) return 'closed';
      let response;
      try {
        response = await this.poll(signal);
      } catch {
        if (signal?.aborted) return 'aborted';
        // The server restarts or is unreachable: the caller's query will say so; try again shortly.
        await sleep(1000, signal);
        continue;
      }
      this.token = response.nextPageToken?.length ? response.nextPageToken : undefined;
      let changed = false;
      for (const e of response.history?.events ?? []) {
        if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) changed = true;
        if (this.onText && e.workflowExecutionSignaledEventAttributes) {
          const piece = await signalledText(this.client, this.workflowId, e.workflowExecutionSignaledEventAttributes);
          if (piece) this.onText(piece);
        }
        const next = e.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
        if (next) {
          await this.follow(next, 0);
          return 'changed';
        }
        if (CLOSE_EVENTS.has(e.eventType ?? 0)) return 'closed';
      }
      if (changed) return 'changed';
    }
  }

  /**
   * Starts watching `runId`, skipping its first `known` events. A run that continued as new
   * meanwhile (a long run's steps can outpace its reader) is followed into its successor: its
   * history ends without a page token, which would otherwise read as the workflow's end.
   */
  private async follow(runId: string, known: number): Promise<void> {
    for (let run: string | undefined = runId, skip = known; run !== undefined; skip = 0) {
      this.runId = run;
      this.token = undefined;
      let seen = 0;
      let successor: string | undefined;
      do {
        const response = await this.poll();
        const events = response.history?.events ?? [];
        seen += events.length;
        this.token = response.nextPageToken?.length ? response.nextPageToken : undefined;
        successor =
          events.find((e) => e.workflowExecutionContinuedAsNewEventAttributes)
            ?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
        if (successor || events.some((e) => CLOSE_EVENTS.has(e.eventType ?? 0))) this.token = undefined;
      } while (this.token && seen < skip);
      run = successor;
    }
  }

  private poll(signal?: AbortSignal) {
    const call = () =>
      this.client.workflowService.getWorkflowExecutionHistory({
        namespace: this.client.options.namespace,
        execution: { workflowId: this.workflowId, runId: this.runId },
        nextPageToken: this.token,
        waitNewEvent: true,
        maximumPageSize: 1000,
      });
    if (!signal) return call();
    // A controller per poll: the gRPC layer keeps a listener on the signal it is given.
    const controller = new AbortController();
    const abort = () => controller.abort();
    signal.addEventListener('abort', abort, { once: true });
    return this.client
      .withAbortSignal(controller.signal, call)
      .finally(() => signal.removeEventListener('abort', abort));
  }
}

const CLOSE_EVENTS = new Set<number>([
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT,
]);

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
