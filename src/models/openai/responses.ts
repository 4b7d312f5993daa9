import OpenAI, { APIConnectionTimeoutError } from 'openai';
import type { Response, ResponseCreateParamsNonStreaming } from 'openai/resources/responses/responses';
import { isStrictCompatible } from '../json-schema';
import type { ChatModel, GenerateOptions } from '../chat-model';
import { classifyModelError, ModelCallError } from '../model-error';
import { OPENAI_ERRORS } from './openai-errors';
import { parseModelRef, type ModelConfig } from '../model-config';
import { withDeadline } from '../deadline';
import { fromResponse, toResponsesInput, toResponsesTools } from './responses-format';

/**
 * OpenAI's Responses API adapter (`openai-responses:<model>`), on the official `openai` SDK, for
 * reasoning models (GPT-5, the o-series) whose reasoning must survive between tool calls.
 * Stateless, for durability: `store: false`, the reasoning asked for encrypted
 * (`include: ["reasoning.encrypted_content"]`) and sent back with the function calls and their
 * outputs on every later request, never `previous_response_id`, so nothing depends on state kept
 * at OpenAI and a conversation resumed after 60 days still works. Also `reasoning.effort`,
 * structured output through `text.format`, and streamed text.
 */
export function createOpenAIResponsesChatModel(config: ModelConfig): ChatModel {
  const openai = new OpenAI({
    apiKey: config.apiKey,
    baseURL: config.baseURL,
    // Temporal owns retries (with back-off, visibility and durability); the client's own would hide them.
    maxRetries: 0,
    timeout: config.requestTimeoutMs,
  });
  const route = (name = config.model) => ({
    name,
    model: parseModelRef(name).model,
    provider: 'openai-responses',
    baseURL: config.baseURL,
  });
  return {
    route,
    async generate(messages, options = {}) {
      const { model } = options.route ?? route(options.settings?.model);
      if (options.toolCalling && options.toolCalling !== 'tools') {
        throw new ModelCallError(
          'unsupported',
          `toolCalling "${options.toolCalling}" is for models without tool calling; the Responses API calls tools itself: use "tools"`,
        );
      }
      const request = responsesRequest(model, messages, options);
      const timeout = Math.max(1, options.timeoutMs ?? config.requestTimeoutMs);
      const signal = options.signal ?? new AbortController().signal;
      try {
        const response = options.onText
          ? await streamResponse(openai, request, {
              signal,
              timeout,
              deadlineMs: Math.max(1, options.deadlineMs ?? timeout),
              onText: options.onText,
            })
          : await openai.responses.create(request, { signal, timeout });
        if (response.status === 'failed' || response.error) {
          throw new ModelCallError(
            'server_error',
            `the model at ${config.baseURL} failed its response: ${response.error?.message ?? response.status}`,
          );
        }
        return fromResponse(response);
      } catch (err) {
        throw classifyModelError(err, { baseURL: config.baseURL, model }, OPENAI_ERRORS);
      }
    },
  };
}

/** The stateless request: the whole conversation, encrypted reasoning asked for, nothing stored. */
export function responsesRequest(
  model: string,
  messages: Parameters<ChatModel['generate']>[0],
  options: GenerateOptions,
): ResponseCreateParamsNonStreaming {
  const settings = options.settings ?? {};
  const tools = toResponsesTools(options.tools ?? []);
  const request: ResponseCreateParamsNonStreaming = {
    model,
    ...toResponsesInput(messages),
    store: false,
    include: ['reasoning.encrypted_content'],
    ...(tools.length ? { tools } : {}),
    // Reasoning models refuse sampling settings: only what the agent sets explicitly goes out.
    ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
    ...(settings.maxTokens ? { max_output_tokens: settings.maxTokens } : {}),
    ...(settings.reasoningEffort ? { reasoning: { effort: settings.reasoningEffort, summary: 'auto' } } : {}),
  };
  if (options.output)
    request.text = {
      format: {
        type: 'json_schema',
        name: 'output',
        schema: options.output,
        strict: isStrictCompatible(options.output),
      },
    };
  return request;
}

/**
 * Streams one response, handing each piece of text to `onText`, and returns the completed
 * response. `timeout` bounds the wait for the response, `deadlineMs` the whole stream.
 */
async function streamResponse(
  openai: OpenAI,
  request: ResponseCreateParamsNonStreaming,
  call: { signal: AbortSignal; timeout: number; deadlineMs: number; onText: (text: string) => void },
): Promise<Response> {
  return withDeadline(
    call.signal,
    call.deadlineMs,
    async (controller) => {
      const stream = await openai.responses.create(
        { ...request, stream: true },
        { signal: controller.signal, timeout: call.timeout },
      );
      let done: Response | undefined;
      for await (const event of stream) {
        if (event.type === 'response.output_text.delta') call.onText(event.delta);
        else if (event.type === 'response.completed' || event.type === 'response.incomplete') done = event.response;
        else if (event.type === 'response.failed') done = event.response;
        else if (event.type === 'error')
          throw new ModelCallError('server_error', `the model's stream failed: ${event.message}`);
      }
      if (!done)
        throw new ModelCallError('invalid_response', 'the response stream ended before the response completed');
      return done;
    },
    () => new APIConnectionTimeoutError(),
  );
}
