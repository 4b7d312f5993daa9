import { isModelCallError, ModelCallError } from './model-error';
import type { ChatMessage, ImageRef } from '../core/messages/chat-message';
import { BlobNotFoundError, type BlobStore } from '../storage/blob-store';
import { imageUrl } from '../storage/images';

/**
 * Images on their way to a model: the references a conversation holds become what adapters send
 * (a URL, or a `data:` URL of the blob's bytes), and a model known to take no images is told so
 * before a request is spent on it.
 */

/**
 * Models known to take text only, by name (without provider prefix). A model not listed is
 * assumed to take images; a provider that refuses them answers 400, which the model call
 * reports with a hint (see {@link imageRefusalHint}).
 */
const TEXT_ONLY = [
  /^gpt-3\.5/,
  /^gpt-4-(0314|0613|32k)/,
  /^gpt-4$/,
  /^o1-(mini|preview)/,
  /^o3-mini/,
  /^deepseek-(chat|reasoner|coder)/,
  /^claude-(instant|2)/,
  /^text-/,
];

/** Whether a model takes images as far as we know (`openai:gpt-3.5-turbo` does not). */
export function acceptsImages(model: string): boolean {
  const name = model.replace(/^[a-z-]+:/, '').replace(/^.*\//, '');
  return !TEXT_ONLY.some((re) => re.test(name));
}

/** Whether any message carries images. */
export function hasImages(messages: readonly ChatMessage[]): boolean {
  return messages.some((m) => (m.role === 'user' || m.role === 'tool') && (m.images?.length ?? 0) > 0);
}

/**
 * The messages as the adapters take them: every image as a URL (blobs read from the store and
 * inlined as `data:` URLs). For a model that takes no images, a user's images fail the call
 * (the user meant the model to see them; `ModelCall.ImagesUnsupported`, not retried), and a
 * tool's are left out with a note in its result, so the run goes on.
 */
export async function withImageUrls(
  messages: readonly ChatMessage[],
  model: string,
  store: BlobStore,
  /** The provider's name of the model, when `model` is a named model's. */
  providerModel = model,
): Promise<ChatMessage[]> {
  if (!hasImages(messages)) return [...messages];
  const accepts = acceptsImages(providerModel);
  if (!accepts && messages.some((m) => m.role === 'user' && m.images?.length)) {
    throw new ModelCallError(
      'images_unsupported',
      `the model ${model} does not take images, and the conversation has some: use a model that does (e.g. openai:gpt-4.1, anthropic:claude-sonnet-4-5, a vision model of your server), or send the message without images`,
    );
  }
  const inline = new Map<string, Promise<string>>();
  const urlOf = (image: ImageRef) => {
    const key = image.blob ?? image.url ?? '';
    if (!inline.has(key)) inline.set(key, imageUrl(image, store));
    return inline.get(key)!;
  };
  return Promise.all(
    messages.map(async (m): Promise<ChatMessage> => {
      if ((m.role !== 'user' && m.role !== 'tool') || !m.images?.length) return m;
      if (!accepts && m.role === 'tool') {
        const { images, ...rest } = m;
        return {
          ...rest,
          content: `${m.content}\n[${images.length} image(s) left out: ${model} does not take images]`,
        };
      }
      let images: ImageRef[];
      try {
        images = await Promise.all(m.images.map(async (image) => ({ ...image, url: await urlOf(image) })));
      } catch (err) {
        if (err instanceof BlobNotFoundError) throw new ModelCallError('image_not_found', err.message, { cause: err });
        throw err;
      }
      return { ...m, images };
    }),
  );
}

/**
 * A provider's refusal of a request that carried images, with the likely reason: most 400s on
 * such a request are a model that takes no images, or an image it cannot read.
 */
export function imageRefusalHint(err: unknown, messages: readonly ChatMessage[], model: string): unknown {
  if (!isModelCallError(err) || err.kind !== 'bad_request' || !hasImages(messages)) return err;
  return new ModelCallError(
    'bad_request',
    `${err.message} (the request carried images: does ${model} take images? If not, use a model that does)`,
    { cause: err },
  );
}

/** The media type and base64 data of a `data:` URL, or undefined for another URL. */
export function dataUrlParts(url: string): { mediaType: string; data: string } | undefined {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return match ? { mediaType: match[1], data: match[2] } : undefined;
}

/**
 * The URL an adapter sends for an image: an http(s) URL, or a `data:` URL (the model-call
 * activity inlines blobs as such). A blob still by reference here was not read from the store:
 * outside a workflow, give images as URLs or data URLs.
 */
export function imageUrlOf(image: ImageRef): string {
  if (image.url) return image.url;
  throw new Error(
    `image ${image.blob ?? '(no url)'} is a blob reference, which only the model-call activity reads from the blob store; outside a workflow, give the image as an http(s) or data: URL`,
  );
}
