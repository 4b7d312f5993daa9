import type { ChatMessage } from '../core/messages/chat-message';
import type { JsonSchemaObject, ModelSettings, ToolCallingMode } from '../core/state/run-options';
import type { ModelReply } from '../core/messages/model-reply';
import type { JsonSchema } from './json-schema';

/**
 * The seam between model calls and model providers: the model-call activity and the low-level
 * API talk to a `ChatModel`, and an adapter per provider speaks its wire format, one folder each
 * (`openai/` for Chat Completions and the Responses API, `anthropic/`, `ai-sdk/` for any AI SDK
 * provider); `create-chat-model.ts` routes each call to its adapter. No Temporal here: failures
 * are `ModelCallError`s (model-error.ts), turned into Temporal failures by the activity.
 */

/**
 * A tool as a model is offered it: provider-neutral (each adapter writes it in its own format).
 *
 * @experimental The provider seam grows with the adapters for other providers.
 */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of its arguments (an object). */
  parameters: JsonSchema;
  /** The schema fits providers' strict modes (every property required, no additional ones). */
  strict?: boolean;
}

/**
 * What a model call asks for besides the messages.
 *
 * @experimental The provider seam grows with the adapters for other providers.
 */
export interface GenerateOptions {
  tools?: readonly ToolSpec[];
  /** Model name, temperature, maximum tokens; the adapter's defaults fill what is unset. */
  settings?: ModelSettings;
  /** How tools are offered: the provider's tool calling (default), the legacy functions API, or a ReAct prompt. */
  toolCalling?: ToolCallingMode;
  /**
   * Structured output: ask for a final answer that is JSON under this schema (the caller checks
   * the answer; an adapter whose endpoint cannot be asked this way asks in the prompt instead).
   */
  output?: JsonSchemaObject;
  /** Receives the answer's text as the model writes it; without it the reply comes in one piece. */
  onText?: (text: string) => void;
  signal?: AbortSignal;
  /** How long to wait for the response to start (default: the adapter's request timeout). */
  timeoutMs?: number;
  /** How long the whole call may take, a streamed answer's end included (default: no more than `timeoutMs` allows). */
  deadlineMs?: number;
  /** Where the call goes, resolved already (see {@link ChatModel.route}); else `settings.model`'s route, else the default. */
  route?: ModelRoute;
}

/**
 * Where one model call goes, resolved once from the name a run gives: the model-call activity
 * asks for it first and goes by it for everything that depends on the model (prices, tokenizer,
 * images, spans, the request).
 *
 * @experimental The provider seam grows with the adapters for other providers.
 */
export interface ModelRoute {
  /** The model as runs name it (`smart`, `anthropic:claude-sonnet-5`): usage and fallbacks count under it. */
  name: string;
  /** The provider's own model id (`claude-sonnet-5`): the request, prices, tokenizers and image support go by it. */
  model: string;
  /** `openai`, `openai-responses`, `anthropic`, or `ai-sdk:<provider>`. */
  provider: string;
  /** The endpoint (for an AI SDK model, its provider's name). */
  baseURL: string;
}

/**
 * A model behind its provider's API. `generate` sends one request and returns the assistant's
 * reply in the core's terms: text and/or tool calls, with usage. Failures are thrown as
 * `ModelCallError`s (model-error.ts), classified once by the adapter (`auth`, `rate_limited`, ...; `retryable`
 * says whether another attempt could succeed). There are no retries here: in a workflow they are
 * Temporal's (the model-call activity turns the error into a Temporal failure), outside one they
 * are your loop's.
 *
 * @experimental The provider seam grows with the adapters for other providers (messages as
 * content parts, reasoning).
 */
export interface ChatModel {
  /** Where calls of a model go (by the name runs give it; absent: the default model). */
  route(name?: string): ModelRoute;
  generate(messages: readonly ChatMessage[], options?: GenerateOptions): Promise<ModelReply>;
}
