/**
 * Calls `handler` on each Ctrl+C (SIGINT) until the returned function is called. One press can
 * arrive twice: tsx relays a terminal's SIGINT to its child unless the child reports it within
 * 30 ms, and a busy child may not. Presses within 300 ms of each other therefore count once.
 */
export function onInterrupt(handler: () => void): () => void {
  let last = 0;
  const listener = () => {
    const now = Date.now();
    if (now - last < 300) return;
    last = now;
    handler();
  };
  process.on('SIGINT', listener);
  return () => process.off('SIGINT', listener);
}
