/**
 * Counting a message's tokens with a real tokenizer, in the model-call activity: memory by tokens
 * then decides on counts instead of the characters-over-four rule of thumb (code and JSON run
 * about three characters a token, prose over four, so one ratio misjudges a large tool output).
 *
 * `gpt-tokenizer` (an optional package: it holds the BPE ranks of every OpenAI encoding, about
 * 30 MB unpacked) counts exactly for OpenAI's models: `o200k_base` for GPT-4o, GPT-4.1, GPT-5 and
 * the o-series, `cl100k_base` for GPT-4 and GPT-3.5. For other models (Claude, local models) it is
 * an approximation that still tells code from prose, and the provider's reported prompt tokens
 * calibrate what is left. Without the package, counts are absent and the workflow keeps its rule of
 * thumb, calibrated the same way.
 *
 * Counting happens here, not in the workflow: the ranks would make every workflow bundle megabytes
 * larger, and the count is then recorded once in the activity's result, so replays decide the same.
 */
import { messageTokens } from '../core/context/compaction';
import type { ChatMessage } from '../core/messages/chat-message';

type CountText = (text: string) => number;

let encodings: { o200k?: CountText; cl100k?: CountText } | undefined;

/** Loads an encoding of the optional `gpt-tokenizer`, once; undefined without the package. */
function encoding(name: 'o200k' | 'cl100k'): CountText | undefined {
  encodings ??= {};
  if (!(name in encodings)) {
    try {
      // Loaded on first use (a worker with a model loads them as it starts, see call-model.ts), so
      // a process that never counts does not pay for the ranks.
      /* eslint-disable @typescript-eslint/no-require-imports */
      const mod: { countTokens: (text: string) => number } =
        name === 'o200k'
          ? require('gpt-tokenizer/cjs/encoding/o200k_base')
          : require('gpt-tokenizer/cjs/encoding/cl100k_base');
      /* eslint-enable @typescript-eslint/no-require-imports */
      encodings[name] = (text) => mod.countTokens(text);
    } catch {
      encodings[name] = undefined;
    }
  }
  return encodings[name];
}

/** The counter for a model (by the name its provider knows), or undefined without `gpt-tokenizer`. */
export function textCounterFor(model: string | undefined): CountText | undefined {
  const name = (model ?? '').toLowerCase().replace(/^[a-z-]+:/, '');
  // GPT-4 (not 4o, 4.1 or 4.5) and GPT-3.5 predate o200k.
  const old = /^gpt-(3\.5|4)(-(?!o)|$)/.test(name) && !/^gpt-4(o|\.)/.test(name);
  return encoding(old ? 'cl100k' : 'o200k');
}

/**
 * Counts the messages of a model call from run index `countFrom` on, and the pinned head (each
 * conversation turn makes its system message anew): `[index, tokens]` pairs, for the workflow to
 * keep with the messages. `messages` are what the loader returned: the pinned head
 * (indices `0..pinned-1`), then indices from `from` on.
 */
export function countNewMessages(
  messages: readonly ChatMessage[],
  at: { pinned: number; from: number; countFrom: number },
  countText: CountText,
): Array<[number, number]> {
  const counted: Array<[number, number]> = [];
  messages.forEach((m, i) => {
    const index = i < at.pinned ? i : at.from + (i - at.pinned);
    if (i < at.pinned || index >= at.countFrom) counted.push([index, messageTokens(m, countText)]);
  });
  return counted;
}
