import OpenAI from 'openai';
import type { EmbeddingModelV3, EmbeddingModelV4 } from '@ai-sdk/provider';
import type { Embedder } from '../memory-store/memory-store';

/**
 * Embeddings for recall by meaning: any provider's, through one interface. OpenAI's endpoint and
 * every OpenAI-compatible one (Ollama, vLLM, Mistral, Together, the test kit's scripted server)
 * on the official SDK, from `AGENT_EMBEDDING_MODEL`; any other provider's as an AI SDK embedding
 * model (`embeddingModel` of `@ai-sdk/google`, `@ai-sdk/cohere`, ...), given in code.
 */

/** An OpenAI-compatible endpoint's embeddings model. */
export function openAIEmbedder(options: { model: string; baseURL: string; apiKey: string }): Embedder {
  // Inside an activity: Temporal retries the activity, so the client does not.
  const openai = new OpenAI({ baseURL: options.baseURL, apiKey: options.apiKey, maxRetries: 0, timeout: 30_000 });
  return {
    model: options.model,
    async embed(texts) {
      if (!texts.length) return [];
      const answer = await openai.embeddings.create({ model: options.model, input: texts });
      return [...answer.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
    },
  };
}

/** An AI SDK embedding model (the `@ai-sdk/provider` spec, v3 or v4) as the store's embedder. */
export function aiSdkEmbedder(model: EmbeddingModelV3 | EmbeddingModelV4): Embedder {
  return {
    model: `${model.provider}:${model.modelId}`,
    async embed(texts) {
      if (!texts.length) return [];
      return (await model.doEmbed({ values: texts })).embeddings;
    },
  };
}

/** Whether `value` is an AI SDK embedding model (rather than an {@link Embedder}). */
export function isAiSdkEmbeddingModel(value: unknown): value is EmbeddingModelV3 | EmbeddingModelV4 {
  return typeof (value as EmbeddingModelV3)?.doEmbed === 'function' && 'specificationVersion' in (value as object);
}
