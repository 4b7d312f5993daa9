/**
 * What an activity carries from one attempt to the next: Temporal keeps the details of an
 * attempt's last heartbeat for the next attempt, however the attempt ended (it failed, or its
 * worker was lost and the heartbeat timeout fired). The model call counts the time it spent
 * waiting for the model; a tool call, how often the tool itself failed, so that a lost worker
 * does not use up attempts meant for the tool's own failures.
 */
export interface AttemptLedger {
  /** Milliseconds spent waiting for the model in earlier attempts. */
  modelMs?: number;
  /** Times the tool itself failed in earlier attempts. */
  toolFailures?: number;
  /** The attempt in which the tool last failed: an attempt after any other ended with its worker lost. */
  lastToolFailure?: number;
  /** What the tool saved with `checkpoint` (see `ToolContext`). */
  toolProgress?: unknown;
}

/** Reads heartbeat details defensively: anything but a ledger (older workers sent none) is an empty one. */
export function ledgerOf(details: unknown): AttemptLedger {
  if (typeof details !== 'object' || details === null) return {};
  const { modelMs, toolFailures, lastToolFailure } = details as Record<string, unknown>;
  const ledger: AttemptLedger = {};
  if (typeof modelMs === 'number' && Number.isFinite(modelMs) && modelMs >= 0) ledger.modelMs = modelMs;
  if (typeof toolFailures === 'number' && Number.isInteger(toolFailures) && toolFailures >= 0)
    ledger.toolFailures = toolFailures;
  if (typeof lastToolFailure === 'number' && Number.isInteger(lastToolFailure) && lastToolFailure >= 1)
    ledger.lastToolFailure = lastToolFailure;
  const { toolProgress } = details as Record<string, unknown>;
  if (toolProgress !== undefined) ledger.toolProgress = toolProgress;
  return ledger;
}

/**
 * The model-call budget (`modelCallTimeout`, default 5 minutes) counted in time spent waiting
 * for the model, across attempts. Not a Temporal schedule-to-close timeout: that counts wall-clock
 * time, so an outage of the Temporal server used it up, and healthy runs failed with
 * `ModelCall.Timeout` the moment the server came back.
 */
export class ModelTimeBudget {
  private since?: number;
  private spentMs: number;

  constructor(
    readonly budgetMs: number,
    spentBefore: number,
    private readonly now: () => number = Date.now,
  ) {
    this.spentMs = spentBefore;
  }

  /** The model is being waited for from now on. */
  start(): void {
    this.since ??= this.now();
  }

  /** The wait is over. */
  stop(): void {
    if (this.since === undefined) return;
    this.spentMs += this.now() - this.since;
    this.since = undefined;
  }

  /** Time spent waiting for the model, this attempt and earlier ones. */
  spent(): number {
    return this.spentMs + (this.since === undefined ? 0 : this.now() - this.since);
  }

  /** What is left of the budget (0 when it is used up). */
  remaining(): number {
    return Math.max(0, this.budgetMs - this.spent());
  }

  exhausted(): boolean {
    return this.remaining() <= 0;
  }
}
