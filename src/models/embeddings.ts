import OpenAI from 'openai';
import type { EmbeddingModelV3, EmbeddingModelV4 } from '@ai-sdk/provider';
import type { Embedder } from '../memory-store/memory-store';
import type { ModelRoute } from './chat-model';
import { currentModelScope } from './model-scope';

/**
 * Embeddings for recall by meaning: any provider's, through one interface. OpenAI's endpoint and
 * every OpenAI-compatible one (Ollama, vLLM, Mistral, Together, the test kit's scripted server)
 * on the official SDK, from `AGENT_EMBEDDING_MODEL`; any other provider's as an AI SDK embedding
 * model (`embeddingModel` of `@ai-sdk/google`, `@ai-sdk/cohere`, ...), given in code.
 */

/** An embedder that also says what each request used, and where it goes (for the model gate). */
interface MeteredEmbedder extends Embedder {
  /** The vectors and the input tokens the provider counted, when it says. */
  embedMetered(texts: string[]): Promise<{ embeddings: number[][]; tokens?: number }>;
  /** Where its requests go: its provider and endpoint, for prices and rate limits. */
  route: ModelRoute;
}

/** An OpenAI-compatible endpoint's embeddings model. */
export function openAIEmbedder(options: { model: string; baseURL: string; apiKey: string }): Embedder {
  // Inside an activity: Temporal retries the activity, so the client does not.
  const openai = new OpenAI({ baseURL: options.baseURL, apiKey: options.apiKey, maxRetries: 0, timeout: 30_000 });
  const embedder: MeteredEmbedder = {
    model: options.model,
    route: { name: options.model, model: options.model, provider: 'openai', baseURL: options.baseURL },
    async embedMetered(texts) {
      if (!texts.length) return { embeddings: [] };
      const answer = await openai.embeddings.create({ model: options.model, input: texts });
      return {
        embeddings: [...answer.data].sort((a, b) => a.index - b.index).map((d) => d.embedding),
        ...(answer.usage?.prompt_tokens !== undefined ? { tokens: answer.usage.prompt_tokens } : {}),
      };
    },
    async embed(texts) {
      return (await embedder.embedMetered(texts)).embeddings;
    },
  };
  return embedder;
}

/** An AI SDK embedding model (the `@ai-sdk/provider` spec, v3 or v4) as the store's embedder. */
export function aiSdkEmbedder(model: EmbeddingModelV3 | EmbeddingModelV4): Embedder {
  const name = `${model.provider}:${model.modelId}`;
  const embedder: MeteredEmbedder = {
    model: name,
    route: { name, model: model.modelId, provider: `ai-sdk:${model.provider}`, baseURL: model.provider },
    async embedMetered(texts) {
      if (!texts.length) return { embeddings: [] };
      const answer = await model.doEmbed({ values: texts });
      return { embeddings: answer.embeddings, ...(answer.usage ? { tokens: answer.usage.tokens } : {}) };
    },
    async embed(texts) {
      return (await embedder.embedMetered(texts)).embeddings;
    },
  };
  return embedder;
}

/**
 * The embedder as the memory store uses it: inside an activity's model scope (a recall, an
 * extraction, a memory tool of a tenant's run), each request goes through the worker's model
 * gate, reserved in the tenant's budget, waiting its turn at the model's rate governor, priced
 * and charged by its input tokens; outside one (a script's own store), straight to the model.
 */
export function governedEmbedder(embedder: Embedder): Embedder {
  const metered = embedder as Partial<MeteredEmbedder>;
  // A user's own embedder says no endpoint: its requests are governed and charged by the model's name.
  const route: ModelRoute = metered.route ?? {
    name: embedder.model,
    model: embedder.model,
    provider: 'custom',
    baseURL: 'custom',
  };
  const ask = async (texts: string[]) =>
    metered.embedMetered ? metered.embedMetered(texts) : { embeddings: await embedder.embed(texts) };
  return {
    model: embedder.model,
    async embed(texts) {
      const scope = currentModelScope();
      if (!scope || !texts.length) return embedder.embed(texts);
      return scope.gate.embed({ route, texts, tenant: scope.tenant, signal: scope.signal }, () => ask(texts));
    },
  };
}

/** Whether `value` is an AI SDK embedding model (rather than an {@link Embedder}). */
export function isAiSdkEmbeddingModel(value: unknown): value is EmbeddingModelV3 | EmbeddingModelV4 {
  return typeof (value as EmbeddingModelV3)?.doEmbed === 'function' && 'specificationVersion' in (value as object);
}
