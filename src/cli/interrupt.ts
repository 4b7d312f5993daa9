/** Presses closer together than this are one press delivered twice (see onInterrupt). */
const DUPLICATE_WINDOW_MS = 100;

/**
 * Calls `handler` on each Ctrl+C (SIGINT) until the returned function is called. One press can
 * arrive twice: tsx relays a terminal's SIGINT to its child unless the child reports it within
 * 30 ms, and a busy child may not; the copy then follows the original by about 30 ms, or at once
 * when both waited in a busy event loop. Presses within 100 ms of each other therefore count
 * once. Not more: a cancelled chat turn is back at the prompt within 200 ms, and a Ctrl+C there
 * (to leave) must count.
 */
export function onInterrupt(handler: () => void): () => void {
  let last = 0;
  const listener = () => {
    const now = Date.now();
    if (now - last < DUPLICATE_WINDOW_MS) return;
    last = now;
    handler();
  };
  process.on('SIGINT', listener);
  return () => process.off('SIGINT', listener);
}

/** Why a command stopped waiting for a run or turn (which itself goes on). */
export type StopReason = 'interrupted' | 'wait_elapsed';

/**
 * Stops a command's waiting on Ctrl+C, or when `waitMs` (`--wait`) has passed: `reason` resolves
 * with which. Listening starts at once, so a Ctrl+C during slow set-up (e.g. bundling the
 * in-process worker) still counts. Call `dispose` when the wait is over.
 */
export function stopWaiting(waitMs: number | undefined): { reason: Promise<StopReason>; dispose(): void } {
  let stop: (why: StopReason) => void = () => undefined;
  const reason = new Promise<StopReason>((resolve) => (stop = resolve));
  const off = onInterrupt(() => stop('interrupted'));
  const timer = waitMs === undefined ? undefined : setTimeout(() => stop('wait_elapsed'), waitMs);
  return {
    reason,
    dispose: () => {
      off();
      clearTimeout(timer);
    },
  };
}
