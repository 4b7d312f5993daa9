import type { EmbeddingModelV3, EmbeddingModelV4 } from '@ai-sdk/provider';
import type { ModelConfig } from '../models/model-config';
import { aiSdkEmbedder, governedEmbedder, isAiSdkEmbeddingModel, openAIEmbedder } from '../models/embeddings';
import type { Embedder, MemoryAccess, MemoryStore } from '../memory-store/memory-store';
import {
  DEFAULT_MEMORY_DIR,
  lazyMemoryStore,
  openMemoryStore,
  type MemoryLocation,
} from '../memory-store/open-memory-store';
import { resolve } from 'node:path';
import { withoutPassword } from '../memory-store/sql-client';

/** Where a worker keeps memory across conversations, and how it embeds texts (the plugin's `memory`). */
export interface MemoryOptions {
  /** A PostgreSQL server every worker shares (default: `AGENT_MEMORY_URL`). */
  url?: string;
  /** The embedded store's directory, when there is no `url` (default: `AGENT_MEMORY_DIR`, else `.durable-agents/memory`). */
  dir?: string;
  /**
   * Recall by meaning too: an {@link Embedder}, or any AI SDK embedding model
   * (`openai.textEmbeddingModel('text-embedding-3-small')`, `google.textEmbeddingModel(...)`).
   * Default: `AGENT_EMBEDDING_MODEL` on the OpenAI-compatible endpoint; none: full text only.
   */
  embeddings?: Embedder | EmbeddingModelV3 | EmbeddingModelV4;
}

/**
 * The worker's memory store from the plugin's `memory` option (a store of the user's own, or
 * where to keep one) and the environment: `AGENT_MEMORY_URL`, `AGENT_MEMORY_DIR`,
 * `AGENT_EMBEDDING_MODEL`.
 */
export function memorySettings(
  option: MemoryStore | MemoryOptions | undefined,
  env: NodeJS.ProcessEnv,
  model: ModelConfig,
): MemoryAccess {
  if (option && 'recall' in option) {
    const store = option;
    return { store: async () => store, close: () => store.close(), where: 'the plugin\'s "memory" store' };
  }
  const url = option?.url ?? (env.AGENT_MEMORY_URL?.trim() || undefined);
  if (url !== undefined && !/^postgres(ql)?:\/\//.test(url))
    throw new TypeError(
      `AGENT_MEMORY_URL must be a PostgreSQL URL (postgres://user:password@host:5432/db), got ${withoutPassword(url)}`,
    );
  const location: MemoryLocation = url
    ? { url }
    : { dir: option?.dir ?? (env.AGENT_MEMORY_DIR?.trim() || DEFAULT_MEMORY_DIR) };
  const embedder = embedderSetting(option?.embeddings, env.AGENT_EMBEDDING_MODEL, model);
  // Its requests go through the worker's model gate inside a run's activities (budgets, rate limits, prices).
  const lazy = lazyMemoryStore(() => openMemoryStore(location, embedder && governedEmbedder(embedder)));
  return {
    store: lazy.get,
    close: lazy.close,
    where: 'url' in location ? withoutPassword(location.url) : location.dir,
    ...('dir' in location ? { embeddedDir: resolve(location.dir) } : {}),
  };
}

function embedderSetting(
  option: MemoryOptions['embeddings'],
  variable: string | undefined,
  model: ModelConfig,
): Embedder | undefined {
  if (option) return isAiSdkEmbeddingModel(option) ? aiSdkEmbedder(option) : option;
  const name = variable?.trim();
  if (!name) return undefined;
  const [provider, id] = name.includes(':')
    ? [name.slice(0, name.indexOf(':')), name.slice(name.indexOf(':') + 1)]
    : ['openai', name];
  if (provider !== 'openai' || !id)
    throw new TypeError(
      `AGENT_EMBEDDING_MODEL takes an OpenAI-compatible embeddings model ("openai:text-embedding-3-small", on OPENAI_BASE_URL), got "${name}"; give any other provider's as an AI SDK embedding model: new AgentsPlugin({ memory: { embeddings } })`,
    );
  return openAIEmbedder({ model: id, baseURL: model.baseURL, apiKey: model.apiKey });
}
