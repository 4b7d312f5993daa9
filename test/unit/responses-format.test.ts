import type { Response } from 'openai/resources/responses/responses';
import { responsesRequest } from '../../src/models/openai/responses';
import { fromResponse, toResponsesInput } from '../../src/models/openai/responses-format';
import type { ChatMessage } from '../../src/core/messages/chat-message';

/** The Responses API format both ways, without a server. */

it('writes the conversation as input items: instructions, reasoning before its calls, other providers’ reasoning left out', () => {
  const messages: ChatMessage[] = [
    { role: 'system', content: 'A' },
    { role: 'system', content: 'B' },
    { role: 'user', content: 'Hi' },
    {
      role: 'assistant',
      content: 'Checking.',
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'add', arguments: '{}' } }],
      reasoning: [
        { provider: 'anthropic', type: 'thinking', text: 'claude', signature: 's' },
        { provider: 'openai-responses', type: 'reasoning', id: 'rs_1', encryptedContent: 'enc' },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: '0' },
  ];
  expect(toResponsesInput(messages)).toEqual({
    instructions: 'A\n\nB',
    input: [
      { role: 'user', content: 'Hi' },
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'enc' },
      { role: 'assistant', content: 'Checking.' },
      { type: 'function_call', call_id: 'c1', name: 'add', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: '0' },
    ],
  });
});

it('asks statelessly: store false, encrypted reasoning, effort, text.format; no sampling settings unless set', () => {
  const request = responsesRequest('gpt-x', [{ role: 'user', content: 'Hi' }], {
    settings: { reasoningEffort: 'high', maxTokens: 500 },
    output: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false },
    tools: [{ name: 't', description: 'd', parameters: { type: 'object', properties: {} }, strict: true }],
  });
  expect(request).toMatchObject({
    model: 'gpt-x',
    store: false,
    include: ['reasoning.encrypted_content'],
    max_output_tokens: 500,
    reasoning: { effort: 'high', summary: 'auto' },
    text: { format: { type: 'json_schema', name: 'output', strict: true } },
    tools: [{ type: 'function', name: 't', strict: true }],
  });
  expect('temperature' in request).toBe(false);
  expect('previous_response_id' in request).toBe(false);
});

it('reads a response: text, function calls, reasoning items, cached and reasoning tokens', () => {
  const reply = fromResponse({
    status: 'completed',
    output: [
      { type: 'reasoning', id: 'rs_9', summary: [{ type: 'summary_text', text: 'think' }], encrypted_content: 'ENC' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hi', annotations: [] }] },
      { type: 'function_call', call_id: 'call_9', name: 'add', arguments: '{"a":1}' },
    ],
    usage: {
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 4 },
      output_tokens: 6,
      output_tokens_details: { reasoning_tokens: 3 },
      total_tokens: 16,
    },
  } as unknown as Response);
  expect(reply).toEqual({
    content: 'Hi',
    toolCalls: [{ id: 'call_9', type: 'function', function: { name: 'add', arguments: '{"a":1}' } }],
    finishReason: 'completed',
    usage: { promptTokens: 10, completionTokens: 6, totalTokens: 16, cachedPromptTokens: 4, reasoningTokens: 3 },
    reasoning: [
      { provider: 'openai-responses', type: 'reasoning', id: 'rs_9', text: 'think', encryptedContent: 'ENC' },
    ],
  });
});
