/**
 * The bench's floor: a plain Temporal workflow of the same shape as an agent run, doing nothing.
 * Each "model call" is an activity that only waits the scripted model's delay, or (given the
 * run's message) only makes the model's HTTP request; each tool step is a local activity that
 * returns at once. What a step costs here is what the engine and the SDK (and the request) cost
 * on this machine at this moment, so the table can say how much of a step is ours.
 */
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type * as activities from './activities';

const { waitLikeAModel, askTheModel } = proxyActivities<typeof activities>({ startToCloseTimeout: '1 minute' });
const { returnAtOnce } = proxyLocalActivities<typeof activities>({ startToCloseTimeout: '1 minute' });

/** `steps` model calls of `delayMs` each (over HTTP when `message` is given), with a local activity between each two. */
export async function floorRun(steps: number, delayMs: number, message?: string): Promise<void> {
  for (let i = 0; i < steps; i++) {
    await (message === undefined ? waitLikeAModel(delayMs) : askTheModel(message, i));
    if (i < steps - 1) await returnAtOnce();
  }
}
