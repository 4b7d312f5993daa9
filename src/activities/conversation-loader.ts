import { ApplicationFailure } from '@temporalio/common';
import type { ChatMessage } from '../core/messages/chat-message';
import type { ModelCallInput } from '../contracts/activity-interface';

/** Fetches messages `[offset, offset + limit)` of a workflow run (a page may hold fewer). */
export type FetchMessages = (
  ref: { workflowId: string; runId: string },
  offset: number,
  limit: number,
) => Promise<ChatMessage[]>;

/** A workflow run, as the cache knows it. */
interface Cached {
  /** The pinned head (the system message), once a model call has asked for it. */
  head: ChatMessage[];
  /** Run index of `messages[0]`. */
  start: number;
  messages: ChatMessage[];
  /** About how much memory `head` and `messages` hold (characters). */
  chars: number;
}

/**
 * The worker's copy of the conversations its model calls need. Two things fill it:
 *
 * - the workflows themselves: as a workflow on this worker adds messages, a sink hands them over
 *   (`add`). Sinks run outside the sandbox, before the workflow task completes, and not on replay,
 *   so the model call that follows finds them here and history does not grow for it;
 * - the `messages` query, for whatever is missing (the workflow runs on another worker, or this
 *   one restarted). A run's messages only ever grow, so what was fetched for step k is still valid
 *   at step k + 1, and only new messages are fetched.
 *
 * Without it every step would re-read the conversation through the server, on the critical path
 * of every model call. For conversations only the memory window is kept, so a long conversation
 * costs the worker a window, not a transcript. Least recently used runs are dropped first, past
 * `maxRuns` runs or `maxChars` characters.
 */
export class ConversationLoader {
  private readonly cache = new Map<string, Cached>();
  private chars = 0;

  constructor(
    private readonly fetch: FetchMessages,
    private readonly maxRuns = 1_000,
    private readonly maxChars = 64 * 1024 * 1024,
  ) {}

  /** Messages `[offset, offset + messages.length)` of a run, as its workflow added them. */
  add(
    ref: { workflowId: string; runId: string; revision?: number },
    offset: number,
    messages: readonly ChatMessage[],
  ): void {
    const key = keyOf(ref);
    const cached = this.take(key);
    let entry: Omit<Cached, 'chars'>;
    if (cached && offset >= cached.start && offset <= cached.start + cached.messages.length) {
      // Contiguous (or a retried workflow task adding the same messages again).
      entry = { ...cached, messages: [...cached.messages.slice(0, offset - cached.start), ...messages] };
    } else {
      entry = { head: cached?.head ?? [], start: offset, messages: [...messages] };
    }
    this.put(key, entry);
  }

  /** The messages a model call asked for: the pinned head and `[from, messageCount)`. */
  async load(
    ref: Pick<ModelCallInput, 'workflowId' | 'runId' | 'messageCount' | 'pinned' | 'from' | 'revision'>,
  ): Promise<ChatMessage[]> {
    const key = keyOf(ref);
    const pinned = ref.pinned ?? 0;
    const from = Math.max(ref.from ?? 0, pinned);
    const cached = this.take(key);
    let head: ChatMessage[];
    if (cached && cached.head.length >= pinned) head = cached.head.slice(0, pinned);
    else if (cached && cached.start === 0 && cached.messages.length >= pinned) head = cached.messages.slice(0, pinned);
    else head = await this.range(ref, 0, pinned);
    let messages: ChatMessage[] = [];
    if (cached && from >= cached.start && from <= cached.start + cached.messages.length) {
      messages = cached.messages.slice(from - cached.start, ref.messageCount - cached.start);
    }
    messages.push(...(await this.range(ref, from + messages.length, ref.messageCount)));
    // Keep what the workflow added beyond this call (a retried call may be behind it).
    const beyond =
      cached && cached.start + cached.messages.length > ref.messageCount && from >= cached.start
        ? cached.messages.slice(ref.messageCount - cached.start)
        : [];
    this.put(key, { head, start: from, messages: [...messages, ...beyond] });
    return [...head, ...messages].map(withoutCount);
  }

  /** Fetches `[from, to)`, page by page. */
  private async range(ref: { workflowId: string; runId: string }, from: number, to: number): Promise<ChatMessage[]> {
    const out: ChatMessage[] = [];
    while (from + out.length < to) {
      const page = await this.fetch(ref, from + out.length, to - from - out.length);
      if (page.length === 0) {
        throw ApplicationFailure.nonRetryable(
          `workflow ${ref.workflowId} has ${from + out.length} messages, expected ${to}`,
          'ModelCall.ConversationMismatch',
        );
      }
      out.push(...page);
    }
    return out;
  }

  /** Removes and returns a run's entry (re-inserted by `put`: Map order is our LRU order). */
  private take(key: string): Cached | undefined {
    const cached = this.cache.get(key);
    if (cached) {
      this.cache.delete(key);
      this.chars -= cached.chars;
    }
    return cached;
  }

  private put(key: string, entry: Omit<Cached, 'chars'>): void {
    const chars = sizeOf(entry.head) + sizeOf(entry.messages);
    this.cache.set(key, { ...entry, chars });
    this.chars += chars;
    while (this.cache.size > this.maxRuns || (this.chars > this.maxChars && this.cache.size > 1))
      this.take(this.cache.keys().next().value!);
  }
}

/** A run's messages as of a revision: a handoff that replaces the system message makes a new version, cached apart. */
function keyOf(ref: { workflowId: string; runId: string; revision?: number }): string {
  return ref.revision ? `${ref.workflowId}/${ref.runId}#${ref.revision}` : `${ref.workflowId}/${ref.runId}`;
}

/** About the memory messages hold: their text, without serializing them. */
function sizeOf(messages: readonly ChatMessage[]): number {
  let n = 0;
  for (const m of messages) {
    n += 64 + (m.content?.length ?? 0);
    if (m.role === 'assistant') for (const c of m.tool_calls ?? []) n += 64 + c.function.arguments.length;
  }
  return n;
}

/** A message without the workflow's token count (bookkeeping of memory by tokens, never sent to a provider). */
function withoutCount(m: ChatMessage): ChatMessage {
  if (m.tokens === undefined) return m;
  const { tokens: _tokens, ...rest } = m;
  return rest as ChatMessage;
}
