// Types only (a devDependency): @ai-sdk/provider is ESM-only, and this package loads as CommonJS.
import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { AiSdkLanguageModel } from './ai-sdk-language-model';
import type { ChatModel, GenerateOptions } from '../chat-model';
import { classifyModelError, ModelCallError, type ModelEndpoint, type ProviderErrors } from '../model-error';
import { fromAiSdkResult, toAiSdkPrompt, toAiSdkTools, type AiSdkCallOptions } from './ai-sdk-format';

/** The call failed with an HTTP status: `APICallError` in the classifier's terms. */
class AiSdkHttpError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly headers: Headers,
  ) {
    super(message);
  }
}
class AiSdkConnectionError extends Error {}
class NeverThrown extends Error {}

const AI_SDK_ERRORS = (provider: string): ProviderErrors => ({
  APIError: AiSdkHttpError,
  APIConnectionError: AiSdkConnectionError,
  APIConnectionTimeoutError: NeverThrown,
  APIUserAbortError: NeverThrown,
  keyVar: `the API key of the ${provider} provider`,
  baseURLVar: `the ${provider} provider's base URL`,
  notFound: (e) => `has no model "${e.model}"; check the model given to the plugin`,
});

/**
 * The AI SDK adapter: one for every provider package that implements the language-model
 * specification. It depends on the specification's types (`@ai-sdk/provider`), not on the `ai`
 * package: the workflow, not `generateText`, runs the loop. Reasoning parts keep their provider
 * metadata (where providers keep signatures) and go back with it; text streams through `doStream`.
 */
export function createAiSdkChatModel(model: AiSdkLanguageModel): ChatModel {
  return {
    // The model is the one it was made for, whatever the name a run gives it.
    route: (name = model.modelId) => ({
      name,
      model: model.modelId,
      provider: `ai-sdk:${model.provider}`,
      baseURL: model.provider,
    }),
    async generate(messages, options = {}) {
      if (options.toolCalling && options.toolCalling !== 'tools') {
        throw new ModelCallError(
          'unsupported',
          `toolCalling "${options.toolCalling}" is for OpenAI-compatible models without tool calling; AI SDK models call tools themselves: use "tools"`,
        );
      }
      const call = aiSdkCallOptions(messages, options, String(model.specificationVersion));
      const where: ModelEndpoint = { baseURL: `the ${model.provider} provider`, model: model.modelId };
      try {
        // The specification's versions share these shapes; the cast is where they meet.
        const m = model as unknown as LanguageModelV4;
        if (!options.onText) return fromAiSdkResult(await m.doGenerate(call as never));
        return await streamed(m, call, options.onText);
      } catch (err) {
        throw classifyModelError(asClassifiable(err), where, AI_SDK_ERRORS(model.provider));
      }
    },
  };
}

/** The call options: the prompt, tools, limits, structured output, reasoning effort, the abort signal. */
export function aiSdkCallOptions(
  messages: Parameters<ChatModel['generate']>[0],
  options: GenerateOptions,
  /** The model's `specificationVersion` (`v2`, `v3`, `v4`): images are written its way. */
  version = 'v4',
): AiSdkCallOptions {
  const settings = options.settings ?? {};
  const tools = toAiSdkTools(options.tools ?? []);
  return {
    prompt: toAiSdkPrompt(messages, version),
    ...(tools.length ? { tools } : {}),
    ...(settings.maxTokens ? { maxOutputTokens: settings.maxTokens } : {}),
    temperature: settings.temperature ?? 0,
    ...(options.output ? { responseFormat: { type: 'json', schema: options.output as never, name: 'output' } } : {}),
    ...(settings.reasoningEffort ? { reasoning: settings.reasoningEffort } : {}),
    ...(options.signal ? { abortSignal: options.signal } : {}),
  };
}

/** Streams with `doStream`, handing text to `onText`, and assembles the same result `doGenerate` gives. */
async function streamed(model: LanguageModelV4, call: AiSdkCallOptions, onText: (text: string) => void) {
  const { stream } = await model.doStream(call as never);
  const content: Array<Record<string, unknown>> = [];
  const reasoning = new Map<string, { text: string; providerMetadata?: unknown }>();
  let text = '';
  let finishReason: unknown;
  let usage: unknown;
  const reader = stream.getReader();
  for (;;) {
    const { done, value: part } = await reader.read();
    if (done) break;
    if (part.type === 'text-delta') {
      text += part.delta;
      onText(part.delta);
    } else if (part.type === 'reasoning-start')
      reasoning.set(part.id, { text: '', providerMetadata: part.providerMetadata });
    else if (part.type === 'reasoning-delta') {
      const r = reasoning.get(part.id) ?? { text: '' };
      r.text += part.delta;
      if (part.providerMetadata) r.providerMetadata = part.providerMetadata;
      reasoning.set(part.id, r);
    } else if (part.type === 'reasoning-end') {
      const r = reasoning.get(part.id) ?? { text: '' };
      content.push({ type: 'reasoning', text: r.text, providerMetadata: part.providerMetadata ?? r.providerMetadata });
      reasoning.delete(part.id);
    } else if (part.type === 'tool-call') content.push(part);
    else if (part.type === 'finish') {
      finishReason = part.finishReason;
      usage = part.usage;
    } else if (part.type === 'error') throw part.error;
  }
  if (text) content.push({ type: 'text', text });
  return fromAiSdkResult({ content: content as never, finishReason, usage });
}

/** The parts of the specification's `APICallError` read here. */
interface ApiCallErrorLike extends Error {
  statusCode?: number;
  responseHeaders?: Record<string, string>;
}

/**
 * Whether `err` is the specification's `APICallError`, by the marker its `isInstance` checks
 * (a symbol of the global registry, so it holds across copies of the package).
 */
function isApiCallError(err: unknown): err is ApiCallErrorLike {
  return (
    typeof err === 'object' &&
    err !== null &&
    ((err as Record<symbol, unknown>)[Symbol.for('vercel.ai.error.AI_APICallError')] === true ||
      (err as Error).name === 'AI_APICallError')
  );
}

/** `APICallError`s in the classifier's terms: a status and headers, or no status (the connection failed). */
function asClassifiable(err: unknown): unknown {
  if (!isApiCallError(err)) return err;
  if (err.statusCode === undefined) return Object.assign(new AiSdkConnectionError(err.message), { cause: err.cause });
  return new AiSdkHttpError(err.message, err.statusCode, new Headers(err.responseHeaders ?? {}));
}
