import type { AgentEvent } from '../core/events/agent-events';

/**
 * The live path of a model call's text and of the events its workflow records: where the model-call activity and a waiting HTTP response
 * meet when they run in one process (`durable-agents serve` with its worker, or an application
 * that runs its worker beside its HTTP API).
 *
 * The durable path stays as it is: the activity signals its text to the workflow in batches, the
 * event log records it, and every reader reads it there, so nothing a client saw is lost on a
 * crash. It is also slow for a person at the screen: a batch waits up to 100 ms, then a workflow
 * task, a history long poll and a query carry it to the reader. The live path hands each piece
 * to the readers in this process as the model writes it, and the workflow hands each event it
 * records to them through a sink (events follow from the history alone, so one shown before its
 * workflow task is recorded is the same event a replay records again); readers merge both (see the core's
 * `LiveTextMerge`), showing a piece once, in order, and only after the durable log has shown
 * where its model call starts. A piece that goes missing here is still shown from the log.
 *
 * Across processes (API replicas, a fleet of workers) a {@link LiveBridge} carries the same items:
 * Redis with `AGENT_LIVE_URL` (storage/redis-live-bridge.ts).
 *
 * Hand-written because it is a few lines of bookkeeping over a process-wide registry: it sits on
 * `globalThis` so that two copies of this package in one process (an app's and a plugin's) meet.
 */

/** One piece of text a model call's attempt wrote, at position `at` of that attempt's text. */
export interface LiveTextPiece {
  workflowId: string;
  call: number;
  attempt: number;
  /** How many characters of the attempt's text came before this piece. */
  at: number;
  text: string;
}

/** What the live path carries: a piece of text, or an event the workflow recorded (from its sink, in order). */
export type LiveItem = ({ kind: 'text' } & LiveTextPiece) | { kind: 'event'; workflowId: string; event: AgentEvent };

type Listener = (item: LiveItem) => void;

/**
 * The same items with each run of text pieces that follow one another (the same call and attempt,
 * each starting where the last ended) joined into one piece: what a model writes in one burst
 * (a fast model's whole answer can come in one read) crosses a process boundary as one message and
 * reaches a reader as one delta, not one per token. Order and text are unchanged.
 */
export function joinLivePieces(items: readonly LiveItem[]): LiveItem[] {
  const out: LiveItem[] = [];
  for (const item of items) {
    const last = out.at(-1);
    if (
      item.kind === 'text' &&
      last?.kind === 'text' &&
      last.workflowId === item.workflowId &&
      last.call === item.call &&
      last.attempt === item.attempt &&
      last.at + last.text.length === item.at
    )
      out[out.length - 1] = { ...last, text: last.text + item.text };
    else out.push(item);
  }
  return out;
}

/**
 * A channel between processes (the API replicas and the workers of a fleet): what is published in
 * one reaches the readers in the others. `watch` starts receiving a workflow's items (handed to
 * {@link LiveTextHub.deliver}), `unwatch` stops. Best effort, like the rest of the live path: an
 * item it drops is shown from the durable log.
 */
export interface LiveBridge {
  /** Sends an item to the other processes (never back to this one). */
  publish(item: LiveItem): void;
  watch(workflowId: string): void;
  unwatch(workflowId: string): void;
  /** Where it goes, for messages (a Redis URL without its password). */
  readonly location: string;
  /** Whether it carries items now (connected); absent: taken as always. */
  readonly up?: boolean;
  close(): Promise<void>;
}

/** The process-wide registry of readers, by workflow id. */
class LiveTextHub {
  private readonly listeners = new Map<string, Set<Listener>>();
  /** Of the listeners, how many show what they get to someone (not {@link subscribe}'s `watcher`s), by workflow id. */
  private readonly readers = new Map<string, number>();
  private bridgeOf?: LiveBridge;

  /** The channel to other processes, when one is set (`AGENT_LIVE_URL`). */
  get bridge(): LiveBridge | undefined {
    return this.bridgeOf;
  }

  /** Connects this process's readers and publishers to other processes' (see {@link LiveBridge}). */
  useBridge(bridge: LiveBridge | undefined): void {
    const before = this.bridgeOf;
    this.bridgeOf = bridge;
    for (const workflowId of this.listeners.keys()) {
      before?.unwatch(workflowId);
      bridge?.watch(workflowId);
    }
  }

  /**
   * Whether anyone may read `workflowId` live (a publisher with no reader does nothing): one in
   * this process, or, with a bridge, in any.
   */
  listening(workflowId: string): boolean {
    return this.bridgeOf !== undefined || this.listeners.has(workflowId);
  }

  /**
   * Whether what is published for `workflowId` reaches its readers live: one reads it in this
   * process, or a bridge is up that carries it to the others. When not, readers elsewhere have
   * only the durable path (the model call then sends its text batches sooner; see `TextPublisher`).
   */
  reachesReaders(workflowId: string): boolean {
    return this.readers.has(workflowId) || (this.bridgeOf !== undefined && this.bridgeOf.up !== false);
  }

  /** Hands an item to the readers of its workflow, here and through the bridge. */
  publish(item: LiveItem): void {
    this.deliver(item);
    this.bridgeOf?.publish(item);
  }

  /** Hands an item to this process's readers of its workflow; a reader that throws does not stop the others. */
  deliver(item: LiveItem): void {
    for (const listener of this.listeners.get(item.workflowId) ?? []) {
      try {
        listener(item);
      } catch {
        // A reader's failure is its own: the durable path still carries the text.
      }
    }
  }

  /**
   * Reads the items of `workflowId` until the returned function is called. A `watcher` (a worker
   * listening for its turn's end) shows nobody the text: it does not count as a reader in
   * {@link reachesReaders}.
   */
  subscribe(workflowId: string, listener: Listener, options: { watcher?: boolean } = {}): () => void {
    let set = this.listeners.get(workflowId);
    if (!set) {
      this.listeners.set(workflowId, (set = new Set()));
      this.bridgeOf?.watch(workflowId);
    }
    set.add(listener);
    const reader = !options.watcher;
    if (reader) this.readers.set(workflowId, (this.readers.get(workflowId) ?? 0) + 1);
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      if (reader) {
        const left = this.readers.get(workflowId)! - 1;
        if (left > 0) this.readers.set(workflowId, left);
        else this.readers.delete(workflowId);
      }
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(workflowId) === set) {
        this.listeners.delete(workflowId);
        this.bridgeOf?.unwatch(workflowId);
      }
    };
  }
}

// Shared by every copy of the library in the process (an app's and a plugin's), as long as they
// agree on the hub's shape: the number goes up whenever it changes (2: readers, watchers and
// `reachesReaders`), so an older copy's hub is never taken for one it lacks the methods of.
const KEY = Symbol.for('durable-agents.live-text@2');

/** The process's live text registry. */
export const liveText: LiveTextHub =
  ((globalThis as Record<symbol, unknown>)[KEY] as LiveTextHub | undefined) ??
  (((globalThis as Record<symbol, unknown>)[KEY] = new LiveTextHub()) as LiveTextHub);
