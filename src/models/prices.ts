import type { Usage } from '../core';

/** What a model costs, in US dollars per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  /** Input read from the provider's prompt cache; default: `input`. */
  cachedInput?: number;
  /** Input written to the prompt cache (Anthropic); default: `input`. */
  cacheWrite?: number;
}

/** The date the default prices were the providers' list prices. */
export const DEFAULT_PRICES_DATE = '2025-10-01';

/**
 * List prices of common models as of {@link DEFAULT_PRICES_DATE}, by the provider's model name.
 * Prices change: give the plugin `prices` for your models and your contract (they override
 * these). A model missing here gets no `costUsd`, never a guess.
 */
export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = {
  'gpt-4o-mini': { input: 0.15, cachedInput: 0.075, output: 0.6 },
  'gpt-4o': { input: 2.5, cachedInput: 1.25, output: 10 },
  'gpt-4.1': { input: 2, cachedInput: 0.5, output: 8 },
  'gpt-4.1-mini': { input: 0.4, cachedInput: 0.1, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, cachedInput: 0.025, output: 0.4 },
  'gpt-5': { input: 1.25, cachedInput: 0.125, output: 10 },
  'gpt-5-mini': { input: 0.25, cachedInput: 0.025, output: 2 },
  'gpt-5-nano': { input: 0.05, cachedInput: 0.005, output: 0.4 },
  o3: { input: 2, cachedInput: 0.5, output: 8 },
  'o4-mini': { input: 1.1, cachedInput: 0.275, output: 4.4 },
  'claude-opus-4-1': { input: 15, cachedInput: 1.5, cacheWrite: 18.75, output: 75 },
  'claude-sonnet-4-5': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 },
  'claude-sonnet-4': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 },
  'claude-haiku-4-5': { input: 1, cachedInput: 0.1, cacheWrite: 1.25, output: 5 },
  'claude-3-5-haiku': { input: 0.8, cachedInput: 0.08, cacheWrite: 1, output: 4 },
};

/**
 * The price of a model: by its exact name, else by the longest name it extends with a dated or
 * versioned suffix (`claude-sonnet-4-5-20250929` costs what `claude-sonnet-4-5` costs).
 */
export function priceOf(model: string, prices: Readonly<Record<string, ModelPrice>>): ModelPrice | undefined {
  if (prices[model]) return prices[model];
  const base = Object.keys(prices)
    .filter((name) => model.startsWith(`${name}-`))
    .sort((a, b) => b.length - a.length)[0];
  return base ? prices[base] : undefined;
}

/**
 * What one call's tokens cost: cached input at the cached price, cache writes at theirs, the rest
 * of the input and all output at the list price. Rounded to a millionth of a dollar.
 */
export function costOf(usage: Usage, price: ModelPrice): number {
  const cached = usage.cachedPromptTokens ?? 0;
  const written = usage.cacheWriteTokens ?? 0;
  const fresh = Math.max(0, usage.promptTokens - cached - written);
  const dollars =
    (fresh * price.input +
      cached * (price.cachedInput ?? price.input) +
      written * (price.cacheWrite ?? price.input) +
      usage.completionTokens * price.output) /
    1_000_000;
  return Math.round(dollars * 1_000_000) / 1_000_000;
}
