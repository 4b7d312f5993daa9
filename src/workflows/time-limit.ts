import { CancellationScope, isCancellation, sleep } from '@temporalio/workflow';

/**
 * A run's `maxExecutionTime` as a durable timer that durable waits can pause: while a `sleep` or
 * `wait_for_event` is under way the timer is cancelled, and it is started again for what was left
 * once the last wait ends (unless the run counts waits: `waitsCountTowardTimeLimit`). Without
 * waits it is the one timer it always was, so runs recorded before waits replay unchanged.
 */
export class TimeLimit {
  private scope: CancellationScope | undefined;
  private startedAt = 0;
  private paused = 0;
  private done = false;

  constructor(
    private remainingMs: number,
    private readonly onExpire: () => void,
  ) {
    this.arm();
  }

  /** A wait begins: the clock stops (nested waits stop it once). */
  pause(): void {
    if (this.done || this.paused++ > 0 || !this.scope) return;
    this.remainingMs = Math.max(1, this.remainingMs - (Date.now() - this.startedAt));
    this.scope.cancel();
    this.scope = undefined;
  }

  /** A wait ended: the clock runs again once no wait is left. */
  resume(): void {
    if (this.done || this.paused === 0 || --this.paused > 0) return;
    this.arm();
  }

  /** What is left of the limit now (a run continuing as new carries it). */
  remaining(): number {
    if (this.paused > 0 || !this.scope) return this.remainingMs;
    return Math.max(1, this.remainingMs - (Date.now() - this.startedAt));
  }

  /** The run ended first: the timer goes, so it leaves nothing behind in history. */
  cancel(): void {
    this.done = true;
    this.scope?.cancel();
  }

  private arm(): void {
    const scope = new CancellationScope();
    this.scope = scope;
    this.startedAt = Date.now();
    scope
      .run(() => sleep(this.remainingMs))
      .then(
        () => {
          if (this.done || this.scope !== scope) return;
          this.done = true;
          this.onExpire();
        },
        () => undefined, // cancelled: paused, or the run ended
      );
  }
}

/**
 * Runs `body` under a durable timer. When the timer wins, the scope is cancelled, which cancels
 * in-flight activities; returns true in that case. The timer lives in history, so it fires on
 * time even if every worker was down in between.
 */
export async function timeLimited(
  body: () => Promise<void>,
  ms: number,
  started: (limit: TimeLimit) => void,
): Promise<boolean> {
  const scope = new CancellationScope();
  let expired = false;
  // Durable waits pause it (see TimeLimit); without them it is one timer, as it always was.
  started(
    new TimeLimit(ms, () => {
      expired = true;
      scope.cancel();
    }),
  );
  try {
    await scope.run(body);
    return false;
  } catch (err) {
    if (expired && isCancellation(err)) return true;
    throw err;
  }
}
