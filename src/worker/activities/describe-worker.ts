import type { WorkerDescription } from '../../common/activity-interface';
import type { SearchAttributeSettings } from '../../core';

/**
 * Builds the activity that tells a workflow which agent search attributes the namespace has
 * registered (checked when the worker started) and the worker's default model. Waits for that
 * check, which takes one round trip to the server.
 */
export function createDescribeWorker(deps: { searchAttributes: () => Promise<SearchAttributeSettings> }) {
  return async function describeWorker(): Promise<WorkerDescription> {
    return { searchAttributes: await deps.searchAttributes() };
  };
}
