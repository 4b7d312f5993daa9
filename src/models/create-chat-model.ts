import type { ChatModel, ModelRoute } from './chat-model';
import { createAiSdkChatModel } from './ai-sdk/ai-sdk-model';
import { createAnthropicChatModel } from './anthropic/messages';
import { parseModelRef, type ModelConfig, type ModelProvider } from './model-config';
import { createOpenAIChatModel } from './openai/chat-completions';
import { createOpenAIResponsesChatModel } from './openai/responses';

/**
 * The worker's model: one {@link ChatModel} that sends each call to the adapter its model names.
 * A named model of the worker (`config.models`) means what the worker says: a provider-prefixed
 * name, or an AI SDK provider's language model. Otherwise the prefix picks the adapter
 * (`anthropic:claude-sonnet-4-5`, `openai-responses:gpt-5`; none, or `openai:`, is the OpenAI
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
      if (!adapter) aiSdk.set(name, (adapter = createAiSdkChatModel(named)));
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
          ? createAnthropicChatModel(config)
          : provider === 'openai-responses'
            ? createOpenAIResponsesChatModel(config)
            : createOpenAIChatModel(config);
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
