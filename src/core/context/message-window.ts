import { isInstructions } from './compaction';
import type { ChatMessage } from '../messages/chat-message';

/** Messages (besides the system message) a conversation's LLM sees by default. */
export const DEFAULT_MEMORY_WINDOW = 20;
/** A tool round trip is three messages (user, assistant with tool calls, tool result): fewer cannot work. */
export const MIN_MEMORY_WINDOW = 3;

/**
 * Chat memory as a message window (LangChain4j's `MessageWindowChatMemory`): the LLM sees the
 * first `pinned` messages (the system message) plus the last `window` others. The cut never falls
 * between an assistant message with tool calls and its tool results, since the LLM API rejects
 * results without their call: when it would, the window reaches back to include the call, so the
 * LLM always sees the results it just asked for. Returns the index of the first windowed message.
 */
export function memoryWindowStart(messages: readonly ChatMessage[], window: number, pinned = 0): number {
  let start = Math.max(pinned, messages.length - window);
  while (start > pinned && messages[start]?.role === 'tool') start--;
  return start;
}

/** The part of a run's messages a model call needs, as the model-call activity's input names it. */
export interface ModelContextRange {
  /** Use the first `messageCount` messages of the run... */
  messageCount: number;
  /** ...of which the first `pinned` always (the system message)... */
  pinned: number;
  /** ...and the rest from this index on. */
  from: number;
}

/** Which messages the next model call sees: all of them, or the memory window when one is set. */
export function modelContextRange(messages: readonly ChatMessage[], window: number | undefined): ModelContextRange {
  const pinned = isInstructions(messages[0]) ? 1 : 0;
  const from = window === undefined ? pinned : memoryWindowStart(messages, window, pinned);
  return { messageCount: messages.length, pinned, from };
}
