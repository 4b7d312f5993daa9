/** How the worker reaches its LLM. */
export interface ModelConfig {
  /** Any OpenAI-compatible server: OpenAI, Ollama, vLLM, llama.cpp, LM Studio... */
  baseURL: string;
  apiKey: string;
  /** Default model for runs that don't name one. */
  model: string;
  /** Per-request timeout in ms; Temporal retries what times out. */
  requestTimeoutMs: number;
  /** False when neither OPENAI_API_KEY nor OPENAI_BASE_URL was given: model calls then fail at once, saying so. */
  configured: boolean;
}

/** The model when `AGENT_MODEL` is unset. */
export const DEFAULT_MODEL = 'gpt-4o-mini';
/** The endpoint when `OPENAI_BASE_URL` is unset: OpenAI itself. */
export const OPENAI_BASE_URL_DEFAULT = 'https://api.openai.com/v1';

/** True when the environment names an LLM endpoint at all. */
export function modelConfiguredInEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.OPENAI_API_KEY || env.OPENAI_BASE_URL);
}

/**
 * Reads `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `AGENT_MODEL`. Local servers rarely check keys, so
 * a base URL without a key is fine; a missing key against api.openai.com surfaces as a 401
 * (`ModelCall.Auth`) on the first call, which fails the run at once.
 */
export function modelConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ModelConfig {
  const timeout = Number(env.AGENT_MODEL_TIMEOUT_MS);
  return {
    baseURL: env.OPENAI_BASE_URL || OPENAI_BASE_URL_DEFAULT,
    apiKey: env.OPENAI_API_KEY || 'not-set',
    model: env.AGENT_MODEL || DEFAULT_MODEL,
    requestTimeoutMs: timeout > 0 ? timeout : 120_000,
    configured: modelConfiguredInEnv(env),
  };
}
