import type { ChatModel } from './chat-model';
import { createAnthropicChatModel } from './anthropic/messages';
import { parseModelRef, type ModelConfig, type ModelProvider } from './model-config';
import { createOpenAIChatModel } from './openai/chat-completions';
import { createOpenAIResponsesChatModel } from './openai/responses';

/**
 * The worker's model: one {@link ChatModel} that sends each call to the adapter of the model's
 * provider, by the prefix of its name (`anthropic:claude-sonnet-4-5`, `openai-responses:gpt-5`;
 * none, or `openai:`, means the OpenAI endpoint's Chat Completions). Agents of one worker can so use different providers. Each
 * adapter is made on first use, with its provider's settings from `config`.
 */
export function createChatModel(config: ModelConfig): ChatModel {
  const adapters = new Map<ModelProvider, ChatModel>();
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
  const defaultRef = parseModelRef(config.model);
  return {
    endpoint: { ...adapterFor(defaultRef.provider).endpoint, model: config.model },
    endpointFor(model) {
      const ref = parseModelRef(model);
      return { ...adapterFor(ref.provider).endpoint, model: ref.model };
    },
    generate(messages, options = {}) {
      const ref = parseModelRef(options.settings?.model ?? config.model);
      return adapterFor(ref.provider).generate(messages, {
        ...options,
        settings: { ...options.settings, model: ref.model },
      });
    },
  };
}
