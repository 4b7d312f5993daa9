import { LiveTextMerge, type LivePiece } from '../core/events/live-text-merge';
import type { AgentEvent } from '../core/events/agent-events';
import { liveText, type LiveItem } from '../contracts/live-text';
import { Nudge, streamEvents, type StreamEventsOptions } from './event-stream';
import type { Client } from '@temporalio/client';

/** The most live items a feed keeps before a reader takes them. */
const MAX_KEPT_ITEMS = 10_000;

/**
 * What the live path brings for one workflow (see `contracts/live-text.ts`), from the moment it is
 * opened: open it before sending a message, so the events its turn records at once are not
 * missed, then hand it to the reader ({@link withLiveText}), which closes it.
 */
export class LiveFeed {
  private readonly kept: LiveItem[] = [];
  private reader?: (item: LiveItem) => void;
  private readonly unsubscribe: () => void;

  /** `showsText: false`: its reader shows nobody the text (progress), so it does not keep batches frequent (see `reachesReaders`). */
  constructor(
    readonly workflowId: string,
    options: { showsText?: boolean } = {},
  ) {
    this.unsubscribe = liveText.subscribe(
      workflowId,
      (item) => {
        if (this.reader) this.reader(item);
        else if (this.kept.length < MAX_KEPT_ITEMS) this.kept.push(item);
      },
      { watcher: options.showsText === false },
    );
  }

  /** From now on `reader` gets every item, first those kept so far. */
  read(reader: (item: LiveItem) => void): void {
    this.reader = reader;
    for (const item of this.kept.splice(0)) reader(item);
  }

  close(): void {
    this.unsubscribe();
  }
}

/** Options of {@link withLiveText}. */
export interface LiveTextOptions {
  /** A feed opened earlier (before the message was sent); default: one opened now. */
  feed?: LiveFeed;
  /** False when the reader shows no text (progress): see {@link LiveFeed}. Default true. */
  showsText?: boolean;
  /** The event the reader's stream starts with, when a live event can say so before the log does (a turn's `turn_started`). */
  startsWith?: (event: AgentEvent) => boolean;
  /**
   * The merge to show events through: one resumed from a reader's position
   * (`LiveTextMerge.resume`), or one whose `positionOf` the reader asks for each event; default: a new one.
   */
  merge?: LiveTextMerge;
}

/**
 * A workflow's durable events with the live path merged in (see `contracts/live-text.ts`): when
 * its worker runs in this process, each event as the workflow records it and each piece of text
 * as the model writes it; else as the durable log has them. `open` starts the durable stream; the
 * nudge it is given asks it to read the log at once when live items wait for it, and it says
 * where it starts with `onStart`.
 */
export async function* withLiveText(
  workflowId: string,
  open: (live: {
    nudge: Nudge;
    onStart: (offset: number) => void;
    onText?: (piece: LivePiece) => void;
  }) => AsyncGenerator<AgentEvent>,
  options: LiveTextOptions = {},
): AsyncGenerator<AgentEvent> {
  const nudge = new Nudge();
  const merge = options.merge ?? new LiveTextMerge();
  const queue: AgentEvent[] = [];
  let started = false;
  let wake: (() => void) | undefined;
  const take = (shown: AgentEvent[]) => {
    queue.push(...shown);
    if (shown.length > 0) wake?.();
  };
  const feed = options.feed ?? new LiveFeed(workflowId, { showsText: options.showsText });
  feed.read((item) => {
    if (item.kind === 'event' && !started && options.startsWith?.(item.event)) {
      started = true;
      take(merge.startAt(item.event.offset));
    }
    take(item.kind === 'text' ? merge.live(item) : merge.liveEvent(item.event));
    if (merge.waiting) nudge.notify();
  });
  const durable = open({
    nudge,
    // The text batches the history shows as their Signals arrive: the same pieces, from Temporal.
    // (Not for readers that show no text, e.g. MCP progress: decoding each batch is theirs to spare.)
    onText:
      options.showsText === false
        ? undefined
        : (piece) => {
            take(merge.live(piece));
            if (merge.waiting) nudge.notify();
          },
    onStart: (offset) => {
      started = true;
      take(merge.startAt(offset));
    },
  });
  // The read under way; it may still be pending when the consumer stops (it read live items
  // meanwhile): its end is nobody's then, and a failure of it (the request's signal aborted a
  // describe, say) must not go unhandled.
  let next = durable.next();
  try {
    for (;;) {
      if (queue.length > 0) {
        yield queue.shift()!;
        continue;
      }
      // Set before waiting, in the same tick as the check above: a live item from now on wakes this.
      const live = new Promise<'live'>((resolve) => (wake = () => resolve('live')));
      const got = await Promise.race([next, live]);
      wake = undefined;
      if (got === 'live') continue;
      if (got.done) return;
      queue.push(...merge.durable(got.value));
      next = durable.next();
    }
  } finally {
    next.catch(() => undefined);
    feed.close();
    void durable.return(undefined).catch(() => undefined);
  }
}

/**
 * {@link streamEvents} with the live path merged in (see {@link withLiveText}): each piece of text
 * as the model writes it, when the worker runs in this process or `AGENT_LIVE_URL` connects the
 * processes. For readers that show what they get (the CLI, MCP progress); a stream that is resumed
 * (the HTTP API's Server-Sent Events) gives each event's position as its id: see `LiveTextMerge`.
 */
export function streamLiveEvents(
  client: Client,
  workflowId: string,
  options: Omit<StreamEventsOptions, 'nudge' | 'onStart' | 'onText'> & Pick<LiveTextOptions, 'showsText'> = {},
): AsyncGenerator<AgentEvent> {
  const { showsText, ...streaming } = options;
  return withLiveText(workflowId, (live) => streamEvents(client, workflowId, { ...streaming, ...live }), {
    showsText,
  });
}
