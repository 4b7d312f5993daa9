import type {
  Base64ImageSource,
  ContentBlockParam,
  ImageBlockParam,
  Message,
  MessageParam,
  TextBlockParam,
  Tool,
} from '@anthropic-ai/sdk/resources/messages/messages';
import type { ChatMessage, ImageRef, ReasoningPart, ToolCall } from '../../core/messages/chat-message';
import type { ModelReply } from '../../core/messages/model-reply';
import { dataUrlParts, imageUrlOf } from '../image-support';
import type { ToolSpec } from '../chat-model';

/**
 * The Anthropic Messages API's format, both ways: the conversation as `system` plus alternating
 * user and assistant messages of content blocks, and a reply back into the core's terms. Pure,
 * so it is unit-tested without a server.
 */

/** An image block: the bytes of a data URL inline (base64), an http(s) URL for Anthropic to fetch. */
function imageBlock(image: ImageRef): ImageBlockParam {
  const url = imageUrlOf(image);
  const inline = dataUrlParts(url);
  if (!inline) return { type: 'image', source: { type: 'url', url } };
  return {
    type: 'image',
    source: { type: 'base64', media_type: inline.mediaType as Base64ImageSource['media_type'], data: inline.data },
  };
}

/** A prompt-cache breakpoint: everything up to and including the block it marks is cached (5 minutes). */
const CACHE = { type: 'ephemeral' } as const;

/** The request's `system`, `messages` and `tools`, with cache breakpoints on the stable prefix. */
export interface AnthropicPrompt {
  system?: TextBlockParam[];
  messages: MessageParam[];
  tools?: Tool[];
}

/**
 * The conversation as the Messages API takes it:
 * - system messages join the top-level `system`;
 * - an assistant message is its thinking blocks (Anthropic's own, unchanged, signatures
 *   included), its text, and a `tool_use` block per tool call;
 * - a user message's images are image blocks before its text; tool results are `tool_result`
 *   blocks (with a tool's images in them) of one user message, the one after the calls;
 * - consecutive messages of one role are merged, as the API wants them alternating.
 *
 * Prompt caching: breakpoints after the tools, after the system prompt (and after the summary of a
 * compacted conversation, which follows it), and on the last block of the conversation, so each request reads what the one before it wrote (the settled part of the
 * conversation) and writes its own new part.
 */
export function toAnthropicPrompt(messages: readonly ChatMessage[], specs: readonly ToolSpec[]): AnthropicPrompt {
  const system: TextBlockParam[] = [];
  const out: MessageParam[] = [];
  const push = (role: 'user' | 'assistant', blocks: ContentBlockParam[]) => {
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    if (last?.role === role) (last.content as ContentBlockParam[]).push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of messages) {
    if (m.role === 'system') {
      if (m.content) system.push({ type: 'text', text: m.content });
    } else if (m.role === 'user') {
      // Images first: Anthropic finds that answers are best with the images before the question.
      push('user', [...(m.images ?? []).map(imageBlock), { type: 'text', text: m.content || ' ' }]);
    } else if (m.role === 'tool') {
      const content = m.images?.length
        ? [{ type: 'text' as const, text: m.content || ' ' }, ...m.images.map(imageBlock)]
        : m.content;
      push('user', [{ type: 'tool_result', tool_use_id: m.tool_call_id, content }]);
    } else {
      const blocks: ContentBlockParam[] = [];
      for (const r of m.reasoning ?? []) {
        if (r.provider !== 'anthropic') continue;
        if (r.type === 'redacted_thinking') blocks.push({ type: 'redacted_thinking', data: r.data ?? '' });
        else blocks.push({ type: 'thinking', thinking: r.text ?? '', signature: r.signature ?? '' });
      }
      if (m.content) blocks.push({ type: 'text', text: m.content });
      for (const call of m.tool_calls ?? []) {
        blocks.push({ type: 'tool_use', id: call.id, name: call.function.name, input: toolInput(call) });
      }
      // An assistant turn with nothing in it (an empty answer) still holds the alternation.
      push('assistant', blocks.length ? blocks : [{ type: 'text', text: ' ' }]);
    }
  }
  // The API wants the conversation to start with the user.
  if (out[0]?.role === 'assistant') out.unshift({ role: 'user', content: [{ type: 'text', text: ' ' }] });
  const lastBlocks = out[out.length - 1]?.content as ContentBlockParam[] | undefined;
  const lastBlock = lastBlocks?.[lastBlocks.length - 1];
  if (lastBlock && cacheable(lastBlock)) lastBlock.cache_control = CACHE;
  if (system.length) system[system.length - 1].cache_control = CACHE;
  // After a compaction the last system block is the summary, which changes at the next one: a
  // breakpoint on the instructions too keeps tools and instructions cached across compactions
  // (four breakpoints in all, Anthropic's most).
  if (system.length > 1) system[0].cache_control = CACHE;
  const tools: Tool[] = specs.map((spec) => ({
    name: spec.name,
    description: spec.description,
    input_schema: { type: 'object', ...spec.parameters } as Tool['input_schema'],
  }));
  if (tools.length) tools[tools.length - 1].cache_control = CACHE;
  return { ...(system.length ? { system } : {}), messages: out, ...(tools.length ? { tools } : {}) };
}

/** Blocks a cache breakpoint may mark (thinking blocks may not carry one). */
function cacheable(block: ContentBlockParam): block is Exclude<
  ContentBlockParam,
  { type: 'thinking' } | { type: 'redacted_thinking' }
> & {
  cache_control?: unknown;
} {
  return block.type !== 'thinking' && block.type !== 'redacted_thinking';
}

/**
 * A tool call's arguments as the `input` object Anthropic wants. The model wrote them; if they
 * are not a JSON object (a call another provider wrote badly, answered with an error), they go
 * back as the text they were, so the conversation stays valid.
 */
function toolInput(call: ToolCall): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(call.function.arguments || '{}');
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // not JSON: kept as text below
  }
  return { input: call.function.arguments };
}

/** A Messages API reply in the core's terms: text, tool calls, thinking (kept whole), usage. */
export function fromAnthropicMessage(message: Message): ModelReply {
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  const reasoning: ReasoningPart[] = [];
  for (const block of message.content ?? []) {
    if (block.type === 'text') texts.push(block.text);
    else if (block.type === 'tool_use')
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      });
    else if (block.type === 'thinking')
      reasoning.push({ provider: 'anthropic', type: 'thinking', text: block.thinking, signature: block.signature });
    else if (block.type === 'redacted_thinking')
      reasoning.push({ provider: 'anthropic', type: 'redacted_thinking', data: block.data });
  }
  const u = message.usage;
  const cachedRead = u?.cache_read_input_tokens ?? 0;
  const cacheWrite = u?.cache_creation_input_tokens ?? 0;
  // Anthropic counts cached input apart from `input_tokens`; the core's prompt tokens are all of it.
  const promptTokens = (u?.input_tokens ?? 0) + cachedRead + cacheWrite;
  const completionTokens = u?.output_tokens ?? 0;
  const usage: ModelReply['usage'] = { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
  if (cachedRead) usage.cachedPromptTokens = cachedRead;
  if (cacheWrite) usage.cacheWriteTokens = cacheWrite;
  const thinkingTokens = u?.output_tokens_details?.thinking_tokens;
  if (thinkingTokens) usage.reasoningTokens = thinkingTokens;
  return {
    content: texts.length ? texts.join('') : null,
    toolCalls,
    finishReason: message.stop_reason ?? null,
    usage,
    ...(reasoning.length ? { reasoning } : {}),
  };
}
