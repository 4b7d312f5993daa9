import type {
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4FilePart,
  LanguageModelV4FunctionTool,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4ToolResultOutput,
} from '@ai-sdk/provider';
import type { ChatMessage, ImageRef, ReasoningPart, ToolCall, Usage } from '../../core/messages/chat-message';
import type { ModelReply } from '../../core/messages/model-reply';
import { dataUrlParts, imageUrlOf } from '../image-support';
import type { ToolSpec } from '../chat-model';

/**
 * The AI SDK's language-model specification (`@ai-sdk/provider`), both ways: the conversation as
 * its prompt (system, user, assistant and tool messages of parts) and a result back into the
 * core's terms. Written against the specification's v4 types; v2 and v3 models read the same
 * shapes, and the one that differs, usage, is read in both forms. Pure, so it is unit-tested
 * without a provider.
 */

/** The conversation as the specification's prompt. Reasoning goes back with its provider metadata (signatures live there). */
export function toAiSdkPrompt(messages: readonly ChatMessage[], version: string = 'v4'): LanguageModelV4Prompt {
  const names = new Map<string, string>();
  const prompt: LanguageModelV4Message[] = [];
  for (const m of messages) {
    if (m.role === 'system') prompt.push({ role: 'system', content: m.content });
    else if (m.role === 'user')
      prompt.push({
        role: 'user',
        content: [{ type: 'text', text: m.content }, ...(m.images ?? []).map((i) => filePart(i, version))],
      });
    else if (m.role === 'tool') {
      const part = {
        type: 'tool-result' as const,
        toolCallId: m.tool_call_id,
        toolName: names.get(m.tool_call_id) ?? '',
        output: m.images?.length
          ? toolContent(m.content, m.images, version)
          : { type: 'text' as const, value: m.content },
      };
      const last = prompt[prompt.length - 1];
      if (last?.role === 'tool') last.content.push(part);
      else prompt.push({ role: 'tool', content: [part] });
    } else {
      const content: Extract<LanguageModelV4Message, { role: 'assistant' }>['content'] = [];
      for (const r of m.reasoning ?? []) {
        if (r.provider !== 'ai-sdk') continue;
        content.push({
          type: 'reasoning',
          text: r.text ?? '',
          ...(r.metadata ? { providerOptions: r.metadata as never } : {}),
        });
      }
      if (m.content) content.push({ type: 'text', text: m.content });
      for (const call of m.tool_calls ?? []) {
        names.set(call.id, call.function.name);
        content.push({ type: 'tool-call', toolCallId: call.id, toolName: call.function.name, input: toolInput(call) });
      }
      prompt.push({ role: 'assistant', content });
    }
  }
  return prompt;
}

/**
 * An image as a file part. The specification's versions differ here: v4 tags the data
 * (`{ type: 'data' | 'url', ... }`), v2 and v3 take base64 or a `URL` as it is.
 */
function filePart(image: ImageRef, version: string): LanguageModelV4FilePart {
  const url = imageUrlOf(image);
  const inline = dataUrlParts(url);
  const mediaType = inline?.mediaType ?? image.mediaType ?? 'image';
  const data =
    version === 'v4'
      ? inline
        ? { type: 'data' as const, data: inline.data }
        : { type: 'url' as const, url: new URL(url) }
      : ((inline ? inline.data : new URL(url)) as never);
  return { type: 'file', data, mediaType, ...(image.name ? { filename: image.name } : {}) };
}

/** A tool result with images: `content` output, whose image parts each version names its own way. */
function toolContent(text: string, images: readonly ImageRef[], version: string): LanguageModelV4ToolResultOutput {
  const parts = images.map((image) => {
    const url = imageUrlOf(image);
    const inline = dataUrlParts(url);
    const mediaType = inline?.mediaType ?? image.mediaType ?? 'image';
    if (version === 'v4')
      return {
        type: 'file' as const,
        data: inline ? { type: 'data' as const, data: inline.data } : { type: 'url' as const, url: new URL(url) },
        mediaType,
      };
    if (version === 'v3')
      return (inline ? { type: 'image-data', data: inline.data, mediaType } : { type: 'image-url', url }) as never;
    // v2 takes inline data only: a URL stays a URL in the text.
    return (inline ? { type: 'media', data: inline.data, mediaType } : { type: 'text', text: url }) as never;
  });
  return { type: 'content', value: [{ type: 'text', text }, ...parts] };
}

function toolInput(call: ToolCall): unknown {
  try {
    return JSON.parse(call.function.arguments || '{}');
  } catch {
    return call.function.arguments;
  }
}

/** Function tools with their input schemas. */
export function toAiSdkTools(specs: readonly ToolSpec[]): LanguageModelV4FunctionTool[] {
  return specs.map((spec) => ({
    type: 'function',
    name: spec.name,
    description: spec.description,
    inputSchema: spec.parameters as LanguageModelV4FunctionTool['inputSchema'],
  }));
}

/** The parts of a call's options this adapter sets. */
export type AiSdkCallOptions = Pick<
  LanguageModelV4CallOptions,
  'prompt' | 'tools' | 'maxOutputTokens' | 'temperature' | 'responseFormat' | 'abortSignal'
> & { reasoning?: LanguageModelV4CallOptions['reasoning'] };

/** A generate result (or the parts a stream assembled) in the core's terms. */
export function fromAiSdkResult(result: {
  content: readonly LanguageModelV4Content[];
  finishReason?: unknown;
  usage?: unknown;
}): ModelReply {
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  const reasoning: ReasoningPart[] = [];
  for (const part of result.content ?? []) {
    if (part.type === 'text') texts.push(part.text);
    else if (part.type === 'tool-call' && !part.providerExecuted) {
      const input = part.input as unknown;
      toolCalls.push({
        id: part.toolCallId,
        type: 'function',
        function: { name: part.toolName, arguments: typeof input === 'string' ? input : JSON.stringify(input ?? {}) },
      });
    } else if (part.type === 'reasoning') {
      reasoning.push({
        provider: 'ai-sdk',
        type: 'reasoning',
        text: part.text,
        ...(part.providerMetadata ? { metadata: part.providerMetadata as Record<string, unknown> } : {}),
      });
    }
  }
  return {
    content: texts.length ? texts.join('') : null,
    toolCalls,
    finishReason: finishReasonOf(result.finishReason),
    usage: usageOf(result.usage),
    ...(reasoning.length ? { reasoning } : {}),
  };
}

/** v3 and v4 report `{ unified, raw }`; v2 a string. */
function finishReasonOf(reason: unknown): string | null {
  if (typeof reason === 'string') return reason;
  const unified = (reason as { unified?: unknown } | undefined)?.unified;
  return typeof unified === 'string' ? unified : null;
}

/** v3 and v4 report `{ inputTokens: { total, cacheRead, cacheWrite }, outputTokens: { total, reasoning } }`; v2 plain numbers. */
export function usageOf(raw: unknown): Usage {
  const u = (raw ?? {}) as Record<string, unknown>;
  const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  const input = u.inputTokens;
  const output = u.outputTokens;
  const usage: Usage =
    typeof input === 'object' && input !== null
      ? (() => {
          const i = input as Record<string, unknown>;
          const o = (output ?? {}) as Record<string, unknown>;
          const result: Usage = {
            promptTokens: count(i.total),
            completionTokens: count(o.total),
            totalTokens: count(i.total) + count(o.total),
          };
          if (count(i.cacheRead)) result.cachedPromptTokens = count(i.cacheRead);
          if (count(i.cacheWrite)) result.cacheWriteTokens = count(i.cacheWrite);
          if (count(o.reasoning)) result.reasoningTokens = count(o.reasoning);
          return result;
        })()
      : (() => {
          const result: Usage = {
            promptTokens: count(input),
            completionTokens: count(output),
            totalTokens: count(u.totalTokens) || count(input) + count(output),
          };
          if (count(u.cachedInputTokens)) result.cachedPromptTokens = count(u.cachedInputTokens);
          if (count(u.reasoningTokens)) result.reasoningTokens = count(u.reasoningTokens);
          return result;
        })();
  return usage;
}
