/* eslint-disable @typescript-eslint/no-require-imports -- adapters load on first use, see below */
import type { ChatModel, ModelRoute } from './chat-model';
import type { AiSdkLanguageModel } from './ai-sdk/ai-sdk-language-model';
import { parseModelRef, type ModelConfig, type ModelProvider } from './model-config';

// Each adapter module, with its provider's SDK (the Anthropic SDK alone is some 250 modules), is
// loaded when a call first needs it, not when the worker starts: a worker pays only for the
// providers its agents use, and starts sooner.
const aiSdkAdapter = (model: AiSdkLanguageModel): ChatModel =>
  (require('./ai-sdk/ai-sdk-model') as typeof import('./ai-sdk/ai-sdk-model')).createAiSdkChatModel(model);
const anthropicAdapter = (config: ModelConfig): ChatModel =>
  (require('./anthropic/messages') as typeof import('./anthropic/messages')).createAnthropicChatModel(config);
const responsesAdapter = (config: ModelConfig): ChatModel =>
  (require('./openai/responses') as typeof import('./openai/responses')).createOpenAIResponsesChatModel(config);
const chatCompletionsAdapter = (config: ModelConfig): ChatModel =>
  (require('./openai/chat-completions') as typeof import('./openai/chat-completions')).createOpenAIChatModel(config);

/**
 * The worker's model: one {@link ChatModel} that sends each call to the adapter its model names.
 * A named model of the worker (`config.models`) means what the worker says: a provider-prefixed
 * name, or an AI SDK provider's language model. Otherwise the prefix picks the adapter
 * (`anthropic:claude-sonnet-5`, `openai-responses:gpt-5.4`; none, or `openai:`, is the OpenAI
 * endpoint's Chat Completions). Agents of one worker can so use different providers. Each adapter
 * is made on first use, with its provider's settings from `config`.
 */
export function createChatModel(config: ModelConfig): ChatModel {
  const adapters = new Map<ModelProvider, ChatModel>();
  const aiSdk = new Map<string, ChatModel>();
  /** A named model of the worker, or a provider-prefixed name: the adapter and the provider's name for the model. */
  const resolve = (name: string): { adapter: ChatModel; model: string } => {
    const named = config.models?.[name];
    if (named !== undefined && typeof named !== 'string') {
      let adapter = aiSdk.get(name);
      if (!adapter) aiSdk.set(name, (adapter = aiSdkAdapter(named)));
      return { adapter, model: named.modelId };
    }
    const ref = parseModelRef(named ?? name);
    return { adapter: adapterFor(ref.provider), model: ref.model };
  };
  const adapterFor = (provider: ModelProvider): ChatModel => {
    let adapter = adapters.get(provider);
    if (!adapter) {
      adapter =
        provider === 'anthropic'
          ? anthropicAdapter(config)
          : provider === 'openai-responses'
            ? responsesAdapter(config)
            : chatCompletionsAdapter(config);
      adapters.set(provider, adapter);
    }
    return adapter;
  };
  // The adapter of each route this model gave: a call goes where its route was resolved to.
  const adapterOf = new WeakMap<ModelRoute, ChatModel>();
  const route = (name: string = config.model): ModelRoute => {
    const { adapter, model } = resolve(name);
    const resolved = { ...adapter.route(model), name };
    adapterOf.set(resolved, adapter);
    return resolved;
  };
  return {
    route,
    generate(messages, options = {}) {
      const resolved = options.route ?? route(options.settings?.model);
      const adapter = adapterOf.get(resolved) ?? resolve(resolved.name).adapter;
      return adapter.generate(messages, { ...options, route: resolved });
    },
  };
}
