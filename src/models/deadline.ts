/**
 * Runs one streamed model request under a controller of its own, aborted when the caller's
 * signal aborts (a cancelled activity) or when `deadlineMs` passes (the whole stream, which a
 * request timeout does not bound: it ends when the response starts). Our own deadline surfaces
 * as `timedOut()`, the SDK's timeout error, so it is classified as a timeout like the SDK's own.
 */
export async function withDeadline<T>(
  signal: AbortSignal,
  deadlineMs: number,
  work: (controller: AbortController) => Promise<T>,
  timedOut: () => Error,
): Promise<T> {
  const controller = new AbortController();
  const abort = () => controller.abort();
  signal.addEventListener('abort', abort);
  const deadline = setTimeout(abort, deadlineMs);
  try {
    return await work(controller);
  } catch (err) {
    if (controller.signal.aborted && !signal.aborted) throw timedOut();
    throw err;
  } finally {
    clearTimeout(deadline);
    signal.removeEventListener('abort', abort);
  }
}
