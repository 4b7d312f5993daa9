import Anthropic, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from '@anthropic-ai/sdk';
import type { Message, MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/messages/messages';
import type { ChatModel, GenerateOptions } from '../chat-model';
import { classifyModelError, ModelCallError, type ProviderErrors } from '../model-error';
import { ANTHROPIC_BASE_URL_DEFAULT, parseModelRef, type ModelConfig } from '../model-config';
import { withDeadline } from '../deadline';
import { withWarningsOnce } from '../sdk-warnings';
import { fromAnthropicMessage, toAnthropicPrompt } from './messages-format';

/** `max_tokens` when the agent sets none: the API requires one. With thinking, on top of its budget. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 8192;

/** The `@anthropic-ai/sdk` errors, and what a user fixes when they happen. */
export const ANTHROPIC_ERRORS: ProviderErrors = {
  APIError,
  APIConnectionError,
  APIConnectionTimeoutError,
  APIUserAbortError,
  keyVar: 'ANTHROPIC_API_KEY',
  baseURLVar: 'ANTHROPIC_BASE_URL',
  notFound: (e) =>
    `has no model "${e.model}"; check the model name after "anthropic:" in AGENT_MODEL (or the agent's model)`,
};

/**
 * The Anthropic Messages API adapter (Claude), on the official `@anthropic-ai/sdk`: `system` at
 * the top level, tools with `input_schema`, `tool_use` and `tool_result` blocks (parallel calls
 * included), extended thinking (`thinking` in the model settings) with its blocks sent back
 * unchanged, prompt caching on the stable prefix, structured output through
 * `output_config.format`, and streamed text. Failures are classified like the other adapters'
 * (overloaded, 529, and 429 are retried; 400 and 401 fail at once).
 */
export function createAnthropicChatModel(config: ModelConfig): ChatModel {
  const baseURL = config.anthropic?.baseURL ?? ANTHROPIC_BASE_URL_DEFAULT;
  const client = config.anthropic
    ? new Anthropic({
        apiKey: config.anthropic.apiKey ?? 'not-set',
        baseURL,
        // Temporal owns retries (with back-off, visibility and durability); the client's own would hide them.
        maxRetries: 0,
        timeout: config.requestTimeoutMs,
        // The activity records the GenAI span of each call itself (telemetry/gen-ai.ts), the same for every provider.
        openTelemetry: false,
      })
    : undefined;
  // The SDK's warnings (a deprecated model) are shown once per worker and model, not per call.
  const warned = new Set<string>();

  const route = (name = config.model) => ({ name, model: parseModelRef(name).model, provider: 'anthropic', baseURL });
  return {
    route,
    async generate(messages, options = {}) {
      const { model } = options.route ?? route(options.settings?.model);
      if (!client) {
        throw new ModelCallError(
          'not_configured',
          `model "anthropic:${model}" needs Anthropic's API: set ANTHROPIC_API_KEY on the worker (and ANTHROPIC_BASE_URL for a proxy or a compatible server)`,
        );
      }
      if (options.toolCalling && options.toolCalling !== 'tools') {
        throw new ModelCallError(
          'unsupported',
          `toolCalling "${options.toolCalling}" is for OpenAI-compatible models without tool calling; Claude calls tools itself: use "tools"`,
        );
      }
      const params = anthropicRequest(model, messages, options);
      const timeout = Math.max(1, options.timeoutMs ?? config.requestTimeoutMs);
      const signal = options.signal ?? new AbortController().signal;
      try {
        const onText = options.onText;
        const message = await withWarningsOnce(warned, model, () =>
          onText
            ? streamMessage(client, params, {
                signal,
                timeout,
                deadlineMs: Math.max(1, options.deadlineMs ?? timeout),
                onText,
              })
            : client.messages.create(params, { signal, timeout }),
        );
        return fromAnthropicMessage(message);
      } catch (err) {
        throw classifyModelError(err, { baseURL, model }, ANTHROPIC_ERRORS);
      }
    },
  };
}

/** The request: the prompt with its cache breakpoints, the limits, thinking and structured output. */
export function anthropicRequest(
  model: string,
  messages: Parameters<ChatModel['generate']>[0],
  options: GenerateOptions,
): MessageCreateParamsNonStreaming {
  const settings = options.settings ?? {};
  const thinking = settings.thinking;
  const params: MessageCreateParamsNonStreaming = {
    model,
    max_tokens: settings.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS + (thinking?.budgetTokens ?? 0),
    ...toAnthropicPrompt(messages, options.tools ?? []),
    // No temperature: the Messages API of today's Claude models no longer takes sampling settings.
    ...(thinking ? { thinking: { type: 'enabled' as const, budget_tokens: thinking.budgetTokens } } : {}),
  };
  const effort =
    settings.reasoningEffort && (settings.reasoningEffort === 'minimal' ? 'low' : settings.reasoningEffort);
  if (options.output || effort)
    params.output_config = {
      ...(options.output ? { format: { type: 'json_schema' as const, schema: options.output } } : {}),
      ...(effort ? { effort } : {}),
    };
  return params;
}

/**
 * Streams one message, handing each piece of text to `onText`, and returns the whole message
 * (thinking blocks with their signatures, tool calls assembled). `timeout` bounds the wait for
 * the response, `deadlineMs` the whole stream.
 */
async function streamMessage(
  client: Anthropic,
  params: MessageCreateParamsNonStreaming,
  call: { signal: AbortSignal; timeout: number; deadlineMs: number; onText: (text: string) => void },
): Promise<Message> {
  return withDeadline(
    call.signal,
    call.deadlineMs,
    (controller) => {
      const stream = client.messages.stream(params, { signal: controller.signal, timeout: call.timeout });
      stream.on('text', (delta) => call.onText(delta));
      return stream.finalMessage();
    },
    () => new APIConnectionTimeoutError(),
  );
}
