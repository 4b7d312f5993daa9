import type { ChatMessage } from './types';

/** Upper bound on one page's JSON size: well under gRPC's default 4 MB message limit. */
export const MAX_PAGE_CHARS = 1_000_000;

/**
 * The messages the `messages` query returns for `{ offset, limit }`: at most `limit` messages and
 * about `maxChars` characters of JSON, but always at least one message when any remain, so a
 * caller paging through a conversation of huge tool outputs still makes progress.
 */
export function messagesPage(
  messages: readonly ChatMessage[],
  range: { offset?: number; limit?: number } = {},
  maxChars = MAX_PAGE_CHARS,
): ChatMessage[] {
  const offset = Math.max(0, range.offset ?? 0);
  const end =
    range.limit === undefined ? messages.length : Math.min(messages.length, offset + Math.max(0, range.limit));
  const page: ChatMessage[] = [];
  let chars = 0;
  for (let i = offset; i < end; i++) {
    chars += JSON.stringify(messages[i]).length;
    if (page.length > 0 && chars > maxChars) break;
    page.push(messages[i]);
  }
  return page;
}
