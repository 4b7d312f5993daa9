import { ApplicationFailure } from '@temporalio/common';
import type { ChatMessage } from '../core/types';
import type { ModelCallInput } from './types';

/** Fetches messages `[offset, offset + limit)` of a workflow run (a page may hold fewer). */
export type FetchMessages = (ref: { workflowId: string; runId: string }, offset: number, limit: number) => Promise<ChatMessage[]>;

interface Cached {
  /** The pinned head (the system message). */
  head: ChatMessage[];
  /** Run index of `messages[0]`. */
  start: number;
  messages: ChatMessage[];
}

/**
 * Loads the messages a model call needs. A run's messages only ever grow, so those fetched for
 * step k are still valid at step k + 1: we keep them per run and fetch only the new ones. Without
 * this, every step would re-read the whole conversation, and the traffic between worker and
 * server would grow quadratically even though the history does not. For conversations only the
 * memory window is kept, so a long conversation costs the worker a window, not a transcript.
 * Another worker (or a restart) simply starts with an empty cache.
 */
export class ConversationLoader {
  private readonly cache = new Map<string, Cached>();

  constructor(
    private readonly fetch: FetchMessages,
    /** Conversations kept, least recently used dropped first. */
    private readonly maxConversations = 100,
  ) {}

  async load(ref: Pick<ModelCallInput, 'workflowId' | 'runId' | 'messageCount' | 'pinned' | 'from'>): Promise<ChatMessage[]> {
    const key = `${ref.workflowId}/${ref.runId}`;
    const pinned = ref.pinned ?? 0;
    const from = Math.max(ref.from ?? 0, pinned);
    const cached = this.cache.get(key);
    this.cache.delete(key); // re-inserted below: Map order is our LRU order
    const head = cached && cached.head.length >= pinned ? cached.head.slice(0, pinned) : await this.range(ref, 0, pinned);
    let messages: ChatMessage[] = [];
    if (cached && from >= cached.start && from <= cached.start + cached.messages.length) {
      messages = cached.messages.slice(from - cached.start, ref.messageCount - cached.start);
    }
    messages.push(...(await this.range(ref, from + messages.length, ref.messageCount)));
    this.cache.set(key, { head, start: from, messages });
    while (this.cache.size > this.maxConversations) this.cache.delete(this.cache.keys().next().value!);
    return [...head, ...messages];
  }

  /** Fetches `[from, to)`, page by page. */
  private async range(ref: { workflowId: string; runId: string }, from: number, to: number): Promise<ChatMessage[]> {
    const out: ChatMessage[] = [];
    while (from + out.length < to) {
      const page = await this.fetch(ref, from + out.length, to - from - out.length);
      if (page.length === 0) {
        throw ApplicationFailure.nonRetryable(`workflow ${ref.workflowId} has ${from + out.length} messages, expected ${to}`, 'ModelCall.ConversationMismatch');
      }
      out.push(...page);
    }
    return out;
  }
}
