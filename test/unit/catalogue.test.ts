import { createModelCatalogue, createModelPricing, isLocalEndpoint } from '../../src/models/catalogue';
import type { ModelRoute } from '../../src/models/chat-model';

const AT = () => new Date('2026-11-01T00:00:00Z');
const anthropic = (model: string): ModelRoute => ({
  name: `anthropic:${model}`,
  model,
  provider: 'anthropic',
  baseURL: 'https://api.anthropic.com',
});
const openai = (model: string, baseURL = 'https://api.openai.com/v1'): ModelRoute => ({
  name: model,
  model,
  provider: 'openai',
  baseURL,
});
const usage = (promptTokens: number, completionTokens: number, cachedPromptTokens?: number) => ({
  promptTokens,
  completionTokens,
  totalTokens: promptTokens + completionTokens,
  ...(cachedPromptTokens ? { cachedPromptTokens } : {}),
});

it("prices the providers' current models from @pydantic/genai-prices, cache reads at their own rate", () => {
  const catalogue = createModelCatalogue({}, AT);
  // claude-opus-4-5: $5 in, $25 out, $0.50 cache reads per million: 800 × 5 + 200 × 0.5 + 500 × 25.
  expect(catalogue.costOf(anthropic('claude-opus-4-5'), usage(1000, 500, 200))).toBeCloseTo(0.0166, 6);
  expect(catalogue.hasPrice(anthropic('claude-opus-4-5'))).toBe(true);
  // Dated ids are their model.
  expect(catalogue.costOf(anthropic('claude-sonnet-4-5-20250929'), usage(1000, 0))).toBe(
    catalogue.costOf(anthropic('claude-sonnet-4-5'), usage(1000, 0)),
  );
  for (const model of ['gpt-5', 'gpt-5.4-mini', 'gpt-4.1', 'o3']) expect(catalogue.hasPrice(openai(model))).toBe(true);
});

it('prices tiers: input over 200k tokens costs more per token', () => {
  const catalogue = createModelCatalogue({}, AT);
  const small = catalogue.costOf(anthropic('claude-sonnet-4-5'), usage(100_000, 0))!;
  const large = catalogue.costOf(anthropic('claude-sonnet-4-5'), usage(250_000, 0))!;
  expect(large / 250_000).toBeGreaterThan(small / 100_000);
});

it('finds models behind gateways and AI SDK providers, and by name behind a proxy it does not know', () => {
  const catalogue = createModelCatalogue({}, AT);
  expect(catalogue.hasPrice(openai('openai/gpt-5', 'https://openrouter.ai/api/v1'))).toBe(true);
  expect(
    catalogue.hasPrice({ model: 'gemini-2.5-flash', provider: 'ai-sdk:google.generative-ai', baseURL: 'google' }),
  ).toBe(true);
  expect(catalogue.hasPrice(openai('gpt-5', 'https://llm-proxy.internal.example/v1'))).toBe(true);
});

it("the worker's own prices and windows come first; unknown models get no cost and the built-in window", () => {
  const catalogue = createModelCatalogue(
    { prices: { 'claude-opus-4-5': { input: 1, output: 1 } }, contextWindows: { smart: 50_000, 'my-llm': 8_000 } },
    AT,
  );
  expect(catalogue.costOf(anthropic('claude-opus-4-5'), usage(1_000_000, 0))).toBe(1);
  expect(catalogue.contextWindowOf(anthropic('claude-opus-4-5'), 'smart')).toBe(50_000);
  expect(catalogue.contextWindowOf(openai('my-llm', 'http://127.0.0.1:8080/v1'))).toBe(8_000);
  expect(catalogue.contextWindowOf(anthropic('claude-opus-4-5'))).toBe(200_000);
  expect(catalogue.contextWindowOf(openai('gpt-4.1'))).toBeGreaterThanOrEqual(1_000_000);
  // Not in the catalogue: the table of local models.
  expect(catalogue.contextWindowOf(openai('llama3.3', 'http://localhost:11434/v1'))).toBe(128_000);
  expect(catalogue.costOf(openai('my-finetune-7'), usage(10, 10))).toBeUndefined();
  expect(catalogue.unknown(openai('my-finetune-7'))).toBe(true);
});

it('warns once per worker of a hosted model it cannot price, and never of a model on this machine', () => {
  const said: string[] = [];
  const pricing = createModelPricing(createModelCatalogue({}, AT), (m) => said.push(m));
  for (let i = 0; i < 3; i++) pricing.cost(openai('my-finetune-7'), usage(10, 10));
  pricing.cost(openai('scripted', 'http://127.0.0.1:4010/v1'), usage(10, 10));
  pricing.cost(openai('llama3.3', 'http://localhost:11434/v1'), usage(10, 10));
  expect(said).toEqual([
    expect.stringMatching(
      /^the model my-finetune-7 \(my-finetune-7 at https:\/\/api\.openai\.com\/v1\) is not in the model catalogue \(@pydantic\/genai-prices \d+\.\d+\.\d+\): .*Give the worker its price and window \(AgentsPlugin's "prices" and "contextWindows"\)/,
    ),
  ]);
  expect([isLocalEndpoint('http://[::1]:80/v1'), isLocalEndpoint('https://api.openai.com/v1')]).toEqual([true, false]);
});
