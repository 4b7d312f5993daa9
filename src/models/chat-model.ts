import type { ChatMessage, JsonSchemaObject, ModelReply, ModelSettings, ToolCallingMode } from '../core';
import type { JsonSchema } from './json-schema';

/**
 * The seam between model calls and model providers: the model-call activity and the low-level
 * API talk to a `ChatModel`, and an adapter per provider speaks its wire format (today the
 * OpenAI-compatible Chat Completions API, see `openai/chat-completions.ts`).
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
}

/**
 * A model behind its provider's API. `generate` sends one request and returns the assistant's
 * reply in the core's terms: text and/or tool calls, with usage. Failures are thrown as Temporal
 * `ApplicationFailure`s, classified once here at the edge (`ModelCall.Auth`, `ModelCall.RateLimit`,
 * ...; `nonRetryable` says whether another attempt could succeed). There are no retries here: in
 * a workflow they are Temporal's, outside one they are your loop's.
 *
 * @experimental The provider seam grows with the adapters for other providers (messages as
 * content parts, reasoning).
 */
export interface ChatModel {
  /** The provider and endpoint, for spans and messages: `{ provider: 'openai', baseURL, model }` (the default model). */
  readonly endpoint: { provider: string; baseURL: string; model: string };
  /** Where a call of `model` goes (a model that routes calls by provider answers per model). */
  endpointFor?(model: string): { provider: string; baseURL: string; model: string };
  generate(messages: readonly ChatMessage[], options?: GenerateOptions): Promise<ModelReply>;
}
