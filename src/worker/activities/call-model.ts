import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import OpenAI, { APIConnectionTimeoutError } from 'openai';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { Stream } from 'openai/streaming';
import type { TextBatch } from '../../core/agent-events';
import type { ChatMessage, ModelReply, ToolCall, ToolInfo } from '../../core/types';
import { DEFAULT_MODEL_CALL_TIMEOUT_MS } from '../../core/run-input';
import type { McpToolSource } from '../mcp/mcp-tool-source';
import type { ToolRegistry } from '../tools/registry';
import type { ToolProvider } from '../tools/tool-provider';
import { messagesQuery, textBatchSignal } from '../../common/definitions';
import { classifyModelError } from '../models/openai/classify-model-error';
import { ConversationLoader } from './conversation-loader';
import { ledgerOf, ModelTimeBudget } from './attempt-ledger';
import { keepHeartbeating, recordForNextAttempt } from './heartbeat';
import { functionsFromSpecs, toFunctionsMessages } from '../models/openai/legacy-functions';
import { REACT_STOP, reactMessages, reactReply } from '../models/openai/react-prompt';
import { checkAnswer, outputInstruction, responseFormat, type OutputSchemas } from './structured-output';
import type { ModelConfig } from '../models/model-config';
import type { ModelCallInput } from '../../common/activity-interface';
import { CompletionAccumulator, FinalAnswerFilter } from '../models/openai/stream-completion';
import { TextPublisher, type StreamingOptions } from './text-publisher';
import { traceModelCall } from '../../telemetry/gen-ai';

/**
 * Builds the model-call activity. It receives a reference to the conversation, reads the messages
 * from the worker's cache (or, on a miss, from the workflow with a query), builds tool schemas
 * from the registry, and returns only the new assistant message. The event history therefore
 * records O(new content) per step.
 */
export function createCallModel(deps: {
  client?: Client;
  registry: ToolRegistry;
  config: ModelConfig;
  toolProvider?: ToolProvider;
  outputs: OutputSchemas;
  /** Where the conversations are read from; the plugin shares it with the workflows' sink. */
  conversations?: ConversationLoader;
  streaming?: StreamingOptions;
  mcp?: McpToolSource;
}) {
  const { registry, config, toolProvider, outputs } = deps;
  // Endpoints (base URL + model) that refused `response_format`: asked with an instruction instead.
  const noResponseFormat = new Set<string>();
  // Endpoints that refused a streaming request: asked without streaming from then on.
  const noStreaming = new Set<string>();
  // Temporal owns retries (with back-off, visibility and durability); the client's own would hide them.
  const openai = new OpenAI({ apiKey: config.apiKey, baseURL: config.baseURL, maxRetries: 0, timeout: config.requestTimeoutMs });
  const conversations = deps.conversations ?? createConversationLoader(deps.client);

  // Each call in its GenAI span, with its latency and tokens counted (see src/telemetry/gen-ai.ts).
  return (input: ModelCallInput): Promise<ModelReply> =>
    traceModelCall({ model: input.settings?.model ?? config.model, baseURL: config.baseURL, agent: input.agent }, () => callModelOnce(input));

  async function callModelOnce(input: ModelCallInput): Promise<ModelReply> {
    if (!config.configured) {
      throw ApplicationFailure.nonRetryable(
        'no LLM is configured on this worker: set OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL (any OpenAI-compatible server, e.g. http://localhost:11434/v1 for Ollama), and AGENT_MODEL',
        'ModelCall.NotConfigured',
      );
    }
    const { cancellationSignal: signal, info } = Context.current();
    // The model-call budget is time spent waiting for the model, carried from attempt to attempt.
    const budget = new ModelTimeBudget(input.timeoutMs ?? DEFAULT_MODEL_CALL_TIMEOUT_MS, ledgerOf(info.heartbeatDetails).modelMs ?? 0);
    if (budget.exhausted()) throw modelCallTimedOut(budget, info.attempt);
    const stop = keepHeartbeating(undefined, () => ({ modelMs: budget.spent() }));
    const model = input.settings?.model ?? config.model;
    try {
      const messages = await conversations.load(input);
      const request: ChatCompletionCreateParamsNonStreaming = {
        model,
        messages: messages as ChatCompletionMessageParam[],
        temperature: input.settings?.temperature ?? 0,
      };
      if (input.settings?.maxTokens) request.max_tokens = input.settings.maxTokens;
      // No tools means the final `generate` pass: the provider must not add any either.
      const provided = toolProvider && input.toolNames.length > 0 ? await provideTools(toolProvider, registry, input, messages) : [];
      // MCP tools are described from their server's listing: this worker may not have listed it yet.
      if (deps.mcp && registry.unknown(input.toolNames).length > 0) await deps.mcp.ensureTools(input.toolNames);
      // A tool its MCP server no longer offers is not offered to the LLM either.
      const toolNames = [...input.toolNames.filter((n) => registry.has(n)), ...provided.map((t) => t.name)];
      if (input.toolCalling === 'react') {
        request.messages = reactMessages(messages, toolNames, registry, toolNames.length === 0);
        request.stop = REACT_STOP;
      } else if (input.toolCalling === 'functions') {
        request.messages = toFunctionsMessages(messages);
        if (toolNames.length > 0) request.functions = functionsFromSpecs(registry.openAISpecs(toolNames));
      } else if (toolNames.length > 0) request.tools = registry.openAISpecs(toolNames);
      const schema = outputs.for(input);
      const endpoint = `${config.baseURL} ${model}`;
      if (schema) {
        if (input.toolCalling === 'react' || noResponseFormat.has(endpoint)) request.messages = withInstruction(request.messages, outputInstruction(schema));
        else request.response_format = responseFormat(schema);
      }
      const publisher =
        input.stream && deps.streaming?.enabled !== false && !noStreaming.has(endpoint)
          ? new TextPublisher(textSender(deps.client, input), input.stream.call, info.attempt, deps.streaming?.batchIntervalMs)
          : undefined;
      const shown = input.toolCalling === 'react' ? new FinalAnswerFilter() : undefined;
      // One request, streamed when a publisher is there; a server that refuses to stream is asked
      // again without. Each may take what is left of the budget, and no longer than a request may.
      const requestOptions = () => ({ signal, timeout: Math.max(1, Math.min(config.requestTimeoutMs, budget.remaining())), deadlineMs: Math.max(1, budget.remaining()) });
      const ask = async (): Promise<ChatCompletion> => {
        if (!publisher) return openai.chat.completions.create(request, clientOptions(requestOptions()));
        try {
          return await streamCompletion(openai, request, requestOptions(), (text) => publisher.push(shown ? shown.push(text) : text));
        } catch (err) {
          if (!refusedStreaming(classifyModelError(err, { baseURL: config.baseURL, model }))) throw err;
          noStreaming.add(endpoint);
          return openai.chat.completions.create(request, clientOptions(requestOptions()));
        }
      };
      const complete = async (): Promise<ChatCompletion> => {
        budget.start();
        try {
          return await ask();
        } finally {
          budget.stop();
        }
      };
      let completion: ChatCompletion;
      try {
        try {
          completion = await complete();
        } catch (err) {
          const failure = classifyModelError(err, { baseURL: config.baseURL, model });
          if (!(request.response_format && refusedResponseFormat(failure))) throw failure;
          // This endpoint has no structured outputs: ask for the JSON in the prompt from now on.
          noResponseFormat.add(endpoint);
          delete request.response_format;
          request.messages = withInstruction(request.messages, outputInstruction(schema!));
          try {
            completion = await complete();
          } catch (retryErr) {
            throw classifyModelError(retryErr, { baseURL: config.baseURL, model });
          }
        }
        await publisher?.close();
      } catch (caught) {
        // With no time left there is no next attempt, whatever the failure.
        const err = budget.exhausted() && !(caught instanceof ApplicationFailure && caught.nonRetryable) && !signal.aborted ? modelCallTimedOut(budget, info.attempt, caught) : caught;
        // Temporal may retry this attempt: the workflow tells subscribers why when the next one speaks.
        if (publisher && !(err instanceof ApplicationFailure && err.nonRetryable) && !signal.aborted) await publisher.fail(err instanceof Error ? err.message : String(err));
        else await publisher?.close();
        throw err;
      }
      let reply = toModelReply(completion, config.baseURL);
      if (input.toolCalling === 'react') reply = reactReply(reply.content ?? '', registry, reply, toolNames.length === 0);
      if (schema && reply.toolCalls.length === 0) {
        const checked = checkAnswer(schema, reply.content);
        if (checked.ok) reply.output = checked.value;
        else reply.outputError = checked.error;
      }
      if (provided.length > 0) reply.providedTools = provided;
      // Later attempts void the text earlier ones streamed (the workflow announces a model_retry).
      if (info.attempt > 1) reply.attempt = info.attempt;
      checkReplySize(reply);
      return reply;
    } catch (err) {
      // However this attempt fails, the next one starts from the time spent so far.
      recordForNextAttempt({ modelMs: budget.spent() });
      throw err;
    } finally {
      stop();
    }
  }
}

/**
 * Streams one completion, handing each piece of text to `onText`, and returns the whole
 * completion. A server that answers a streaming request with a plain JSON completion (some
 * cannot stream) is read as such: its text then reaches subscribers in one piece, from the reply.
 */
async function streamCompletion(
  openai: OpenAI,
  request: ChatCompletionCreateParamsNonStreaming,
  { signal, timeout, deadlineMs }: RequestOptions,
  onText: (text: string) => void,
): Promise<ChatCompletion> {
  const controller = new AbortController();
  const abort = () => controller.abort();
  signal.addEventListener('abort', abort);
  // The request timeout covers the wait for the response; what is left of the budget, the whole stream.
  const deadline = setTimeout(abort, deadlineMs);
  try {
    const response = await openai.chat.completions
      .create({ ...request, stream: true, stream_options: { include_usage: true } }, { signal: controller.signal, timeout })
      .asResponse();
    if (!(response.headers.get('content-type') ?? '').includes('text/event-stream')) return (await response.json()) as ChatCompletion;
    const completion = new CompletionAccumulator();
    for await (const chunk of Stream.fromSSEResponse<ChatCompletionChunk>(response, controller)) {
      const text = completion.add(chunk);
      if (text) onText(text);
    }
    return completion.completion();
  } catch (err) {
    // Our own deadline, not the activity's cancellation: a timeout, as the client reports its own.
    if (controller.signal.aborted && !signal.aborted) throw new APIConnectionTimeoutError();
    throw err;
  } finally {
    clearTimeout(deadline);
    signal.removeEventListener('abort', abort);
  }
}

/** How long one request may take: `timeout` until the response starts, `deadlineMs` in all (a stream's end). */
interface RequestOptions {
  signal: AbortSignal;
  timeout: number;
  deadlineMs: number;
}

/** The `openai` client's options of a request that is not streamed: its timeout covers the whole response. */
function clientOptions({ signal, timeout }: RequestOptions): { signal: AbortSignal; timeout: number } {
  return { signal, timeout };
}

/**
 * The largest reply a model call returns: Temporal refuses a payload over 2 MiB (`limit.blobSize.error`,
 * also on Temporal Cloud), and the reply is this activity's result. A little is kept back for the
 * payload's metadata and encryption. Until large payloads go by reference, a reply over it fails at
 * once: every attempt would ask the model again and fail the same way.
 */
export const MAX_REPLY_BYTES = 2 * 1024 * 1024 - 32 * 1024;

/** Fails a reply too large to record (content, tool-call arguments or output), naming its size. */
function checkReplySize(reply: ModelReply): void {
  const bytes = Buffer.byteLength(JSON.stringify(reply));
  if (bytes <= MAX_REPLY_BYTES) return;
  const mb = (n: number) => `${(n / (1024 * 1024)).toFixed(1)} MB`;
  throw ApplicationFailure.create({
    message:
      `the model's reply is ${mb(bytes)}, more than a Temporal payload may hold (${mb(MAX_REPLY_BYTES)}), so it cannot be recorded; ` +
      'ask for less (maxTokens, or the instructions), or have a tool write long content elsewhere',
    type: 'ModelCall.ReplyTooLarge',
    nonRetryable: true,
  });
}

/**
 * The failure of a model call whose budget is spent: not retryable, whatever the last attempt's
 * failure was, which it names.
 */
function modelCallTimedOut(budget: ModelTimeBudget, attempt: number, last?: unknown): ApplicationFailure {
  const lastText = last === undefined ? '' : `; last failure: ${last instanceof Error ? last.message : String(last)}`;
  return ApplicationFailure.create({
    message: `the model call ran out of time: ${Math.round(budget.spent() / 1000)} s waiting for the model over ${attempt} attempt${attempt === 1 ? '' : 's'}, its modelCallTimeout being ${Math.round(budget.budgetMs / 1000)} s${lastText}`,
    type: 'ModelCall.Timeout',
    nonRetryable: true,
    cause: last instanceof Error ? last : undefined,
  });
}

/** Sends text batches to the model call's own workflow run, over the given client or the worker's. */
function textSender(client: Client | undefined, input: ModelCallInput): (batch: TextBatch) => Promise<void> {
  const handle = (client ?? Context.current().client).workflow.getHandle(input.workflowId, input.runId);
  return (batch) => handle.signal(textBatchSignal, batch);
}

/** A 400 that names streaming: the endpoint cannot stream (or does not know `stream_options`). */
function refusedStreaming(failure: unknown): boolean {
  return failure instanceof ApplicationFailure && failure.type === 'ModelCall.BadRequest' && /stream/i.test(failure.message);
}

/**
 * The worker's conversation cache, which reads what its workflows did not hand over with the
 * `messages` query: over `client`, or the worker's own client (over its connection), which
 * needs no configuration.
 */
export function createConversationLoader(client?: Client): ConversationLoader {
  return new ConversationLoader((ref, offset, limit) => (client ?? Context.current().client).workflow.getHandle(ref.workflowId, ref.runId).query(messagesQuery, { offset, limit }));
}

/**
 * Asks the worker's tool provider which tools to add to this call. Its answer is checked against
 * the registry: a provider naming a tool nobody registered is a deployment bug, reported as such
 * rather than as a confusing "unknown tool" the LLM would see.
 */
async function provideTools(provider: ToolProvider, registry: ToolRegistry, input: ModelCallInput, messages: ChatMessage[]): Promise<ToolInfo[]> {
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  let names: readonly string[] | null | undefined;
  try {
    names = await provider({ conversationId: input.workflowId, userMessage: lastUser?.content ?? '', messages });
  } catch (err) {
    throw ApplicationFailure.create({ message: `the tool provider failed: ${err instanceof Error ? err.message : String(err)}`, type: 'ToolProvider.Failed', cause: err instanceof Error ? err : undefined });
  }
  const extra = [...new Set(names ?? [])].filter((n) => !input.toolNames.includes(n));
  const unknown = registry.unknown(extra);
  if (unknown.length > 0) {
    throw ApplicationFailure.nonRetryable(`the tool provider named unregistered tools: ${unknown.join(', ')}; register them on the worker (e.g. with { dynamic: true })`, 'ToolProvider.UnknownTool');
  }
  return extra.map((n) => registry.info(n));
}

/** The messages with a system instruction just before the last one (the question, or ReAct's prompt). */
function withInstruction(messages: ChatCompletionMessageParam[], text: string): ChatCompletionMessageParam[] {
  return [...messages.slice(0, -1), { role: 'system', content: text }, ...messages.slice(-1)];
}

/** A 400 that names `response_format`: the endpoint cannot do structured outputs. */
function refusedResponseFormat(failure: unknown): boolean {
  return failure instanceof ApplicationFailure && failure.type === 'ModelCall.BadRequest' && /response_format|json_schema|structured/i.test(failure.message);
}

/**
 * Reads the reply defensively: OpenAI-compatible servers differ, and a malformed reply must be a
 * clear, retryable failure (the next sample may be fine), never a crash in the workflow.
 */
export function toModelReply(completion: ChatCompletion, baseURL: string): ModelReply {
  const choice = completion?.choices?.[0];
  const message = choice?.message;
  if (!message) {
    throw ApplicationFailure.retryable(`the model server at ${baseURL} returned no message: ${JSON.stringify(completion).slice(0, 300)}`, 'ModelCall.InvalidResponse');
  }
  const toolCalls: ToolCall[] = [];
  for (const c of message.tool_calls ?? []) {
    if (c.type !== 'function' || !c.function?.name) continue;
    toolCalls.push({ id: c.id ?? '', type: 'function', function: { name: c.function.name, arguments: c.function.arguments ?? '' } });
  }
  // The legacy format: one call, no id (the core derives one).
  const fc = message.function_call;
  if (toolCalls.length === 0 && fc?.name) toolCalls.push({ id: '', type: 'function', function: { name: fc.name, arguments: fc.arguments ?? '' } });
  const content = typeof message.content === 'string' ? message.content : null;
  if (content === null && toolCalls.length === 0 && choice.finish_reason !== 'stop' && choice.finish_reason !== 'length') {
    throw ApplicationFailure.retryable(`the model server at ${baseURL} returned neither text nor tool calls (finish_reason ${choice.finish_reason})`, 'ModelCall.InvalidResponse');
  }
  const u = completion.usage;
  return {
    content,
    toolCalls,
    finishReason: choice.finish_reason ?? null,
    usage: { promptTokens: u?.prompt_tokens ?? 0, completionTokens: u?.completion_tokens ?? 0, totalTokens: u?.total_tokens ?? 0 },
  };
}
