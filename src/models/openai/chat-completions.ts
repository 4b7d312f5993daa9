import OpenAI, { APIConnectionTimeoutError } from 'openai';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { Stream } from 'openai/streaming';
import type { ChatMessage, ToolCall } from '../../core/messages/chat-message';
import type { JsonSchemaObject } from '../../core/state/run-options';
import type { ModelReply } from '../../core/messages/model-reply';
import { isStrictCompatible } from '../json-schema';
import type { ChatModel, ToolSpec } from '../chat-model';
import type { ModelConfig } from '../model-config';
import { classifyModelError, isModelCallError, ModelCallError } from '../model-error';
import { OPENAI_ERRORS } from './openai-errors';
import { withDeadline } from '../deadline';
import { functionsFromSpecs, toFunctionsMessages } from './legacy-functions';
import { REACT_STOP, reactMessages, reactReply } from './react-prompt';
import { CompletionAccumulator, FinalAnswerFilter } from './stream-completion';
import { userMessage, withToolImages } from './chat-images';

/**
 * The OpenAI Chat Completions adapter: OpenAI itself and every OpenAI-compatible server (Ollama,
 * vLLM, llama.cpp, LM Studio, ...), on the official `openai` SDK. It speaks three ways of
 * calling tools (`tools`, the legacy `functions`, and a ReAct text prompt for models with
 * neither), asks for structured output with `response_format` (in the prompt where the endpoint
 * refuses it), and streams (without, where the endpoint cannot). What an endpoint refused once it
 * is not asked again by this model.
 */
export function createOpenAIChatModel(config: ModelConfig): ChatModel {
  // Temporal owns retries (with back-off, visibility and durability); the client's own would hide them.
  const openai = new OpenAI({
    apiKey: config.apiKey,
    baseURL: config.baseURL,
    maxRetries: 0,
    timeout: config.requestTimeoutMs,
  });
  // Models of this endpoint that refused `response_format`: asked with an instruction instead.
  const noResponseFormat = new Set<string>();
  // Models of this endpoint that refused a streaming request: asked without streaming from then on.
  const noStreaming = new Set<string>();

  const route = (name = config.model) => ({ name, model: name, provider: 'openai', baseURL: config.baseURL });
  return {
    route,
    async generate(messages, options = {}) {
      const { model } = options.route ?? route(options.settings?.model);
      const specs = options.tools ?? [];
      const mode = options.toolCalling ?? 'tools';
      const request: ChatCompletionCreateParamsNonStreaming = {
        model,
        messages: toChatCompletionsMessages(messages),
        temperature: options.settings?.temperature ?? 0,
      };
      if (options.settings?.maxTokens) request.max_tokens = options.settings.maxTokens;
      if (mode === 'react') {
        // No tools offered means the final pass at the iteration limit: it must answer.
        request.messages = reactMessages(messages, specs, specs.length === 0);
        request.stop = REACT_STOP;
      } else if (mode === 'functions') {
        request.messages = toFunctionsMessages(messages);
        if (specs.length > 0) request.functions = functionsFromSpecs(specs);
      } else if (specs.length > 0) request.tools = specs.map(toolParam);
      const schema = options.output;
      if (schema) {
        if (mode === 'react' || noResponseFormat.has(model))
          request.messages = withInstruction(request.messages, outputInstruction(schema));
        else request.response_format = responseFormat(schema);
      }
      const where = { baseURL: config.baseURL, model };
      const timeout = Math.max(1, options.timeoutMs ?? config.requestTimeoutMs);
      const call = {
        signal: options.signal ?? new AbortController().signal,
        timeout,
        deadlineMs: Math.max(1, options.deadlineMs ?? timeout),
      };
      // ReAct's reasoning is not the answer: only the Final Answer is shown as it is written.
      const shown = mode === 'react' ? new FinalAnswerFilter() : undefined;
      const onText = options.onText && ((text: string) => options.onText!(shown ? shown.push(text) : text));
      // One request, streamed when someone listens; a server that refuses to stream is asked again without.
      const ask = async (): Promise<ChatCompletion> => {
        if (!onText || noStreaming.has(model))
          return openai.chat.completions.create(request, { signal: call.signal, timeout: call.timeout });
        try {
          return await streamCompletion(openai, request, call, onText);
        } catch (err) {
          if (!refusedStreaming(classifyModelError(err, where, OPENAI_ERRORS))) throw err;
          noStreaming.add(model);
          return openai.chat.completions.create(request, { signal: call.signal, timeout: call.timeout });
        }
      };
      let completion: ChatCompletion;
      try {
        completion = await ask();
      } catch (err) {
        const failure = classifyModelError(err, where, OPENAI_ERRORS);
        if (!(request.response_format && refusedResponseFormat(failure))) throw failure;
        // This endpoint has no structured outputs: ask for the JSON in the prompt from now on.
        noResponseFormat.add(model);
        delete request.response_format;
        request.messages = withInstruction(request.messages, outputInstruction(schema!));
        try {
          completion = await ask();
        } catch (retryErr) {
          throw classifyModelError(retryErr, where, OPENAI_ERRORS);
        }
      }
      const reply = toModelReply(completion, config.baseURL);
      return mode === 'react' ? reactReply(reply.content ?? '', specs, reply, specs.length === 0) : reply;
    },
  };
}

/**
 * The conversation in the Chat Completions format, images as content parts (see chat-images.ts).
 * Reasoning another provider wrote (Anthropic's thinking, OpenAI Responses' encrypted items) has
 * no place in it and stays behind.
 */
function toChatCompletionsMessages(messages: readonly ChatMessage[]): ChatCompletionMessageParam[] {
  const wire = messages.map((m): ChatCompletionMessageParam => {
    if (m.role === 'user') return userMessage(m);
    if (m.role === 'system') return { role: 'system', content: m.content };
    if (m.role === 'tool') return { role: 'tool', tool_call_id: m.tool_call_id, content: m.content };
    if (m.role !== 'assistant' || !m.reasoning) return m as ChatCompletionMessageParam;
    const { reasoning: _reasoning, ...rest } = m;
    return rest as ChatCompletionMessageParam;
  });
  return withToolImages(messages, wire);
}

/** A tool as Chat Completions takes it; strict where the schema allows (OpenAI's strict mode). */
function toolParam(spec: ToolSpec): ChatCompletionTool {
  return {
    type: 'function',
    function: {
      name: spec.name,
      description: spec.description,
      parameters: spec.parameters,
      ...(spec.strict ? { strict: true } : {}),
    },
  };
}

/** `response_format` asking for JSON under the schema; strict when OpenAI's strict mode can take it. */
export function responseFormat(schema: JsonSchemaObject) {
  return { type: 'json_schema' as const, json_schema: { name: 'output', schema, strict: isStrictCompatible(schema) } };
}

/** The instruction for endpoints without `response_format` (and for ReAct's Final Answer). */
export function outputInstruction(schema: JsonSchemaObject): string {
  return `Your final answer must be only a JSON value, with no other text, that is valid under this JSON Schema:\n${JSON.stringify(schema)}`;
}

/** The messages with a system instruction just before the last one (the question, or ReAct's prompt). */
function withInstruction(messages: ChatCompletionMessageParam[], text: string): ChatCompletionMessageParam[] {
  return [...messages.slice(0, -1), { role: 'system', content: text }, ...messages.slice(-1)];
}

/** A 400 that names `response_format`: the endpoint cannot do structured outputs. */
function refusedResponseFormat(failure: unknown): boolean {
  return (
    isModelCallError(failure) &&
    failure.kind === 'bad_request' &&
    /response_format|json_schema|structured/i.test(failure.message)
  );
}

/** A 400 that names streaming: the endpoint cannot stream (or does not know `stream_options`). */
function refusedStreaming(failure: unknown): boolean {
  return isModelCallError(failure) && failure.kind === 'bad_request' && /stream/i.test(failure.message);
}

/**
 * Streams one completion, handing each piece of text to `onText`, and returns the whole
 * completion. A server that answers a streaming request with a plain JSON completion (some
 * cannot stream) is read as such: its text then reaches subscribers in one piece, from the reply.
 * `timeout` bounds the wait for the response, `deadlineMs` the whole stream.
 */
async function streamCompletion(
  openai: OpenAI,
  request: ChatCompletionCreateParamsNonStreaming,
  { signal, timeout, deadlineMs }: { signal: AbortSignal; timeout: number; deadlineMs: number },
  onText: (text: string) => void,
): Promise<ChatCompletion> {
  return withDeadline(
    signal,
    deadlineMs,
    async (controller) => {
      const response = await openai.chat.completions
        .create(
          { ...request, stream: true, stream_options: { include_usage: true } },
          { signal: controller.signal, timeout },
        )
        .asResponse();
      if (!(response.headers.get('content-type') ?? '').includes('text/event-stream'))
        return (await response.json()) as ChatCompletion;
      const completion = new CompletionAccumulator();
      for await (const chunk of Stream.fromSSEResponse<ChatCompletionChunk>(response, controller)) {
        const text = completion.add(chunk);
        if (text) onText(text);
      }
      return completion.completion();
    },
    () => new APIConnectionTimeoutError(),
  );
}

/**
 * Reads the reply defensively: OpenAI-compatible servers differ, and a malformed reply must be a
 * clear, retryable failure (the next sample may be fine), never a crash in the workflow.
 */
export function toModelReply(completion: ChatCompletion, baseURL: string): ModelReply {
  const choice = completion?.choices?.[0];
  const message = choice?.message;
  if (!message) {
    throw new ModelCallError(
      'invalid_response',
      `the model server at ${baseURL} returned no message: ${JSON.stringify(completion).slice(0, 300)}`,
    );
  }
  const toolCalls: ToolCall[] = [];
  for (const c of message.tool_calls ?? []) {
    if (c.type !== 'function' || !c.function?.name) continue;
    toolCalls.push({
      id: c.id ?? '',
      type: 'function',
      function: { name: c.function.name, arguments: c.function.arguments ?? '' },
    });
  }
  // The legacy format: one call, no id (the core derives one).
  const fc = message.function_call;
  if (toolCalls.length === 0 && fc?.name)
    toolCalls.push({ id: '', type: 'function', function: { name: fc.name, arguments: fc.arguments ?? '' } });
  const content = typeof message.content === 'string' ? message.content : null;
  if (
    content === null &&
    toolCalls.length === 0 &&
    choice.finish_reason !== 'stop' &&
    choice.finish_reason !== 'length'
  ) {
    throw new ModelCallError(
      'invalid_response',
      `the model server at ${baseURL} returned neither text nor tool calls (finish_reason ${choice.finish_reason})`,
    );
  }
  const u = completion.usage;
  const usage: ModelReply['usage'] = {
    promptTokens: u?.prompt_tokens ?? 0,
    completionTokens: u?.completion_tokens ?? 0,
    totalTokens: u?.total_tokens ?? 0,
  };
  // OpenAI's prompt caching is automatic; it reports what it read from the cache, and reasoning models their reasoning.
  const cached = u?.prompt_tokens_details?.cached_tokens;
  const reasoning = u?.completion_tokens_details?.reasoning_tokens;
  if (cached) usage.cachedPromptTokens = cached;
  if (reasoning) usage.reasoningTokens = reasoning;
  return { content, toolCalls, finishReason: choice.finish_reason ?? null, usage };
}
