/**
 * Many callers' requests to one workflow, sent as few Updates: while one Update is on its way,
 * the requests that arrive wait and go together in the next. One worker then has at most one
 * Update in flight to the workflow, however many of its activities ask: Temporal allows a
 * workflow only ten Updates in flight (`history.maxInFlightUpdates`) and 2,000 a run, and each
 * Update costs the workflow a task. Hand-written: a dozen lines no library does for Temporal.
 */
export class UpdateBatcher<Request, Answer> {
  private queue: { request: Request; resolve: (a: Answer) => void; reject: (e: unknown) => void }[] = [];
  private sending = false;

  constructor(
    /** Sends one batch; answers in the order asked. */
    private readonly send: (batch: Request[]) => Promise<Answer[]>,
    private readonly maxBatch = 200,
  ) {}

  /** Asks `request` in the next batch; resolves with its answer. */
  ask(request: Request): Promise<Answer> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    if (this.sending || this.queue.length === 0) return;
    this.sending = true;
    const batch = this.queue.splice(0, this.maxBatch);
    this.send(batch.map((b) => b.request))
      .then(
        (answers) => batch.forEach((b, i) => b.resolve(answers[i])),
        (err: unknown) => batch.forEach((b) => b.reject(err)),
      )
      .finally(() => {
        this.sending = false;
        this.pump();
      });
  }
}
