import type { ChatMessage } from '../core/messages/chat-message';
import type { ModelCallInput } from '../core/run/model-call-input';
import { isSummary } from '../core/context/compaction';
import type { ModelRoute } from '../models/chat-model';
import { withImageUrls } from '../models/image-support';
import { countNewMessages, textCounterFor } from '../models/tokenizer';
import type { BlobStore } from '../storage/blob-store';
import type { ConversationLoader } from './conversation-loader';

/**
 * The request a model call sends, made from its input, which holds the conversation by reference:
 * the messages read from the worker's cache (else the workflow's `messages` query), counted where
 * no earlier call counted them (memory by tokens), the newest summary right after the pinned
 * head, images inlined from the blob store, and, when the run wraps up under its budget, its last
 * word to the model. Returns the messages as the conversation holds them, those sent, and the counts.
 */
export async function modelRequest(
  input: ModelCallInput,
  route: ModelRoute,
  deps: { conversations: ConversationLoader; blobs: BlobStore },
): Promise<{ messages: ChatMessage[]; sent: ChatMessage[]; counted?: Array<[number, number]> }> {
  const loaded = await deps.conversations.load(input);
  const counted = countTokens(loaded, input, route.model);
  const messages = withSummaryFirst(loaded, input.pinned ?? 0);
  // Images go by reference in the conversation; the request carries them (blobs inlined).
  const sent = await withImageUrls(messages, route.name, deps.blobs, route.model);
  // What was recalled of the user's memory: right after the turn's message, sent, never kept. The
  // messages before it are the conversation as the last call sent it, so the prompt cache hits.
  if (input.recall?.text) {
    const at = messages.indexOf(loaded[input.recall.after]);
    sent.splice(at >= 0 ? at + 1 : sent.length, 0, { role: 'user', content: memoryMessage(input.recall.text) });
  }
  // The run's last word to the model (wrapping up under its budget): sent, never kept.
  if (input.instruction) sent.push({ role: 'user', content: input.instruction });
  return { messages, sent, ...(counted ? { counted } : {}) };
}

/** Memory by tokens: the messages no earlier call counted, by the model's tokenizer (none without `gpt-tokenizer`). */
function countTokens(
  messages: ChatMessage[],
  input: ModelCallInput,
  model: string,
): Array<[number, number]> | undefined {
  if (input.countFrom === undefined) return undefined;
  const countText = textCounterFor(model);
  if (!countText) return undefined;
  const pinned = input.pinned ?? 0;
  return countNewMessages(
    messages,
    { pinned, from: Math.max(input.from ?? 0, pinned), countFrom: input.countFrom },
    countText,
  );
}

/**
 * The messages as the model reads them after a compaction: the pinned head, the newest summary
 * (appended where it was written), then the other messages without any summary.
 */
function withSummaryFirst(messages: ChatMessage[], pinned: number): ChatMessage[] {
  const rest = messages.slice(pinned);
  const summary = rest.filter(isSummary).at(-1);
  return summary ? [...messages.slice(0, pinned), summary, ...rest.filter((m) => !isSummary(m))] : messages;
}

/** The recalled block as the model reads it: marked as memory, not as something the user said. */
function memoryMessage(text: string): string {
  return `<memory>\n${text}\n</memory>`;
}
