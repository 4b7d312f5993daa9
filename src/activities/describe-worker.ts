import type { WorkerDescription } from '../common/activity-interface';
import { contextWindowOf, type SearchAttributeSettings } from '../core';
import type { NamedModels } from '../models/model-config';

/**
 * Builds the activity that tells a workflow what it needs of its worker once per run: which agent
 * search attributes the namespace has registered (checked when the worker started; it waits for
 * that check, one round trip to the server), the worker's default model, and the context windows
 * of its named models (a workflow cannot know what `smart` stands for).
 */
export function createDescribeWorker(deps: {
  searchAttributes: () => Promise<SearchAttributeSettings>;
  defaultModel?: string;
  models?: NamedModels;
}) {
  const contextWindows: Record<string, number> = {};
  for (const [name, model] of Object.entries(deps.models ?? {}))
    contextWindows[name] = contextWindowOf(typeof model === 'string' ? model : model.modelId);
  return async function describeWorker(): Promise<WorkerDescription> {
    return {
      searchAttributes: await deps.searchAttributes(),
      contextWindows,
      ...(deps.defaultModel ? { defaultModel: deps.defaultModel } : {}),
    };
  };
}
