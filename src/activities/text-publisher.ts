import { log } from '@temporalio/activity';
import type { TextBatch } from '../core/events/agent-events';

/** How a model call streams its text to its workflow. */
export interface StreamingOptions {
  /** Default true. False: model calls never stream, whatever the run asks. */
  enabled?: boolean;
  /**
   * The shortest time between two batches (signals) of one model call, in ms; default 100. Later
   * batches of a long answer are spaced further apart (see `batchInterval`).
   */
  batchIntervalMs?: number;
  /**
   * The same while no live path reaches the call's readers (no reader in this process, and no
   * live channel between processes up: `AGENT_LIVE_URL` unset or Redis down), in ms; default 50,
   * or `batchIntervalMs` when that is set.
   * Readers elsewhere then read the text from the batches' Signals (see `signalled-text.ts`), so
   * each word waits about half of it; while Redis is up they read it live, and batches, which are
   * billable actions and workflow tasks, need not come so often.
   */
  durableBatchIntervalMs?: number;
}

/** The default shortest time between two batches. */
export const DEFAULT_BATCH_INTERVAL_MS = 100;

/** The default shortest time between two batches while no live path reaches the readers. */
export const DEFAULT_DURABLE_BATCH_INTERVAL_MS = 50;

/**
 * The shortest time between two batches, as `streaming` sets it: `durableBatchIntervalMs` while
 * no live path reaches the readers (`reachesReaders` false), else `batchIntervalMs`. A worker
 * that spaced its batches itself (fewer Signals) keeps that spacing unless told otherwise.
 */
export function baseBatchInterval(streaming: StreamingOptions | undefined, reachesReaders: boolean): number {
  const base = streaming?.batchIntervalMs ?? DEFAULT_BATCH_INTERVAL_MS;
  if (reachesReaders) return base;
  return streaming?.durableBatchIntervalMs ?? streaming?.batchIntervalMs ?? DEFAULT_DURABLE_BATCH_INTERVAL_MS;
}

/**
 * How long to wait before the next batch, `elapsedMs` into an answer: the base interval, or a
 * twentieth of the time spent so far if that is longer. A model call that writes for T seconds
 * therefore sends about 20 · (1 + ln(T / 2 s)) signals with the default 100 ms: 20 for a 2 s
 * answer, ~52 for 10 s, ~88 for a minute. Each signal is a billable action and a few history
 * events, so the count must not grow with the answer's length.
 */
export function batchInterval(elapsedMs: number, baseMs = DEFAULT_BATCH_INTERVAL_MS): number {
  return Math.max(baseMs, elapsedMs / 20);
}

/**
 * Collects the text of one attempt of one model call and sends it to the workflow in batches,
 * one signal at a time. The last text is never sent: the call's reply carries it, and the
 * workflow appends what the batches did not (so a short answer costs no signal at all). A batch
 * that fails to send is sent again, unchanged, with the next one; the workflow applies each
 * `seq` once.
 */
export class TextPublisher {
  private pending = '';
  private unsent?: TextBatch;
  private seq = 0;
  private timer?: NodeJS.Timeout;
  private sending?: Promise<void>;
  private startedAt?: number;
  private closed = false;
  /** Characters of this attempt's text pushed so far (the live path's positions). */
  private at = 0;

  /**
   * `live`, when given, gets every piece at once with its position in the attempt's text: the
   * live path to readers in this process (see `contracts/live-text.ts`), beside the batches.
   */
  constructor(
    private readonly send: (batch: TextBatch) => Promise<void>,
    private readonly call: number,
    private readonly attempt: number,
    /** The base interval, asked before each batch (it can change while the call writes). */
    private readonly baseIntervalMs: number | (() => number) = DEFAULT_BATCH_INTERVAL_MS,
    private readonly live?: (text: string, at: number) => void,
  ) {}

  /** Text the model just wrote. */
  push(text: string): void {
    if (this.closed || !text) return;
    this.live?.(text, this.at);
    this.at += text.length;
    this.startedAt ??= Date.now();
    this.pending += text;
    this.schedule();
  }

  /** The call returned: nothing more is sent; waits for a batch in flight so it lands first. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.sending;
  }

  /**
   * The attempt is failing: if it showed text, tell the workflow why (best effort), so the retry
   * can say it. An attempt that showed nothing costs no signal.
   */
  async fail(reason: string): Promise<void> {
    await this.close();
    if (this.startedAt === undefined) return;
    try {
      await this.send({ call: this.call, attempt: this.attempt, seq: ++this.seq, failed: reason.slice(0, 500) });
    } catch {
      // The workflow still announces the retry, without the reason.
    }
  }

  private schedule(): void {
    if (this.timer || this.sending || this.closed) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.sending = this.flush().finally(() => {
          this.sending = undefined;
          if (this.pending || this.unsent) this.schedule();
        });
      },
      batchInterval(
        Date.now() - this.startedAt!,
        typeof this.baseIntervalMs === 'function' ? this.baseIntervalMs() : this.baseIntervalMs,
      ),
    );
  }

  private async flush(): Promise<void> {
    if (this.closed) return;
    const batch = this.unsent ?? {
      call: this.call,
      attempt: this.attempt,
      seq: ++this.seq,
      text: this.pending,
      at: this.at - this.pending.length,
    };
    if (!this.unsent) this.pending = '';
    this.unsent = batch;
    try {
      await this.send(batch);
      this.unsent = undefined;
    } catch (err) {
      log.warn('could not send streamed text to the workflow; will try again with the next batch', {
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }
}
