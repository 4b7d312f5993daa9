import { nextFallbackModel } from '../../src/core/run/model-fallback';
import { defineAgent } from '../../src/agents/define-agent';
import { addUsage } from '../../src/core/messages/usage';
import { modelConfigFromEnv, parseModelRef } from '../../src/models/model-config';

it('splits a model name into its provider and the provider’s name; no known prefix means the OpenAI endpoint', () => {
  expect(parseModelRef('anthropic:claude-sonnet-4-5')).toEqual({ provider: 'anthropic', model: 'claude-sonnet-4-5' });
  expect(parseModelRef('openai-responses:gpt-5')).toEqual({ provider: 'openai-responses', model: 'gpt-5' });
  expect(parseModelRef('openai:gpt-4.1-mini')).toEqual({ provider: 'openai', model: 'gpt-4.1-mini' });
  expect(parseModelRef('gpt-4o-mini')).toEqual({ provider: 'openai', model: 'gpt-4o-mini' });
  // Ollama's names have colons of their own.
  expect(parseModelRef('qwen2.5:14b')).toEqual({ provider: 'openai', model: 'qwen2.5:14b' });
});

it('reads Anthropic’s endpoint from ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL; either configures the worker', () => {
  expect(modelConfigFromEnv({}).configured).toBe(false);
  expect(modelConfigFromEnv({}).anthropic).toBeUndefined();
  const claude = modelConfigFromEnv({ ANTHROPIC_API_KEY: 'sk-ant', AGENT_MODEL: 'anthropic:claude-x' });
  expect(claude).toMatchObject({ configured: true, model: 'anthropic:claude-x', anthropic: { apiKey: 'sk-ant' } });
  expect(modelConfigFromEnv({ ANTHROPIC_BASE_URL: 'http://proxy:8080' }).anthropic).toEqual({
    baseURL: 'http://proxy:8080',
  });
});

it('adds usage details only once a provider reports them', () => {
  const plain = { promptTokens: 1, completionTokens: 2, totalTokens: 3 };
  expect(addUsage(plain, plain)).toEqual({ promptTokens: 2, completionTokens: 4, totalTokens: 6 });
  expect(addUsage(plain, { ...plain, cachedPromptTokens: 5, reasoningTokens: 1 })).toEqual({
    promptTokens: 2,
    completionTokens: 4,
    totalTokens: 6,
    cachedPromptTokens: 5,
    reasoningTokens: 1,
  });
});

it('falls back only on failures a model could not help, in order, until the list ends', () => {
  const settings = { model: 'smart', fallbackModels: ['fast', 'local'] };
  expect(nextFallbackModel(settings, 0, 'ModelCall.Overloaded')).toBe('fast');
  expect(nextFallbackModel(settings, 1, 'ModelCall.ServerError')).toBe('local');
  expect(nextFallbackModel(settings, 2, 'ModelCall.Timeout')).toBeUndefined();
  expect(nextFallbackModel(settings, 0, 'ModelCall.Auth')).toBeUndefined();
  expect(nextFallbackModel(settings, 0, 'ModelCall.BadRequest')).toBeUndefined();
  expect(nextFallbackModel({ model: 'smart' }, 0, 'ModelCall.Overloaded')).toBeUndefined();
});

it('takes a model and its fallbacks as a list on an agent, and refuses an empty one', () => {
  expect(() => defineAgent({ name: 'a', instructions: 'x', tools: [], model: ['smart', 'fast'] })).not.toThrow();
  expect(() => defineAgent({ name: 'a', instructions: 'x', tools: [], model: [] })).toThrow(
    /"model" must be a model name, or a list of them/,
  );
});
