import type { Usage } from './types';

/** No tokens yet. */
export function noUsage(): Usage {
  return { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
}

/** The optional counts, which appear only once a provider reports them (older runs have none). */
const DETAILS = ['cachedPromptTokens', 'cacheWriteTokens', 'reasoningTokens'] as const;

/** Token counts of `a` and `b` together. */
export function addUsage(a: Usage, b: Usage): Usage {
  const sum: Usage = {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
  for (const key of DETAILS) {
    if (a[key] !== undefined || b[key] !== undefined) sum[key] = (a[key] ?? 0) + (b[key] ?? 0);
  }
  return sum;
}
