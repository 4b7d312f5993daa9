import type { Usage } from './chat-message';

/** No tokens yet. */
export function noUsage(): Usage {
  return { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
}

/** The optional counts, which appear only once a provider reports them (older runs have none). */
const DETAILS = ['cachedPromptTokens', 'cacheWriteTokens', 'reasoningTokens'] as const;

/** Token counts (and costs) of `a` and `b` together, per model too. */
export function addUsage(a: Usage, b: Usage): Usage {
  const sum: Usage = addCounts(a, b);
  if (a.byModel || b.byModel) {
    const byModel: NonNullable<Usage['byModel']> = { ...a.byModel };
    for (const [model, usage] of Object.entries(b.byModel ?? {}))
      byModel[model] = byModel[model] ? addCounts(byModel[model], usage) : usage;
    sum.byModel = byModel;
  }
  return sum;
}

function addCounts(a: Omit<Usage, 'byModel'>, b: Omit<Usage, 'byModel'>): Omit<Usage, 'byModel'> {
  const sum: Usage = {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
  for (const key of DETAILS) {
    if (a[key] !== undefined || b[key] !== undefined) sum[key] = (a[key] ?? 0) + (b[key] ?? 0);
  }
  // Dollars in millionths, so a long run's sum does not drift with floating point.
  if (a.costUsd !== undefined || b.costUsd !== undefined)
    sum.costUsd = Math.round(((a.costUsd ?? 0) + (b.costUsd ?? 0)) * 1_000_000) / 1_000_000;
  return sum;
}

/** A model reply's usage, counted under the model that answered (when the reply names it). */
export function usageOfReply(usage: Usage, model: string | undefined): Usage {
  if (!model) return usage;
  const { byModel: _byModel, ...counts } = usage;
  return { ...counts, byModel: { [model]: counts } };
}
