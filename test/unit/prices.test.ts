import type { Usage } from '../../src/core/messages/chat-message';
import { addUsage, usageOfReply } from '../../src/core/messages/usage';
import { costOf, priceOf } from '../../src/models/prices';

it("finds a worker's own price by the exact name, or by the name a dated one extends; none for others", () => {
  const prices = {
    'gpt-4.1': { input: 2, output: 8 },
    'gpt-4.1-mini': { input: 0.4, output: 1.6 },
    'claude-sonnet-4-5': { input: 3, output: 15 },
  };
  expect(priceOf('gpt-4.1', prices)).toEqual(prices['gpt-4.1']);
  expect(priceOf('claude-sonnet-4-5-20250929', prices)).toEqual(prices['claude-sonnet-4-5']);
  // The longest base wins: gpt-4.1-mini-2025-04-14 is a gpt-4.1-mini, not a gpt-4.1.
  expect(priceOf('gpt-4.1-mini-2025-04-14', prices)).toEqual(prices['gpt-4.1-mini']);
  expect(priceOf('qwen2.5:14b', prices)).toBeUndefined();
});

it('prices cached input, cache writes and output at their own rates', () => {
  const price = { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 };
  const usage = {
    promptTokens: 1_000_000,
    completionTokens: 100_000,
    totalTokens: 1_100_000,
    cachedPromptTokens: 600_000,
    cacheWriteTokens: 100_000,
  };
  // 300k fresh × 3 + 600k cached × 0.3 + 100k written × 3.75 + 100k out × 15, per million.
  expect(costOf(usage, price)).toBeCloseTo(0.9 + 0.18 + 0.375 + 1.5, 6);
});

it('counts usage per model, and adds costs without floating-point drift', () => {
  const reply = (cost: number) => ({ promptTokens: 10, completionTokens: 1, totalTokens: 11, costUsd: cost });
  let total: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  for (let i = 0; i < 10; i++) total = addUsage(total, usageOfReply(reply(0.1), i % 2 ? 'fast' : 'smart'));
  expect(total.costUsd).toBe(1);
  expect(total).toMatchObject({
    promptTokens: 100,
    byModel: {
      smart: { promptTokens: 50, completionTokens: 5, totalTokens: 55, costUsd: 0.5 },
      fast: { promptTokens: 50, completionTokens: 5, totalTokens: 55, costUsd: 0.5 },
    },
  });
  expect(usageOfReply(reply(0), undefined)).toEqual(reply(0));
});
