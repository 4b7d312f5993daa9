import type { AiSdkLanguageModel } from './ai-sdk/ai-sdk-language-model';
import type { ModelPrice } from './prices';

/** How the worker reaches its LLMs. */
export interface ModelConfig {
  /** The OpenAI endpoint (`openai:` and `openai-responses:` models): OpenAI, or any OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio...). */
  baseURL: string;
  apiKey: string;
  /** Default model for runs that don't name one; a provider prefix picks the adapter (see {@link parseModelRef}). */
  model: string;
  /** Per-request timeout in ms; Temporal retries what times out. */
  requestTimeoutMs: number;
  /**
   * False when the environment names no LLM endpoint at all (neither `OPENAI_*` nor
   * `ANTHROPIC_*`): model calls then fail at once, saying what to set.
   */
  configured: boolean;
  /** Anthropic's Messages API (`anthropic:` models); from `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL`. */
  anthropic?: { apiKey?: string; baseURL?: string };
  /**
   * Named models: agents (and `AGENT_MODEL`) name one, `model: "smart"`, and the worker keeps what
   * it means: a provider-prefixed name (`"anthropic:claude-sonnet-5"`) or a language model of
   * an AI SDK provider package. Keys and endpoints stay on the worker.
   */
  models?: NamedModels;
  /** Prices per model (USD per million tokens), over the model catalogue's (`@pydantic/genai-prices`): each reply's `usage.costUsd`. */
  prices?: Readonly<Record<string, ModelPrice>>;
  /** Context windows in tokens, by the model as runs name it (`smart`, `llama3.3`), over the model catalogue's. */
  contextWindows?: Readonly<Record<string, number>>;
}

/** A worker's named models (see {@link ModelConfig.models}). */
export type NamedModels = Readonly<Record<string, string | AiSdkLanguageModel>>;

/** The model when `AGENT_MODEL` is unset. */
export const DEFAULT_MODEL = 'gpt-4o-mini';
/** The endpoint when `OPENAI_BASE_URL` is unset: OpenAI itself. */
export const OPENAI_BASE_URL_DEFAULT = 'https://api.openai.com/v1';
/** Anthropic's endpoint when `ANTHROPIC_BASE_URL` is unset. */
export const ANTHROPIC_BASE_URL_DEFAULT = 'https://api.anthropic.com';

/** The wire formats the worker speaks, each through its provider's official SDK. */
export const MODEL_PROVIDERS = ['openai', 'openai-responses', 'anthropic'] as const;
/** A provider prefix of a model name. */
export type ModelProvider = (typeof MODEL_PROVIDERS)[number];

/** A model name split into its provider and the provider's own name for it. */
export interface ModelRef {
  provider: ModelProvider;
  model: string;
}

/**
 * `anthropic:claude-sonnet-5` → Anthropic's `claude-sonnet-5`. A name without a known
 * prefix is the OpenAI endpoint's (Chat Completions), so names with colons of their own, such as
 * Ollama's `qwen2.5:14b`, keep working.
 */
export function parseModelRef(name: string): ModelRef {
  const colon = name.indexOf(':');
  const prefix = colon > 0 ? name.slice(0, colon) : '';
  if ((MODEL_PROVIDERS as readonly string[]).includes(prefix))
    return { provider: prefix as ModelProvider, model: name.slice(colon + 1) };
  return { provider: 'openai', model: name };
}

/** True when the environment names an LLM endpoint at all. */
export function modelConfiguredInEnv(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.OPENAI_API_KEY || env.OPENAI_BASE_URL || env.ANTHROPIC_API_KEY || env.ANTHROPIC_BASE_URL);
}

/**
 * Reads `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL` and
 * `AGENT_MODEL`. Local servers rarely check keys, so a base URL without a key is fine; a missing
 * key against a provider surfaces as a 401 (`ModelCall.Auth`) on the first call, which fails the
 * run at once.
 */
export function modelConfigFromEnv(env: NodeJS.ProcessEnv): ModelConfig {
  const timeout = Number(env.AGENT_MODEL_TIMEOUT_MS);
  const config: ModelConfig = {
    baseURL: env.OPENAI_BASE_URL || OPENAI_BASE_URL_DEFAULT,
    apiKey: env.OPENAI_API_KEY || 'not-set',
    model: env.AGENT_MODEL || DEFAULT_MODEL,
    requestTimeoutMs: timeout > 0 ? timeout : 120_000,
    configured: modelConfiguredInEnv(env),
  };
  if (env.ANTHROPIC_API_KEY || env.ANTHROPIC_BASE_URL)
    config.anthropic = {
      ...(env.ANTHROPIC_API_KEY ? { apiKey: env.ANTHROPIC_API_KEY } : {}),
      ...(env.ANTHROPIC_BASE_URL ? { baseURL: env.ANTHROPIC_BASE_URL } : {}),
    };
  return config;
}
