import type { ChatCompletionCreateParams, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ChatMessage } from '../../core/messages/chat-message';
import type { ToolSpec } from '../chat-model';
import { userMessage, withToolImages } from './chat-images';

/**
 * The deprecated `functions`/`function_call` wire format, for servers that predate `tools`. The
 * workflow keeps one conversation format (tool calls with ids); only the request is translated
 * here: an assistant tool call becomes `function_call`, and its result a `role: "function"`
 * message named after the function, as in the OpenAI exchange the Quarkus document shows.
 */
export function toFunctionsMessages(messages: readonly ChatMessage[]): ChatCompletionMessageParam[] {
  const names = new Map<string, string>();
  const wire = messages.map((m): ChatCompletionMessageParam => {
    if (m.role === 'assistant' && m.tool_calls?.length) {
      // One call per reply in this format; the core never records more for a functions run.
      const [call] = m.tool_calls;
      names.set(call.id, call.function.name);
      return {
        role: 'assistant',
        content: m.content,
        function_call: { name: call.function.name, arguments: call.function.arguments },
      };
    }
    if (m.role === 'tool')
      return { role: 'function', name: names.get(m.tool_call_id) ?? 'unknown', content: m.content };
    if (m.role === 'user') return userMessage(m);
    if (m.role === 'system') return { role: 'system', content: m.content };
    return m as ChatCompletionMessageParam;
  });
  return withToolImages(messages, wire);
}

/** The request's `functions` array. */
export function functionsFromSpecs(specs: readonly ToolSpec[]): ChatCompletionCreateParams.Function[] {
  return specs.map((s) => ({ name: s.name, description: s.description, parameters: s.parameters }));
}
