import { ApplicationFailure } from '@temporalio/common';
import type { ChatMessage } from '../core/types';
import type { ModelCallInput } from './types';

/** Fetches messages `[offset, offset + limit)` of a workflow run (a page may hold fewer). */
export type FetchMessages = (ref: { workflowId: string; runId: string }, offset: number, limit: number) => Promise<ChatMessage[]>;

/**
 * Loads a conversation for the model-call activity. A run's messages only ever grow, so the
 * messages fetched for step k are still valid at step k + 1: we keep them per run and fetch only
 * the new ones. Without this, every step would re-read the whole conversation, and the traffic
 * between worker and server would grow quadratically even though the history does not. Another
 * worker (or a restart) simply starts with an empty cache.
 */
export class ConversationLoader {
  private readonly cache = new Map<string, ChatMessage[]>();

  constructor(
    private readonly fetch: FetchMessages,
    /** Conversations kept, least recently used dropped first. */
    private readonly maxConversations = 100,
  ) {}

  async load(ref: Pick<ModelCallInput, 'workflowId' | 'runId' | 'messageCount'>): Promise<ChatMessage[]> {
    const key = `${ref.workflowId}/${ref.runId}`;
    const cached = this.cache.get(key) ?? [];
    this.cache.delete(key); // re-inserted below: Map order is our LRU order
    const messages = cached.slice(0, ref.messageCount);
    while (messages.length < ref.messageCount) {
      const page = await this.fetch(ref, messages.length, ref.messageCount - messages.length);
      if (page.length === 0) {
        throw ApplicationFailure.nonRetryable(
          `workflow ${ref.workflowId} has ${messages.length} messages, expected ${ref.messageCount}`,
          'ModelCall.ConversationMismatch',
        );
      }
      messages.push(...page);
    }
    this.cache.set(key, messages);
    while (this.cache.size > this.maxConversations) this.cache.delete(this.cache.keys().next().value!);
    return [...messages];
  }
}
