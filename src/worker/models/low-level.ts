import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { classifyModelError } from './openai/classify-model-error';
import { modelConfigFromEnv, type ModelConfig } from './model-config';
import { toModelReply } from '../activities/call-model';
import { toolErrorText, type ChatMessage, type ModelReply, type ModelSettings, type ToolCall, type ToolOutcome } from '../../core';
import type { ToolContext } from '../tools/define-tool';
import type { OpenAIToolSpec, ToolRegistry } from '../tools/registry';
import { prepareToolCall, toolOutcome } from '../tools/tool-call';

/**
 * The low-level API, for your own loop outside any workflow (LangChain4j's `ChatLanguageModel`
 * and tool executor): one model call, one tool call. The same code as the activities, so the same
 * request shape, reply parsing and failure types.
 */

/** One call to an OpenAI-compatible chat endpoint. */
export interface ChatModel {
  /**
   * Sends the messages (and tool specs) and returns the assistant's reply: text and/or tool calls,
   * with usage. Failures are thrown as Temporal `ApplicationFailure`s typed as the activities
   * type them (`ModelCall.Auth`, `ModelCall.RateLimit`, ...; `nonRetryable` says whether another
   * attempt could succeed). There are no retries here: that is your loop's decision.
   */
  generate(messages: readonly ChatMessage[], options?: { tools?: readonly OpenAIToolSpec[]; settings?: ModelSettings; signal?: AbortSignal }): Promise<ModelReply>;
}

/** A {@link ChatModel} for an endpoint; default: `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `AGENT_MODEL`. */
export function chatModel(config: ModelConfig = modelConfigFromEnv()): ChatModel {
  const openai = new OpenAI({ apiKey: config.apiKey, baseURL: config.baseURL, maxRetries: 0, timeout: config.requestTimeoutMs });
  return {
    async generate(messages, options = {}) {
      const model = options.settings?.model ?? config.model;
      const request: ChatCompletionCreateParamsNonStreaming = {
        model,
        messages: messages as ChatCompletionMessageParam[],
        temperature: options.settings?.temperature ?? 0,
      };
      if (options.settings?.maxTokens) request.max_tokens = options.settings.maxTokens;
      if (options.tools?.length) request.tools = [...options.tools];
      try {
        return toModelReply(await openai.chat.completions.create(request, { signal: options.signal }), config.baseURL);
      } catch (err) {
        throw classifyModelError(err, { baseURL: config.baseURL, model });
      }
    },
  };
}

/**
 * Runs one tool call from a model reply against a registry and returns what the LLM should read
 * next. Everything the LLM can fix, and a tool that throws, comes back as an error outcome
 * (`error: true`, `result` starting with `Error:`), never as an exception. No retries.
 */
export async function executeToolCall(registry: ToolRegistry, call: ToolCall, context: Partial<ToolContext> = {}): Promise<ToolOutcome> {
  const prepared = prepareToolCall(registry, call.function.name, call.function.arguments);
  if (!prepared.ok) return prepared.outcome;
  const id = context.workflowId ?? `local-${randomUUID()}`;
  const ctx: ToolContext = {
    conversationId: context.conversationId ?? id,
    workflowId: id,
    runId: context.runId ?? '',
    toolCallId: call.id,
    idempotencyKey: context.idempotencyKey ?? `${id}/${call.id}`,
    attempt: context.attempt ?? 1,
    signal: context.signal ?? new AbortController().signal,
  };
  try {
    return toolOutcome(await registry.execute(call.function.name, prepared.args, ctx));
  } catch (err) {
    return { result: toolErrorText(`${call.function.name} failed: ${err instanceof Error ? err.message : String(err)}`), error: true };
  }
}
