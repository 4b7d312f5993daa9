import type { Usage } from '../core/messages/chat-message';

/** What a model costs, in US dollars per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  /** Input read from the provider's prompt cache; default: `input`. */
  cachedInput?: number;
  /** Input written to the prompt cache (Anthropic); default: `input`. */
  cacheWrite?: number;
}

/**
 * The price of a model among the worker's own prices (AgentsPlugin's `prices`, over the model
 * catalogue's, see catalogue.ts): by its exact name, else by the longest name it extends with a
 * dated or versioned suffix (`claude-sonnet-4-5-20250929` costs what `claude-sonnet-4-5` costs).
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
