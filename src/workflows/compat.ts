import { patched } from '@temporalio/workflow';
import { bareDurationsAsMs, type RunState } from '../core';

/**
 * Durations needed no unit before this patch (`"5"` meant 5 ms); now such input is refused. A run
 * started before the change must replay the way it ran, so its bare numbers stay milliseconds.
 * `patched` is only consulted for inputs the change affects, so other runs get no marker.
 */
export function withDurationUnitsRequired<T>(input: T): T {
  const legacy = bareDurationsAsMs(input);
  return legacy && !patched('durations-need-units') ? legacy : input;
}

/**
 * Whether the run's result may leave out tool outputs its history holds already (activity
 * results). Runs that finished before this patch returned them twice and must replay that way.
 * Only consulted when there is something to leave out, so runs without tools get no marker.
 */
export function omitRecordedResults(state: RunState): boolean {
  return state.toolExecutions.some((e) => e.resultInHistory && !e.immediate) && patched('tool-results-in-history');
}

/**
 * Whether the provider's prompt count corrects estimates by addition (see `calibration`): it
 * changes when compactions happen, so runs recorded before it replay with the ratio they ran
 * with. Only consulted with memory by tokens, so other runs get no marker.
 */
export function additiveCalibration(state: RunState): boolean {
  return state.limits.maxPromptTokens !== undefined && patched('additive-prompt-calibration');
}

/**
 * Whether a compaction whose summary could not be written drops the messages and goes on (see
 * `applyDroppedMessages`). Runs recorded before failed there, and replay that way. Only consulted
 * when a summary failed, so other runs get no marker.
 */
export function summaryFailureDropsMessages(): boolean {
  return patched('summary-failure-drops-messages');
}

/**
 * Whether a model call's readable reasoning is told to subscribers (a `reasoning` event). Events
 * are not history, but their offsets are what subscribers resume from: a run recorded before
 * keeps the offsets it gave them. Only consulted for replies with reasoning.
 */
export function reasoningEvents(): boolean {
  return patched('reasoning-events');
}

/**
 * Whether an A2A task's record waits for the task's turn to end by itself (`awaitA2aTaskEnd`), so
 * that a task whose A2A server died mid-task still ends and notifies its webhooks. Records started
 * before kept only what the server saved, and replay that way. Consulted once a record holds a
 * working task with its turn, so records of tasks that ended at once get no marker.
 */
export function a2aTaskFollowsTurn(): boolean {
  return patched('a2a-task-follows-turn');
}
