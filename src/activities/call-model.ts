import { Context, log } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import type { TextBatch } from '../core/events/agent-events';
import type { ChatMessage } from '../core/messages/chat-message';
import type { ModelReply } from '../core/messages/model-reply';
import type { ToolInfo } from '../core/messages/tool-info';
import { DEFAULT_MODEL_CALL_TIMEOUT_MS } from '../core/run/run-input';
import type { McpToolSource } from '../tools/mcp-client/mcp-tool-source';
import type { ToolRegistry } from '../tools/registry';
import type { ToolProvider } from '../tools/tool-provider';
import { messagesQuery, textBatchSignal } from '../contracts/definitions';
import type { ModelCallInput } from '../contracts/activity-interface';
import type { ChatModel } from '../models/chat-model';
import { modelCallFailure } from './model-failure';
import { modelRequest } from './model-request';
import type { ModelConfig } from '../models/model-config';
import { createModelCatalogue, createModelPricing, CATALOGUE_NAME, type ModelPricing } from '../models/catalogue';
import { ConversationLoader } from './conversation-loader';
import { ledgerOf, ModelTimeBudget } from './attempt-ledger';
import { keepHeartbeating, recordForNextAttempt } from './heartbeat';
import { checkAnswer, type OutputSchemas } from './structured-output';
import { liveText } from '../contracts/live-text';
import { textCounterFor } from '../models/tokenizer';
import { baseBatchInterval, TextPublisher, type StreamingOptions } from './text-publisher';
import { turnAbortSignal } from './turn-abort';
import type { BlobStore } from '../storage/blob-store';
import { ModelGate } from './model-gate';

/**
 * Builds the model-call activity. It receives a reference to the conversation, reads the messages
 * from the worker's cache (or, on a miss, from the workflow with a query), picks the tools and the
 * output schema, and asks the model through its provider's adapter (a `ChatModel`). It returns
 * only the new assistant message, so the event history records O(new content) per step.
 *
 * What is the activity's own, whatever the provider: the conversation by reference, the model-time
 * budget across attempts, heartbeats, streaming the text to the workflow, checking a structured
 * answer, and refusing a reply too large to record where no payload store takes it.
 */
export function createCallModel(deps: {
  client?: Client;
  registry: ToolRegistry;
  /** Whether a model is configured at all, and its defaults. */
  config: ModelConfig;
  /** The provider's adapter. */
  model: ChatModel;
  /** The seam every model request goes through (budgets, rate limits, prices, traces); default: prices only. */
  gate?: ModelGate;
  toolProvider?: ToolProvider;
  outputs: OutputSchemas;
  /** Where the conversations are read from; the plugin shares it with the workflows' sink. */
  conversations?: ConversationLoader;
  streaming?: StreamingOptions;
  mcp?: McpToolSource;
  /** Where the images of conversations are read from (the worker's blob store). */
  blobs: BlobStore;
  /**
   * Whether the worker's payloads over its threshold go to a payload store (Temporal's External
   * Storage): a reply of any size is then recorded by reference, like a tool output. Without one,
   * a reply over {@link MAX_REPLY_BYTES} fails at once.
   */
  payloadStore?: boolean;
}) {
  const { registry, config, toolProvider, outputs, blobs } = deps;
  const gate = deps.gate ?? new ModelGate(defaultPricing(config));
  const { pricing } = gate;
  const conversations = deps.conversations ?? createConversationLoader(deps.client);
  // The tokenizer's ranks take about 150 ms to load: loaded as the worker starts, not in the first
  // chat's model call (its first token would wait for them).
  if (config.configured) setTimeout(() => textCounterFor(config.model), 0).unref();

  return async function callModel(input: ModelCallInput): Promise<ModelReply> {
    // Where this call goes, resolved once: everything that depends on the model goes by it.
    const route = deps.model.route(input.settings?.model);
    if (!config.configured) {
      throw ApplicationFailure.nonRetryable(
        'no LLM is configured on this worker: set OPENAI_API_KEY (OpenAI), OPENAI_BASE_URL (any OpenAI-compatible server, e.g. http://localhost:11434/v1 for Ollama) or ANTHROPIC_API_KEY (Claude, with AGENT_MODEL=anthropic:<model>), and AGENT_MODEL',
        'ModelCall.NotConfigured',
      );
    }
    const { cancellationSignal, info } = Context.current();
    // Stopped at once when its turn ends in this process, not at the next heartbeat (see turn-abort.ts).
    const turn = turnAbortSignal(input.workflowId, cancellationSignal);
    const { signal } = turn;
    // The model-call budget is time spent waiting for the model, carried from attempt to attempt.
    const budget = new ModelTimeBudget(
      input.timeoutMs ?? DEFAULT_MODEL_CALL_TIMEOUT_MS,
      ledgerOf(info.heartbeatDetails).modelMs ?? 0,
    );
    if (budget.exhausted()) throw modelCallTimedOut(budget, info.attempt);
    const stop = keepHeartbeating(undefined, () => ({ modelMs: budget.spent() }));
    try {
      const { messages, sent, counted } = await modelRequest(input, route, { conversations, blobs });
      if (input.needsCost && !pricing.catalogue.hasPrice(route))
        throw ApplicationFailure.nonRetryable(
          `the run has a cost budget, but the model ${route.name} has no price, so its calls cannot be counted: the model catalogue (${CATALOGUE_NAME}) does not know ${route.model}; add its price to the worker's prices (AgentsPlugin's "prices", USD per million tokens), or give the run a token budget instead`,
          'ModelCall.NoPrice',
        );
      // No tools means the final `generate` pass: the provider must not add any either.
      const provided =
        toolProvider && input.toolNames.length > 0 ? await provideTools(toolProvider, registry, input, messages) : [];
      // MCP tools are described from their server's listing: this worker may not have listed it yet.
      if (deps.mcp && registry.unknown(input.toolNames).length > 0) await deps.mcp.ensureTools(input.toolNames);
      // A tool its MCP server no longer offers is not offered to the LLM either.
      const toolNames = [...input.toolNames.filter((n) => registry.has(n)), ...provided.map((t) => t.name)];
      const schema = outputs.for(input);
      const publisher = publisherOf(input, info.attempt, deps.client, deps.streaming);
      let reply: ModelReply;
      let asked = false;
      try {
        // Through the gate: the tenant's reservation and the model's turn first, the charge after.
        reply = await gate.call(
          {
            route,
            messages: sent,
            maxTokens: input.settings?.maxTokens,
            tenant: input.tenant,
            settings: input.settings,
            signal,
            agent: input.agent,
          },
          async () => {
            asked = true;
            budget.start();
            try {
              const answer = await deps.model.generate(sent, {
                route,
                tools: registry.specs(toolNames),
                settings: input.settings,
                toolCalling: input.toolCalling,
                output: schema?.json,
                onText: publisher && ((text) => publisher.push(text)),
                signal,
                // Each request may take what is left of the budget, and no longer than a request may.
                timeoutMs: Math.min(config.requestTimeoutMs, budget.remaining()),
                deadlineMs: budget.remaining(),
              });
              await publisher?.close();
              return answer;
            } finally {
              budget.stop();
            }
          },
        );
      } catch (thrown) {
        // Refused before the model was asked (the tenant's budget, the model's turn): nothing to void.
        if (!asked) {
          await publisher?.close();
          throw thrown;
        }
        const caught = modelCallFailure(thrown, { sent, route });
        // With no time left there is no next attempt, whatever the failure.
        const err =
          budget.exhausted() && !(caught instanceof ApplicationFailure && caught.nonRetryable) && !signal.aborted
            ? modelCallTimedOut(budget, info.attempt, caught)
            : overloadedWithFallback(caught, input.settings);
        // Temporal may retry this attempt: the workflow tells subscribers why when the next one speaks.
        if (publisher && !(err instanceof ApplicationFailure && err.nonRetryable) && !signal.aborted)
          await publisher.fail(err instanceof Error ? err.message : String(err));
        else await publisher?.close();
        throw err;
      }
      if (schema && reply.toolCalls.length === 0) {
        const checked = checkAnswer(schema, reply.content);
        if (checked.ok) reply.output = checked.value;
        else reply.outputError = checked.error;
      }
      if (provided.length > 0) reply.providedTools = provided;
      if (counted?.length) reply.counted = counted;
      // Later attempts void the text earlier ones streamed (the workflow announces a model_retry).
      if (info.attempt > 1) reply.attempt = info.attempt;
      if (!deps.payloadStore) checkReplySize(reply);
      return reply;
    } catch (err) {
      // However this attempt fails, the next one starts from the time spent so far.
      recordForNextAttempt({ modelMs: budget.spent() });
      // Its turn was stopped: reported as cancelled (the workflow asked for it), never retried.
      if (turn.turnEnded()) throw new CancelledFailure('the turn was stopped while the model wrote');
      throw modelCallFailure(err);
    } finally {
      stop();
      turn.done();
    }
  };
}

/**
 * The largest reply a model call returns on a worker without a payload store: Temporal refuses a
 * payload over 2 MiB (`limit.blobSize.error`, also on Temporal Cloud), and the reply is this
 * activity's result. A little is kept back for the payload's metadata and encryption. A reply over
 * it fails at once: every attempt would ask the model again and fail the same way. With a payload
 * store (the default: `AGENT_PAYLOAD_STORE`, else `.temporal/payloads`) replies of any size go by
 * reference, as tool outputs do.
 */
export const MAX_REPLY_BYTES = 2 * 1024 * 1024 - 32 * 1024;

/** Fails a reply too large to record (content, tool-call arguments or output), naming its size. */
function checkReplySize(reply: ModelReply): void {
  const bytes = Buffer.byteLength(JSON.stringify(reply));
  if (bytes <= MAX_REPLY_BYTES) return;
  const mb = (n: number) => `${(n / (1024 * 1024)).toFixed(1)} MB`;
  throw ApplicationFailure.create({
    message:
      `the model's reply is ${mb(bytes)}, more than a Temporal payload may hold (${mb(MAX_REPLY_BYTES)}), and this worker has no payload store to record it by reference; ` +
      "give the worker one (AGENT_PAYLOAD_STORE, or leave AgentsPlugin's payloadStorage on), or ask for less (maxTokens, or the instructions)",
    type: 'ModelCall.ReplyTooLarge',
    nonRetryable: true,
  });
}

/**
 * An overloaded provider with another model to fall back on: no more attempts here, so the
 * workflow moves to the next model at once instead of after eight.
 */
function overloadedWithFallback(err: unknown, settings: ModelCallInput['settings']): unknown {
  if (!(err instanceof ApplicationFailure) || err.type !== 'ModelCall.Overloaded' || err.nonRetryable) return err;
  const fallbacks = settings?.fallbackModels ?? [];
  const at = settings?.model === undefined ? -1 : fallbacks.indexOf(settings.model);
  if (at >= fallbacks.length - 1) return err; // the last model: Temporal keeps trying it
  return ApplicationFailure.create({ message: err.message, type: err.type, nonRetryable: true, cause: err });
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

/** What streams the call's text to its workflow and this process's readers, when the run streams and the worker does. */
function publisherOf(
  input: ModelCallInput,
  attempt: number,
  client: Client | undefined,
  streaming: StreamingOptions | undefined,
): TextPublisher | undefined {
  if (!input.stream || streaming?.enabled === false) return undefined;
  const { call } = input.stream;
  const live = liveTextOf(input.workflowId, call, attempt);
  const interval = () => baseBatchInterval(streaming, liveText.reachesReaders(input.workflowId));
  return new TextPublisher(textSender(client, input), call, attempt, interval, live);
}

/** Sends text batches to the model call's own workflow run, over the given client or the worker's. */
function textSender(client: Client | undefined, input: ModelCallInput): (batch: TextBatch) => Promise<void> {
  const handle = (client ?? Context.current().client).workflow.getHandle(input.workflowId, input.runId);
  return (batch) => handle.signal(textBatchSignal, batch);
}

/** The live path of a call's text, when a reader in this process follows its workflow (see `contracts/live-text.ts`). */
function liveTextOf(workflowId: string, call: number, attempt: number): (text: string, at: number) => void {
  return (text, at) => {
    if (liveText.listening(workflowId)) liveText.publish({ kind: 'text', workflowId, call, attempt, at, text });
  };
}

/**
 * The worker's conversation cache, which reads what its workflows did not hand over with the
 * `messages` query: over `client`, or the worker's own client (over its connection), which
 * needs no configuration.
 */
export function createConversationLoader(client?: Client): ConversationLoader {
  return new ConversationLoader((ref, offset, limit) =>
    (client ?? Context.current().client).workflow
      .getHandle(ref.workflowId, ref.runId)
      .query(messagesQuery, { offset, limit }),
  );
}

/**
 * Asks the worker's tool provider which tools to add to this call. Its answer is checked against
 * the registry: a provider naming a tool nobody registered is a deployment bug, reported as such
 * rather than as a confusing "unknown tool" the LLM would see.
 */
async function provideTools(
  provider: ToolProvider,
  registry: ToolRegistry,
  input: ModelCallInput,
  messages: ChatMessage[],
): Promise<ToolInfo[]> {
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  let names: readonly string[] | null | undefined;
  try {
    names = await provider({ conversationId: input.workflowId, userMessage: lastUser?.content ?? '', messages });
  } catch (err) {
    throw ApplicationFailure.create({
      message: `the tool provider failed: ${err instanceof Error ? err.message : String(err)}`,
      type: 'ToolProvider.Failed',
      cause: err instanceof Error ? err : undefined,
    });
  }
  const extra = [...new Set(names ?? [])].filter((n) => !input.toolNames.includes(n));
  const unknown = registry.unknown(extra);
  if (unknown.length > 0) {
    throw ApplicationFailure.nonRetryable(
      `the tool provider named unregistered tools: ${unknown.join(', ')}; register them on the worker (e.g. with { dynamic: true })`,
      'ToolProvider.UnknownTool',
    );
  }
  return extra.map((n) => registry.info(n));
}

/** The catalogue under the config's prices and windows, warning in the activity's log. */
export function defaultPricing(config: ModelConfig): ModelPricing {
  return createModelPricing(
    createModelCatalogue({ prices: config.prices, contextWindows: config.contextWindows }),
    (message) => log.warn(message),
  );
}
