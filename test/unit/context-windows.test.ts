import { contextWindowOf, defaultMaxPromptTokens, withDefaultMemory } from '../../src/core/context/context-windows';

/** The default memory: requests bounded by the model's context window. */

it('knows the context windows of common models by their longest matching name, with a safe fallback', () => {
  expect(contextWindowOf('anthropic:claude-sonnet-4-5')).toBe(200_000);
  expect(contextWindowOf('gpt-4.1-mini')).toBe(1_047_576);
  expect(contextWindowOf('openai:gpt-4o-mini')).toBe(128_000);
  expect(contextWindowOf('gpt-4')).toBe(8_192);
  expect(contextWindowOf('models/gemini-2.5-pro')).toBe(1_048_576);
  expect(contextWindowOf('my-finetune')).toBe(32_768);
});

it('defaults maxPromptTokens to three quarters of the window, at most 128,000, named models by what they stand for', () => {
  expect(defaultMaxPromptTokens('gpt-4o', {})).toBe(96_000);
  expect(defaultMaxPromptTokens('anthropic:claude-sonnet-4-5', {})).toBe(128_000);
  expect(defaultMaxPromptTokens('smart', { smart: 16_000 })).toBe(12_000);
  expect(defaultMaxPromptTokens(undefined, {})).toBe(24_576);
});

it('applies the default only for workers that tell their windows, and never over a choice', () => {
  const worker = { defaultModel: 'gpt-4o', contextWindows: {} };
  expect(withDefaultMemory({}, worker)).toEqual({ maxPromptTokens: 96_000 });
  expect(withDefaultMemory({ modelSettings: { model: 'gpt-4' } }, worker)).toMatchObject({ maxPromptTokens: 6_144 });
  expect(withDefaultMemory({ maxPromptTokens: 5_000 }, worker)).toEqual({ maxPromptTokens: 5_000 });
  expect(withDefaultMemory({ memoryWindow: 10 }, worker)).toEqual({ memoryWindow: 10 });
  // An answer recorded before the default existed: the run replays as it ran.
  expect(withDefaultMemory({}, { defaultModel: 'gpt-4o' })).toEqual({});
  expect(withDefaultMemory({}, undefined)).toEqual({});
});
