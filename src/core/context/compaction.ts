import type { ChatMessage } from '../messages/chat-message';

/**
 * Token-aware context: when the next request would pass `maxPromptTokens`, the oldest messages are
 * summarised (a model call of its own) and the model sees the system message, the summary, then
 * the recent messages. Pure decisions, so the workflow only carries them out:
 *
 * - **Estimates.** Each message's tokens as the model-call activity counted them when it was
 *   first sent (a real tokenizer: see models/tokenizer.ts), or characters over 4 for what
 *   was not sent yet (or when the worker has no tokenizer); both corrected by what the provider
 *   reported for the last request (its prompt tokens against the estimate of the same messages),
 *   so what the tokenizer does not know (another model's tokenizer, the provider's framing) is
 *   measured rather than guessed.
 * - **In chunks.** A compaction keeps about half the budget of recent messages, so many requests
 *   follow before the next one, each beginning with the previous request's messages byte for byte:
 *   the provider's prompt cache holds between compactions.
 * - **Never a split.** The cut never separates tool calls from their results, and never takes the
 *   system message. When it takes the newest user message (a long one-shot run, a turn of many
 *   tool calls), the summary quotes that message in full, so the task is never paraphrased away.
 * - **Replayed.** These estimates decide commands (a summary activity, a budget's stop), so a
 *   change to them changes what a replay decides: it goes behind `patched`, like any workflow change.
 * - **Appended, never inserted.** The summary is a message appended to the run (the transcript
 *   keeps every message, and stores that read messages by offset keep working); model calls place
 *   it after the system message (see {@link contextView}).
 */

/** Characters per token of the rule of thumb, before calibration. */
const CHARS_PER_TOKEN = 4;
/** What an image costs in the estimate (providers count roughly 1,000 to 1,600 tokens for a typical one). */
const IMAGE_TOKENS = 1_500;
/** A message's own overhead (role, separators). */
const MESSAGE_TOKENS = 4;

/**
 * The share of the budget a compaction keeps of recent messages (with the head and the summary):
 * the lower, the more requests follow before the next compaction, each reusing the cached prefix;
 * the higher, the more of the recent conversation the model reads verbatim.
 */
const KEEP_SHARE = 0.5;

/** The smallest `maxPromptTokens` a run may set: below it a summary and one exchange do not fit. */
export const MIN_PROMPT_TOKENS = 1_000;

/** The marker of a summary message: which messages it covers (`[from, to)` of the run's messages). */
export interface SummaryMark {
  from: number;
  to: number;
}

/**
 * A message's tokens (uncalibrated): its text counted by `countText` when a worker's tokenizer
 * counts, else characters over four; plus each message's overhead and a typical image's cost.
 */
export function messageTokens(m: ChatMessage, countText?: (text: string) => number): number {
  const images = m.role === 'user' || m.role === 'tool' ? (m.images?.length ?? 0) : 0;
  const overhead = MESSAGE_TOKENS + images * IMAGE_TOKENS;
  if (countText) {
    let tokens = countText(m.content ?? '');
    if (m.role === 'assistant') {
      for (const c of m.tool_calls ?? []) tokens += countText(c.function.name) + countText(c.function.arguments) + 5;
      for (const r of m.reasoning ?? [])
        tokens += countText(r.text ?? '') + Math.ceil((r.encryptedContent?.length ?? 0) / (2 * CHARS_PER_TOKEN));
    }
    return tokens + overhead;
  }
  // The rule of thumb sums characters and divides once: recorded runs replay on exactly this.
  let chars = m.content?.length ?? 0;
  if (m.role === 'assistant') {
    for (const c of m.tool_calls ?? []) chars += c.function.name.length + c.function.arguments.length + 20;
    for (const r of m.reasoning ?? []) chars += (r.text?.length ?? 0) + (r.encryptedContent?.length ?? 0) / 2;
  }
  return Math.ceil(chars / CHARS_PER_TOKEN) + overhead;
}

/**
 * Some messages' tokens (uncalibrated): as counted when sent (`tokens`), else by the rule of thumb
 * times `density` (see {@link densityOf}).
 */
export function estimateTokens(messages: readonly ChatMessage[], density = 1): number {
  let total = 0;
  for (const m of messages)
    total += m.tokens ?? (density === 1 ? messageTokens(m) : Math.ceil(messageTokens(m) * density));
  return total;
}

/**
 * How the tokenizer's counts compare to the rule of thumb on the messages it counted: the rule of
 * thumb times this estimates the messages not counted yet (the new user message, tool results) in
 * the same terms, so the provider's calibration applies to both alike. 1 when nothing was counted.
 */
export function densityOf(messages: readonly ChatMessage[]): number {
  let counted = 0;
  let rough = 0;
  for (const m of messages) {
    if (m.tokens === undefined) continue;
    counted += m.tokens;
    rough += messageTokens(m);
  }
  if (counted === 0 || rough === 0) return 1;
  return Math.min(4, Math.max(0.25, counted / rough));
}

/**
 * How the provider's count of the last request corrects the estimates: `scale` multiplies what a
 * message is estimated at, `offset` is added once per request.
 */
export interface Calibration {
  scale: number;
  offset: number;
}

/** No correction: the estimates as they are. */
export const UNCALIBRATED: Calibration = { scale: 1, offset: 0 };

/**
 * The correction the provider's count of the last request gives, against the estimate of the
 * messages it sent. Bounded, so one odd report cannot make the next decision absurd.
 *
 * The ratio scales messages up to {@link MAX_MESSAGE_SCALE} (a tokenizer that counts more than
 * OpenAI's), and what the provider counted beyond that is added once per request: the request it
 * saw comes out at its count, and new messages are not inflated by the tools. (Scaling everything
 * by the ratio, as runs before 0.2.0 did, misjudges small requests: the provider counts the tool
 * definitions too, a fixed cost, so a first request of 10 tokens with 500 tokens of tools made
 * every later estimate four times too large.)
 */
export function calibration(lastPrompt: { tokens: number; estimated: number } | undefined): Calibration {
  if (!lastPrompt?.tokens || !lastPrompt.estimated) return UNCALIBRATED;
  const { tokens, estimated } = lastPrompt;
  const ratio = Math.min(4, Math.max(0.25, tokens / estimated));
  if (ratio <= 1) return { scale: ratio, offset: 0 };
  const scale = Math.min(ratio, MAX_MESSAGE_SCALE);
  return { scale, offset: Math.max(0, tokens - Math.ceil(estimated * scale)) };
}

/** How much more than the estimate a provider's tokenizer is taken to count per message (Claude's counts 10–30% more than OpenAI's). */
export const MAX_MESSAGE_SCALE = 1.5;

/** Some messages' estimate, corrected: each message scaled, the request's fixed part added once. */
export function calibratedTokens(messages: readonly ChatMessage[], density: number, cal: Calibration): number {
  return Math.ceil(estimateTokens(messages, density) * cal.scale) + cal.offset;
}

/** The messages a model call sees: the pinned head, the current summary, then `[from, count)` without earlier summaries. */
export function contextView(
  messages: readonly ChatMessage[],
  range: { pinned: number; from: number; messageCount: number; summary?: number },
): ChatMessage[] {
  const head = messages.slice(0, range.pinned);
  const rest = messages.slice(range.from, range.messageCount).filter((m) => !isSummary(m));
  const summary = range.summary === undefined ? undefined : messages[range.summary];
  return summary ? [...head, summary, ...rest] : [...head, ...rest];
}

/** Whether a message is the run's instructions (a system message that is not a summary). */
export function isInstructions(m: ChatMessage | undefined): boolean {
  return m?.role === 'system' && m.summary === undefined;
}

/** Whether a message is a summary of earlier ones. */
export function isSummary(m: ChatMessage): boolean {
  return m.role === 'system' && m.summary !== undefined;
}

/**
 * Which messages to summarise so the next request fits in `maxTokens`, or undefined when it fits.
 * `from` is where the model's view starts now (after the pinned head, or the last cut). The cut
 * keeps about half the budget of the newest messages (the newest always), starting an exchange
 * where one is near, never between tool calls and their results.
 */
export function compactionPlan(
  messages: readonly ChatMessage[],
  view: { pinned: number; from: number; summary?: number },
  maxTokens: number,
  cal: Calibration = UNCALIBRATED,
  density = 1,
): SummaryMark | undefined {
  const tokens = (list: readonly ChatMessage[]) => Math.ceil(estimateTokens(list, density) * cal.scale);
  const visible = contextView(messages, { ...view, messageCount: messages.length });
  if (tokens(visible) + cal.offset <= maxTokens) return undefined;
  // Keep the newest messages worth half the budget, less the head (with the request's fixed part) and room for the summary.
  const head = tokens(messages.slice(0, view.pinned)) + cal.offset;
  const keep = Math.max(0, Math.floor(maxTokens * KEEP_SHARE) - head - Math.floor(maxTokens / 8));
  let cut = messages.length;
  let kept = 0;
  let keptAny = false;
  while (cut > view.from) {
    const message = messages[cut - 1];
    if (isSummary(message)) {
      cut--;
      continue;
    }
    const size = tokens([message]);
    // The newest message always stays (the results the model just asked for, or the question).
    if (kept + size > keep && keptAny) break;
    kept += size;
    keptAny = true;
    cut--;
  }
  // The kept part starts an exchange (a user message) where one is near; never between tool calls and results.
  let exchange = cut;
  while (exchange > view.from && (messages[exchange]?.role !== 'user' || isSummary(messages[exchange]))) exchange--;
  if (exchange > view.from) cut = exchange;
  while (cut > view.from && messages[cut]?.role === 'tool') cut--;
  if (cut <= view.from) return undefined; // nothing old enough to summarise
  return { from: view.from, to: cut };
}

/** The request for a summary: what to fold in (an earlier summary) and the messages it covers. */
export function summaryPrompt(previous: string | undefined, messages: readonly ChatMessage[]): string {
  const lines = messages
    .filter((m) => !isSummary(m))
    .map((m) => {
      if (m.role === 'assistant') {
        const calls = (m.tool_calls ?? []).map((c) => `${c.function.name}(${c.function.arguments})`).join(', ');
        return `assistant: ${m.content ?? ''}${calls ? ` [called ${calls}]` : ''}`;
      }
      if (m.role === 'tool') return `tool result ${m.tool_call_id}: ${m.content}`;
      return `${m.role}: ${m.content}`;
    });
  return [
    'Summarise the conversation below for the assistant who continues it. Keep every fact, decision, number, name, open question and commitment it will need; drop small talk and repetition. Write plain prose or short lists, in the language of the conversation, and nothing else.',
    previous ? `\nThe summary of what came before:\n${previous}` : '',
    `\nThe conversation:\n${lines.join('\n')}`,
  ].join('\n');
}

/**
 * The summary message appended to the run: what the model reads in place of the messages it
 * covers. When those include the newest user message, it follows the summary word for word.
 */
export function summaryMessage(text: string, mark: SummaryMark, messages: readonly ChatMessage[] = []): ChatMessage {
  const lastUser = lastIndexOf(messages, (m) => m.role === 'user');
  const quoted =
    lastUser >= mark.from && lastUser < mark.to
      ? `\n\nThe request being worked on, as the user wrote it:\n${messages[lastUser].content}`
      : '';
  return {
    role: 'system',
    content: `Summary of the earlier conversation (messages ${mark.from}-${mark.to - 1}):\n${text}${quoted}`,
    summary: mark,
  };
}

function lastIndexOf<T>(list: readonly T[], test: (item: T) => boolean): number {
  for (let i = list.length - 1; i >= 0; i--) if (test(list[i])) return i;
  return -1;
}
