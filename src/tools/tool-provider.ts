import type { ChatMessage } from '../core/messages/chat-message';

/** What a tool provider sees before a model call. */
export interface ToolProviderRequest {
  /** The conversation (memory id); the run's workflow id for one-shot runs. */
  conversationId: string;
  /** The latest user message: the one this turn answers. */
  userMessage: string;
  /** The messages the LLM is about to see (the memory window, system message first). */
  messages: ChatMessage[];
}

/**
 * Chooses extra tools for one model call from the conversation (LangChain4j's `ToolProvider`),
 * e.g. offer `get_booking_details` only when the user mentions a booking. Returns names of
 * registered tools (typically registered with `{ dynamic: true }`), or nothing.
 *
 * It runs inside the model-call activity, so its choice is recorded in history with the reply and
 * replays never call it again: it may read databases, clocks or feature flags freely.
 */
export type ToolProvider = (
  request: ToolProviderRequest,
) => readonly string[] | null | undefined | Promise<readonly string[] | null | undefined>;
