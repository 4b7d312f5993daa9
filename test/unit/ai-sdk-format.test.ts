import { fromAiSdkResult, toAiSdkPrompt, usageOf } from '../../src/models/ai-sdk/ai-sdk-format';
import { aiSdkCallOptions } from '../../src/models/ai-sdk/ai-sdk-model';
import { isAiSdkLanguageModel } from '../../src/models/ai-sdk/ai-sdk-language-model';

/** The AI SDK specification's format both ways, without a provider. */

it('writes tool results as tool messages named after their calls, and keeps only AI SDK reasoning', () => {
  const prompt = toAiSdkPrompt([
    { role: 'user', content: 'Hi' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'add', arguments: '{"a":1}' } }],
      reasoning: [
        { provider: 'anthropic', type: 'thinking', text: 'other provider', signature: 's' },
        { provider: 'ai-sdk', type: 'reasoning', text: 'mine', metadata: { p: { sig: 'x' } } },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: '1' },
  ]);
  expect(prompt).toEqual([
    { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
    {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'mine', providerOptions: { p: { sig: 'x' } } },
        { type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: { a: 1 } },
      ],
    },
    {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'add', output: { type: 'text', value: '1' } }],
    },
  ]);
});

it('reads usage in the v4 shape and in the v2 shape', () => {
  expect(
    usageOf({
      inputTokens: { total: 10, noCache: 4, cacheRead: 6, cacheWrite: 1 },
      outputTokens: { total: 5, text: 3, reasoning: 2 },
    }),
  ).toEqual({
    promptTokens: 10,
    completionTokens: 5,
    totalTokens: 15,
    cachedPromptTokens: 6,
    cacheWriteTokens: 1,
    reasoningTokens: 2,
  });
  expect(usageOf({ inputTokens: 7, outputTokens: 3, totalTokens: 10, cachedInputTokens: 2 })).toEqual({
    promptTokens: 7,
    completionTokens: 3,
    totalTokens: 10,
    cachedPromptTokens: 2,
  });
  expect(usageOf(undefined)).toEqual({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });
});

it('reads a result; tool calls the provider ran itself are not ours to run', () => {
  const reply = fromAiSdkResult({
    content: [
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b' },
      { type: 'tool-call', toolCallId: 'c', toolName: 'search', input: '{"q":1}' },
      { type: 'tool-call', toolCallId: 'd', toolName: 'web', input: '{}', providerExecuted: true },
    ],
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  });
  expect(reply).toMatchObject({
    content: 'ab',
    toolCalls: [{ id: 'c', type: 'function', function: { name: 'search', arguments: '{"q":1}' } }],
    finishReason: 'tool-calls',
  });
});

it('asks for JSON under the schema, the reasoning effort and the limits', () => {
  const options = aiSdkCallOptions([{ role: 'user', content: 'x' }], {
    settings: { maxTokens: 100, reasoningEffort: 'low' },
    output: { type: 'object' },
  });
  expect(options).toMatchObject({
    maxOutputTokens: 100,
    temperature: 0,
    reasoning: 'low',
    responseFormat: { type: 'json', schema: { type: 'object' }, name: 'output' },
  });
  expect(isAiSdkLanguageModel({ specificationVersion: 'v4', doGenerate() {}, doStream() {} })).toBe(true);
  expect(isAiSdkLanguageModel('anthropic:claude')).toBe(false);
});
