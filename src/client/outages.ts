/** gRPC status codes that mean "the server is not there right now", not "the request is wrong". */
const UNAVAILABLE = 14;
const DEADLINE_EXCEEDED = 4;
const RESOURCE_EXHAUSTED = 8;

/** Default bound on how long a waiting client rides out a Temporal outage. */
export const DEFAULT_OUTAGE_BUDGET_MS = 10 * 60_000;

/** How a waiting client rides out a Temporal outage (see `withOutageRetries`). */
export interface OutageOptions {
  /** Told when the server becomes unreachable, every minute while it stays so, and when it is back. */
  note?: (line: string) => void;
  /** Give up after the server has been unreachable this long (default 10 minutes). */
  budgetMs?: number;
  /** Pause between attempts (default 1 s; each attempt already includes the SDK's own retries). */
  pauseMs?: number;
  /**
   * The caller has gone (an HTTP client that disconnected): no further attempt is made, so a
   * request nobody waits for any more is not sent once the server is back.
   */
  signal?: AbortSignal;
  /**
   * Also try again, after a short pause, while the server refuses the call for load
   * (RESOURCE_EXHAUSTED: say, a workflow's limit of 10 Updates in flight).
   */
  busy?: boolean;
}

/** Whether `err` (or one of its causes) is the server refusing a call for load (RESOURCE_EXHAUSTED). */
export function isServerBusy(err: unknown): boolean {
  for (
    let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    if (e.code === RESOURCE_EXHAUSTED) return true;
  }
  return false;
}

/** Whether `err` (or one of its causes) says the Temporal server could not be reached. */
export function isServerUnreachable(err: unknown): boolean {
  for (
    let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    if (e.code === UNAVAILABLE || e.code === DEADLINE_EXCEEDED) return true;
  }
  return false;
}

/**
 * Runs `call` again while the Temporal server is unreachable, up to `budgetMs` of outage. The
 * SDK's own gRPC retries give up after about 20 s, so without this a client waiting for a run
 * exits during a server restart while the run itself completes later. Only idempotent calls may
 * be wrapped: reads, waits for results, and requests with an idempotency key (an update id).
 */
export async function withOutageRetries<T>(call: () => Promise<T>, options: OutageOptions = {}): Promise<T> {
  const budget = options.budgetMs ?? DEFAULT_OUTAGE_BUDGET_MS;
  const pause = options.pauseMs ?? 1_000;
  let since: number | undefined;
  let lastNote = 0;
  for (;;) {
    options.signal?.throwIfAborted();
    try {
      const value = await call();
      if (since !== undefined) options.note?.('Temporal is reachable again.');
      return value;
    } catch (err) {
      if (options.busy && isServerBusy(err) && !options.signal?.aborted) {
        const now = Date.now();
        since ??= now;
        if (now - since >= budget) throw err;
        await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200));
        continue;
      }
      if (!isServerUnreachable(err) || options.signal?.aborted) throw err;
      const now = Date.now();
      since ??= now;
      if (now - since >= budget) throw err;
      if (lastNote === 0) {
        options.note?.(
          `Temporal is unreachable (${(err as Error).message}); still waiting, for up to ${Math.round(budget / 60_000)} min.`,
        );
        lastNote = now;
      } else if (now - lastNote >= 60_000) {
        options.note?.(`Temporal still unreachable after ${Math.round((now - since) / 1000)} s; still waiting.`);
        lastNote = now;
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, pause);
        options.signal?.addEventListener('abort', done, { once: true });
      });
    }
  }
}
