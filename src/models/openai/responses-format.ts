import type {
  FunctionTool,
  Response,
  ResponseInputImage,
  ResponseInputItem,
  ResponseReasoningItem,
} from 'openai/resources/responses/responses';
import type { ChatMessage, ImageRef, ReasoningPart, ToolCall } from '../../core/messages/chat-message';
import type { ModelReply } from '../../core/messages/model-reply';
import { imageUrlOf } from '../image-support';
import type { ToolSpec } from '../chat-model';

/**
 * OpenAI's Responses API format, both ways, for stateless requests: every request carries the
 * whole conversation as input items, the model's reasoning included as the encrypted items it
 * returned, so no request depends on what OpenAI stored (`store: false`, no
 * `previous_response_id`): a conversation resumed after months still works. Pure, so it is
 * unit-tested without a server.
 */

/** `instructions` (the system messages) and the input items. */
export interface ResponsesInput {
  instructions?: string;
  input: ResponseInputItem[];
}

/**
 * The conversation as input items: user and assistant messages (images as `input_image` parts), the assistant's reasoning items
 * (OpenAI's own, with their encrypted content, before its message), a `function_call` per tool
 * call and a `function_call_output` per result.
 */
export function toResponsesInput(messages: readonly ChatMessage[]): ResponsesInput {
  const instructions: string[] = [];
  const input: ResponseInputItem[] = [];
  for (const m of messages) {
    if (m.role === 'system') instructions.push(m.content);
    else if (m.role === 'user')
      input.push({
        role: 'user',
        content: m.images?.length ? [{ type: 'input_text', text: m.content }, ...m.images.map(inputImage)] : m.content,
      });
    else if (m.role === 'tool')
      input.push({
        type: 'function_call_output',
        call_id: m.tool_call_id,
        // A tool's images go in its output, next to its text.
        output: m.images?.length ? [{ type: 'input_text', text: m.content }, ...m.images.map(inputImage)] : m.content,
      });
    else {
      for (const r of m.reasoning ?? []) {
        if (r.provider !== 'openai-responses' || !r.id) continue;
        input.push({
          type: 'reasoning',
          id: r.id,
          summary: r.text ? [{ type: 'summary_text', text: r.text }] : [],
          ...(r.encryptedContent ? { encrypted_content: r.encryptedContent } : {}),
        });
      }
      if (m.content) input.push({ role: 'assistant', content: m.content });
      for (const call of m.tool_calls ?? [])
        input.push({
          type: 'function_call',
          call_id: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
        });
    }
  }
  return { ...(instructions.length ? { instructions: instructions.join('\n\n') } : {}), input };
}

/** An image as an input part: an http(s) URL, or the bytes as a data URL. */
function inputImage(image: ImageRef): ResponseInputImage {
  return { type: 'input_image', image_url: imageUrlOf(image), detail: 'auto' };
}

/** Function tools, strict where OpenAI's strict mode can take the schema. */
export function toResponsesTools(specs: readonly ToolSpec[]): FunctionTool[] {
  return specs.map((spec) => ({
    type: 'function',
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters,
    strict: spec.strict === true,
  }));
}

/** A response in the core's terms: text, tool calls, reasoning items (with encrypted content), usage. */
export function fromResponse(response: Response): ModelReply {
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  const reasoning: ReasoningPart[] = [];
  for (const item of response.output ?? []) {
    if (item.type === 'message') {
      for (const part of item.content ?? []) if (part.type === 'output_text') texts.push(part.text);
    } else if (item.type === 'function_call') {
      toolCalls.push({ id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } });
    } else if (item.type === 'reasoning') {
      reasoning.push(reasoningPart(item));
    }
  }
  const u = response.usage;
  const usage: ModelReply['usage'] = {
    promptTokens: u?.input_tokens ?? 0,
    completionTokens: u?.output_tokens ?? 0,
    totalTokens: u?.total_tokens ?? (u?.input_tokens ?? 0) + (u?.output_tokens ?? 0),
  };
  const cached = u?.input_tokens_details?.cached_tokens;
  const reasoningTokens = u?.output_tokens_details?.reasoning_tokens;
  if (cached) usage.cachedPromptTokens = cached;
  if (reasoningTokens) usage.reasoningTokens = reasoningTokens;
  return {
    content: texts.length ? texts.join('') : null,
    toolCalls,
    finishReason: response.incomplete_details?.reason ?? response.status ?? null,
    usage,
    ...(reasoning.length ? { reasoning } : {}),
  };
}

function reasoningPart(item: ResponseReasoningItem): ReasoningPart {
  const summary = (item.summary ?? []).map((s) => s.text).join('\n');
  return {
    provider: 'openai-responses',
    type: 'reasoning',
    id: item.id,
    ...(summary ? { text: summary } : {}),
    ...(item.encrypted_content ? { encryptedContent: item.encrypted_content } : {}),
  };
}
