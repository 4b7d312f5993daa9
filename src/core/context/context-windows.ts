import type { AgentInput } from '../state/run-options';

/**
 * The default memory of runs and conversations: requests bounded by tokens, from the model's
 * context window, instead of a count of messages. Pure: the worker says which models it has (a
 * recorded answer), the workflow applies the default before the run starts.
 */

/**
 * Context windows of common models, in tokens, by the provider's model name (a name matches the
 * longest entry it starts with). Published figures as of 2025-10; a model not listed gets
 * {@link FALLBACK_CONTEXT_WINDOW}.
 */
export const CONTEXT_WINDOWS: Readonly<Record<string, number>> = {
  'gpt-5': 400_000,
  'gpt-4.1': 1_047_576,
  'gpt-4o': 128_000,
  'gpt-4-turbo': 128_000,
  'gpt-4': 8_192,
  'gpt-3.5-turbo': 16_385,
  o1: 200_000,
  o3: 200_000,
  'o4-mini': 200_000,
  claude: 200_000,
  'gemini-1.5-pro': 2_097_152,
  gemini: 1_048_576,
  'llama3.1': 128_000,
  'llama3.2': 128_000,
  'llama3.3': 128_000,
  llama3: 8_192,
  'qwen2.5': 32_768,
  qwen3: 40_960,
  mistral: 32_768,
  'deepseek-chat': 128_000,
  'deepseek-reasoner': 128_000,
};

/** The context window assumed for a model the table does not know: small enough for most servers. */
export const FALLBACK_CONTEXT_WINDOW = 32_768;

/** The largest default `maxPromptTokens`: larger prompts cost more than most agents need; set it to go further. */
export const MAX_DEFAULT_PROMPT_TOKENS = 128_000;

/** The context window of a model by name (`anthropic:claude-sonnet-4-5`, `gpt-4.1-mini`, `models/gemini-2.5-pro`). */
export function contextWindowOf(model: string): number {
  const name = model
    .replace(/^[a-z-]+:/, '')
    .replace(/^.*\//, '')
    .toLowerCase();
  let best: string | undefined;
  for (const key of Object.keys(CONTEXT_WINDOWS))
    if (name.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
  return best === undefined ? FALLBACK_CONTEXT_WINDOW : CONTEXT_WINDOWS[best];
}

/**
 * The default `maxPromptTokens` of a model: three quarters of its context window (room for the
 * answer, and for estimates), at most {@link MAX_DEFAULT_PROMPT_TOKENS}. `windows` holds what the
 * worker knows of its named models (`smart` → the window of the model it stands for).
 */
export function defaultMaxPromptTokens(model: string | undefined, windows: Readonly<Record<string, number>>): number {
  const window = model === undefined ? FALLBACK_CONTEXT_WINDOW : (windows[model] ?? contextWindowOf(model));
  return Math.min(MAX_DEFAULT_PROMPT_TOKENS, Math.floor(window * 0.75));
}

/**
 * A run's (or conversation's) options with the default memory: `maxPromptTokens` from the model's
 * context window, unless the options set it or a message window. Without the worker's windows (its
 * worker could not tell them) nothing changes.
 */
export function withDefaultMemory<T extends Omit<AgentInput, 'message'> & { memoryWindow?: number }>(
  options: T,
  worker: { defaultModel?: string; contextWindows?: Readonly<Record<string, number>> } | undefined,
): T {
  if (!worker?.contextWindows || options.maxPromptTokens !== undefined || options.memoryWindow !== undefined)
    return options;
  const model = options.modelSettings?.model ?? worker.defaultModel;
  return { ...options, maxPromptTokens: defaultMaxPromptTokens(model, worker.contextWindows) };
}
