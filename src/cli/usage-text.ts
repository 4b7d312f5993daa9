import type { Usage } from '../core/messages/chat-message';

/**
 * Tokens, and dollars when the workers priced every model call (`usage.costUsd`): how every
 * command's text output states what something cost. `detail` adds the prompt and completion split.
 */
export function usageText(usage: Usage, options: { detail?: boolean } = {}): string {
  const split = options.detail ? ` (${usage.promptTokens} prompt, ${usage.completionTokens} completion)` : '';
  return `${usage.totalTokens} tokens${split}${usage.costUsd !== undefined ? `, ${dollars(usage.costUsd)}` : ''}`;
}

/** Dollars with the precision small amounts need: $0.0042, $1.25. */
export function dollars(amount: number): string {
  return `$${amount >= 1 ? amount.toFixed(2) : amount.toFixed(4)}`;
}
