import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { calcPrice } from '@pydantic/genai-prices';
import { contextWindowOf, FALLBACK_CONTEXT_WINDOW } from '../core/context/context-windows';
import type { Usage } from '../core/messages/chat-message';
import type { ModelRoute } from './chat-model';
import { costOf, priceOf, type ModelPrice } from './prices';

/**
 * What the worker knows of models: prices and context windows from `@pydantic/genai-prices`,
 * under the plugin's own `prices` and `contextWindows`. Updated by updating that dependency.
 *
 * Why that catalogue: it ships its data in the package (no fetch at run time), is updated often
 * (the newest Claude and GPT models), matches dated ids and gateways (`claude-sonnet-4-5-20250929`,
 * OpenRouter by its URL), prices tiers (Claude's prices over 200k tokens of input) and cache reads
 * and writes, and loads with `require` and no dependencies. The models.dev catalogue on npm
 * (`tokenlens`) was a year behind, ESM-only, without tiers, and priced cached input twice.
 * Neither says how many tokens a model may write, which nothing here needs.
 */
export interface ModelCatalogue {
  /** The cost of one call's usage in US dollars (rounded to a millionth), or undefined without a price. */
  costOf(route: CatalogueRoute, usage: Usage): number | undefined;
  /** Whether calls of the model can be priced (a cost budget needs it). */
  hasPrice(route: CatalogueRoute): boolean;
  /** The model's context window in tokens: the override, the catalogue's, else the built-in table's. */
  contextWindowOf(route: CatalogueRoute, name?: string): number;
  /** Whether the model is unknown: neither priced by an override nor found in the catalogue. */
  unknown(route: CatalogueRoute): boolean;
}

/** The part of a route the catalogue looks a model up by. */
export type CatalogueRoute = Pick<ModelRoute, 'model' | 'provider' | 'baseURL'>;

/** The catalogue's package and version, for messages. */
export const CATALOGUE_NAME = `@pydantic/genai-prices ${catalogueVersion()}`;

/**
 * A catalogue over `@pydantic/genai-prices`, with `prices` (USD per million tokens, by the
 * provider's model name) and `contextWindows` (tokens, by the model as runs name it, or its id)
 * taking precedence. `at` is the time prices are looked up for (the catalogue dates price changes).
 */
export function createModelCatalogue(
  overrides: { prices?: Readonly<Record<string, ModelPrice>>; contextWindows?: Readonly<Record<string, number>> } = {},
  at: () => Date = () => new Date(),
): ModelCatalogue {
  const prices = overrides.prices ?? {};
  const windows = overrides.contextWindows ?? {};
  const found = (route: CatalogueRoute, usage: Partial<Record<CatalogueUsage, number>>) => {
    const query = queryOf(route);
    try {
      return (
        calcPrice(usage, route.model, { ...query, timestamp: at() }) ??
        // An endpoint the catalogue does not know (a company proxy): the model's own provider, by its name.
        (query.providerApiUrl ? calcPrice(usage, route.model, { timestamp: at() }) : null)
      );
    } catch {
      return null;
    }
  };
  return {
    costOf(route, usage) {
      const own = priceOf(route.model, prices);
      if (own) return costOf(usage, own);
      const priced = found(route, {
        input_tokens: usage.promptTokens,
        output_tokens: usage.completionTokens,
        cache_read_tokens: usage.cachedPromptTokens,
        cache_write_tokens: usage.cacheWriteTokens,
      });
      return priced ? Math.round(priced.total_price * 1_000_000) / 1_000_000 : undefined;
    },
    hasPrice(route) {
      return priceOf(route.model, prices) !== undefined || found(route, {}) !== null;
    },
    contextWindowOf(route, name) {
      const own = (name !== undefined ? windows[name] : undefined) ?? windows[route.model];
      if (own) return own;
      return found(route, {})?.model.context_window ?? contextWindowOf(route.model);
    },
    unknown(route) {
      return priceOf(route.model, prices) === undefined && found(route, {}) === null;
    },
  };
}

type CatalogueUsage = 'input_tokens' | 'output_tokens' | 'cache_read_tokens' | 'cache_write_tokens';

/** Where the catalogue should look: the provider a route names, or its endpoint's URL. */
function queryOf(route: CatalogueRoute): { providerId?: string; providerApiUrl?: string } {
  if (route.provider === 'anthropic') return { providerId: 'anthropic' };
  if (route.provider.startsWith('ai-sdk:')) {
    // AI SDK providers call themselves `google.generative-ai`, `anthropic.messages`, `amazon-bedrock`.
    const name = route.provider.slice('ai-sdk:'.length).split('.')[0];
    return { providerId: AI_SDK_PROVIDERS[name] ?? name };
  }
  // OpenAI's API, or an OpenAI-compatible server the catalogue may know by its URL (OpenRouter, Groq, ...).
  return /^https:\/\/api\.openai\.com(\/|$)/.test(route.baseURL)
    ? { providerId: 'openai' }
    : { providerApiUrl: route.baseURL };
}

/** AI SDK provider names the catalogue knows by another id. */
const AI_SDK_PROVIDERS: Record<string, string> = {
  'amazon-bedrock': 'aws',
  'google-vertex': 'google',
  azure: 'azure',
  xai: 'x-ai',
};

/** Whether a model's endpoint is on this machine (a scripted model, Ollama): nothing to warn about there. */
export function isLocalEndpoint(baseURL: string): boolean {
  try {
    const host = new URL(baseURL).hostname.replace(/^\[|\]$/g, '');
    return host === 'localhost' || host === '::1' || /^127\./.test(host) || host === '0.0.0.0';
  } catch {
    return false; // an AI SDK provider's name: a hosted provider
  }
}

/** The sentence a worker says, once, of a model the catalogue does not know. */
export function unknownModelWarning(route: ModelRoute): string {
  return `the model ${route.name} (${route.model} at ${route.baseURL}) is not in the model catalogue (${CATALOGUE_NAME}): its calls have no cost in usage and cannot count against a dollar budget, and its context window is taken as ${FALLBACK_CONTEXT_WINDOW.toLocaleString('en-US')} tokens unless the built-in table knows it. Give the worker its price and window (AgentsPlugin's "prices" and "contextWindows"), or update @pydantic/genai-prices`;
}

function catalogueVersion(): string {
  try {
    // The package's exports do not include its package.json: find it next to its entry point.
    let dir = dirname(require.resolve('@pydantic/genai-prices'));
    for (let i = 0; i < 4; i++, dir = dirname(dir)) {
      try {
        const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
          name?: string;
          version?: string;
        };
        if (manifest.name === '@pydantic/genai-prices') return manifest.version ?? '';
      } catch {
        // not here
      }
    }
  } catch {
    // not installed as expected
  }
  return '';
}

/** A worker's pricing of model calls: the catalogue, and a warning once per model it cannot price. */
export interface ModelPricing {
  readonly catalogue: ModelCatalogue;
  /** One call's cost (see {@link ModelCatalogue.costOf}); the first call of a hosted model without a price warns. */
  cost(route: ModelRoute, usage: Usage): number | undefined;
}

/**
 * Pricing over a catalogue. A model without a price is said once per worker through `warn`, when
 * it is a hosted one: a model on this machine (a scripted model in tests, Ollama) costs nothing
 * to say.
 */
export function createModelPricing(catalogue: ModelCatalogue, warn: (message: string) => void): ModelPricing {
  const warned = new Set<string>();
  return {
    catalogue,
    cost(route, usage) {
      const cost = catalogue.costOf(route, usage);
      if (cost === undefined && !isLocalEndpoint(route.baseURL) && !warned.has(route.model)) {
        warned.add(route.model);
        warn(unknownModelWarning(route));
      }
      return cost;
    },
  };
}
