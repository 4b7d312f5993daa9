import type { WorkerDescription } from '../contracts/activity-interface';
import type { SearchAttributeSettings } from '../core/run/search-attributes';
import type { ModelCatalogue } from '../models/catalogue';
import type { ModelRoute } from '../models/chat-model';

/**
 * Builds the activity that tells a workflow what it needs of its worker once per run: which agent
 * search attributes the namespace has registered (checked when the worker started; it waits for
 * that check, one round trip to the server), the worker's default model, and the context windows
 * of the models its runs name (its default, its named models, its agents' models), from the model
 * catalogue: a workflow cannot know what `smart` stands for, nor read the catalogue.
 */
export function createDescribeWorker(deps: {
  searchAttributes: () => Promise<SearchAttributeSettings>;
  defaultModel?: string;
  /** The models runs of this worker name, as they name them. */
  models: readonly string[];
  /** Where a name goes (a named model's provider and id). */
  route: (name: string) => ModelRoute;
  catalogue: ModelCatalogue;
  /** The worker's policies, when it has some. */
  policies?: WorkerDescription['policies'];
}) {
  let contextWindows: Record<string, number> | undefined;
  const windows = () => {
    if (contextWindows) return contextWindows;
    contextWindows = {};
    for (const name of deps.models) {
      try {
        contextWindows[name] = deps.catalogue.contextWindowOf(deps.route(name), name);
      } catch {
        // A name no adapter takes: the run says so when it calls the model.
      }
    }
    return contextWindows;
  };
  // Read as the worker starts (the catalogue takes about 15 ms to load), not in a new chat's first task.
  setTimeout(windows, 0).unref();
  return async function describeWorker(): Promise<WorkerDescription> {
    return {
      searchAttributes: await deps.searchAttributes(),
      contextWindows: windows(),
      ...(deps.defaultModel ? { defaultModel: deps.defaultModel } : {}),
      ...(deps.policies ? { policies: deps.policies } : {}),
    };
  };
}
