import { liveText } from '../contracts/live-text';

/**
 * An abort signal for an activity of a turn: it fires when Temporal cancels the activity, or as
 * soon as the activity's workflow ends the turn while the activity still runs, when that workflow
 * runs in this process (the live path of `contracts/live-text.ts` carries its events here).
 *
 * Why: a stopped turn (`cancelTurn`, a Stop button, `busy: "interrupt"`) ends at once, but
 * Temporal tells a running activity of its cancellation only in the answer to a heartbeat, which
 * comes seconds later on a busy worker: the model would go on writing (and billing) meanwhile. A
 * turn never ends while one of its activities is still wanted, so its end is enough to stop.
 */
export function turnAbortSignal(
  workflowId: string,
  cancellation: AbortSignal,
): { signal: AbortSignal; turnEnded(): boolean; done(): void } {
  const ended = new AbortController();
  const unsubscribe = liveText.subscribe(
    workflowId,
    (item) => {
      if (item.kind === 'event' && (item.event.type === 'turn_completed' || item.event.type === 'turn_failed'))
        ended.abort(new Error('the turn ended while this activity ran (it was stopped)'));
    },
    { watcher: true },
  );
  return {
    signal: AbortSignal.any([cancellation, ended.signal]),
    turnEnded: () => ended.signal.aborted,
    done: unsubscribe,
  };
}
