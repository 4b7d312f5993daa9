import { patched } from '@temporalio/workflow';
import { bareDurationsAsMs } from '../core';

/**
 * Durations needed no unit before this patch (`"5"` meant 5 ms); now such input is refused. A run
 * started before the change must replay the way it ran, so its bare numbers stay milliseconds.
 * `patched` is only consulted for inputs the change affects, so other runs get no marker.
 */
export function withDurationUnitsRequired<T>(input: T): T {
  const legacy = bareDurationsAsMs(input);
  return legacy && !patched('durations-need-units') ? legacy : input;
}
