import type { Message } from '@anthropic-ai/sdk/resources/messages/messages';
import { anthropicRequest } from '../../src/models/anthropic/messages';
import { fromAnthropicMessage, toAnthropicPrompt } from '../../src/models/anthropic/messages-format';
import type { ChatMessage } from '../../src/core/messages/chat-message';

/** The Messages API format both ways, without a server. */

const call = (id: string, name: string, args: string) => ({
  id,
  type: 'function' as const,
  function: { name, arguments: args },
});

it('puts system messages on top, keeps only Anthropic reasoning, and merges tool results into one user message', () => {
  const messages: ChatMessage[] = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hi' },
    {
      role: 'assistant',
      content: 'Looking.',
      tool_calls: [call('t1', 'add', '{"a":1,"b":2}'), call('t2', 'echo', 'not json')],
      reasoning: [
        { provider: 'anthropic', type: 'thinking', text: 'hmm', signature: 'sig' },
        { provider: 'openai-responses', type: 'reasoning', id: 'rs_1', encryptedContent: 'xyz' },
      ],
    },
    { role: 'tool', tool_call_id: 't1', content: '3' },
    { role: 'tool', tool_call_id: 't2', content: 'Error: bad input' },
  ];
  const prompt = toAnthropicPrompt(messages, [{ name: 'add', description: 'Adds', parameters: { properties: {} } }]);
  expect(prompt.system).toEqual([{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }]);
  expect(prompt.messages).toEqual([
    { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'hmm', signature: 'sig' },
        { type: 'text', text: 'Looking.' },
        { type: 'tool_use', id: 't1', name: 'add', input: { a: 1, b: 2 } },
        { type: 'tool_use', id: 't2', name: 'echo', input: { input: 'not json' } },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't1', content: '3' },
        { type: 'tool_result', tool_use_id: 't2', content: 'Error: bad input', cache_control: { type: 'ephemeral' } },
      ],
    },
  ]);
  expect(prompt.tools).toEqual([
    {
      name: 'add',
      description: 'Adds',
      input_schema: { type: 'object', properties: {} },
      cache_control: { type: 'ephemeral' },
    },
  ]);
});

it('starts with a user turn and never sends an empty assistant turn', () => {
  const prompt = toAnthropicPrompt(
    [
      { role: 'assistant', content: '' },
      { role: 'user', content: 'Go on' },
    ],
    [],
  );
  expect(prompt.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
  expect(prompt.tools).toBeUndefined();
  expect(prompt.system).toBeUndefined();
});

it('reads a reply: text, tool calls, thinking kept whole, and all input tokens counted', () => {
  const reply = fromAnthropicMessage({
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    stop_reason: 'tool_use',
    stop_sequence: null,
    content: [
      { type: 'thinking', thinking: 'plan', signature: 'c2ln' },
      { type: 'redacted_thinking', data: 'ZGF0YQ==' },
      { type: 'text', text: 'Let me add.', citations: null },
      { type: 'tool_use', id: 'toolu_9', name: 'add', input: { a: 1 } },
    ],
    usage: {
      input_tokens: 10,
      output_tokens: 20,
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 5,
      output_tokens_details: { thinking_tokens: 7 },
    },
  } as unknown as Message);
  expect(reply).toEqual({
    content: 'Let me add.',
    toolCalls: [call('toolu_9', 'add', '{"a":1}')],
    finishReason: 'tool_use',
    usage: {
      promptTokens: 115,
      completionTokens: 20,
      totalTokens: 135,
      cachedPromptTokens: 100,
      cacheWriteTokens: 5,
      reasoningTokens: 7,
    },
    reasoning: [
      { provider: 'anthropic', type: 'thinking', text: 'plan', signature: 'c2ln' },
      { provider: 'anthropic', type: 'redacted_thinking', data: 'ZGF0YQ==' },
    ],
  });
});

it('sets max_tokens, thinking, effort and the output format', () => {
  const plain = anthropicRequest('claude-x', [{ role: 'user', content: 'Hi' }], {});
  expect(plain).toMatchObject({ model: 'claude-x', max_tokens: 8192 });
  expect('temperature' in plain).toBe(false);
  expect(plain.thinking).toBeUndefined();
  const thinking = anthropicRequest('claude-x', [{ role: 'user', content: 'Hi' }], {
    settings: { thinking: { budgetTokens: 2000 }, reasoningEffort: 'minimal', temperature: 0.5 },
    output: { type: 'object', properties: {} },
  });
  expect(thinking).toMatchObject({
    max_tokens: 10192,
    thinking: { type: 'enabled', budget_tokens: 2000 },
    output_config: { effort: 'low', format: { type: 'json_schema', schema: { type: 'object', properties: {} } } },
  });
  expect('temperature' in thinking).toBe(false);
});
