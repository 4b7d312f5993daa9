import type { ModelConfig } from './model-config';
import type { ChatModel } from './chat-model';
import { createChatModel } from './create-chat-model';

export type { ChatModel, GenerateOptions, ToolSpec } from './chat-model';

/**
 * The low-level API, for your own loop outside any workflow (LangChain4j's `ChatLanguageModel`):
 * one model call (`executeToolCall` in tools/tool-call.ts is its tool side). The same adapters as
 * the activities, so the same requests, reply parsing and failure types.
 */

/**
 * A {@link ChatModel} for the configured providers: each call goes to the adapter of its model's
 * provider prefix (`anthropic:...`, or none for the OpenAI-compatible endpoint). Default:
 * `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `AGENT_MODEL`.
 * Offer tools with `registry.specs(names)`.
 */
export function chatModel(config: ModelConfig): ChatModel {
  return createChatModel(config);
}
