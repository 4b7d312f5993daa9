import type {
  ChatCompletionContentPart,
  ChatCompletionMessageParam,
  ChatCompletionUserMessageParam,
} from 'openai/resources/chat/completions';
import type { ChatMessage, ImageRef } from '../../core/messages/chat-message';
import { imageUrlOf } from '../image-support';

/**
 * Images in the Chat Completions format: a user message's images are `image_url` parts next to
 * its text. A tool message can hold text only there, so the images tools returned follow the
 * tool messages of their step in one user message, each after the call id it belongs to (the
 * API wants the tool messages right after the assistant's calls).
 */

/** A user message, with its images as content parts. */
export function userMessage(m: Extract<ChatMessage, { role: 'user' }>): ChatCompletionUserMessageParam {
  if (!m.images?.length) return { role: 'user', content: m.content };
  return { role: 'user', content: [{ type: 'text', text: m.content }, ...m.images.map(imagePart)] };
}

/** An image as an `image_url` part (an http(s) URL, or the bytes as a data URL). */
export function imagePart(image: ImageRef): ChatCompletionContentPart {
  return { type: 'image_url', image_url: { url: imageUrlOf(image) } };
}

/**
 * The messages with, after each run of tool (or function) results, a user message holding the
 * images those tools returned.
 */
export function withToolImages(
  source: readonly ChatMessage[],
  wire: ChatCompletionMessageParam[],
): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  let pending: ChatCompletionContentPart[] = [];
  const flush = () => {
    if (pending.length)
      out.push({ role: 'user', content: [{ type: 'text', text: 'Images the tools returned:' }, ...pending] });
    pending = [];
  };
  source.forEach((m, i) => {
    if (m.role !== 'tool') flush();
    out.push(wire[i]);
    if (m.role === 'tool' && m.images?.length)
      pending.push({ type: 'text', text: `Tool call ${m.tool_call_id}:` }, ...m.images.map(imagePart));
  });
  flush();
  return out;
}
