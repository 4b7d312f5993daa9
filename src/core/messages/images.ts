import type { ImageRef } from './chat-message';

/**
 * What an image reference may be, checked where inputs enter (clients, the workflows): the
 * bytes are stored before a run starts, so a reference that carries bytes (a data URL) or points
 * nowhere is refused with what to do instead.
 */

/** The image types every provider adapter can send: what Anthropic, OpenAI and Gemini all accept. */
export const IMAGE_MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;

/** The most images one message may carry (Anthropic takes up to 100 a request, OpenAI 500). */
export const MAX_IMAGES_PER_MESSAGE = 20;

/** A blob reference: the SHA-256 of the bytes, in hex. */
const BLOB_REF = /^sha256:[0-9a-f]{64}$/;

/** What is wrong with a message's `images`, or undefined when they are fine. */
export function imagesProblem(images: unknown): string | undefined {
  if (images === undefined) return undefined;
  if (!Array.isArray(images)) return '"images" must be an array of image references';
  if (images.length > MAX_IMAGES_PER_MESSAGE)
    return `"images" holds ${images.length} images; a message may carry at most ${MAX_IMAGES_PER_MESSAGE}`;
  for (const [i, image] of images.entries()) {
    const problem = imageRefProblem(image);
    if (problem) return `"images"[${i}]: ${problem}`;
  }
  return undefined;
}

/** What is wrong with one image reference, or undefined. */
export function imageRefProblem(image: unknown): string | undefined {
  if (image === null || typeof image !== 'object' || Array.isArray(image))
    return 'an image must be an object with a "url" or a "blob"';
  const { url, blob, mediaType } = image as ImageRef;
  if ((url === undefined) === (blob === undefined)) return 'an image has either a "url" or a "blob", not both';
  if (url !== undefined) {
    if (typeof url !== 'string') return '"url" must be a string';
    if (url.startsWith('data:'))
      return 'a data URL carries the bytes, which must not enter the history: pass it to the client (startAgentRun, sendMessage, the HTTP API or the CLI), which stores it and sends a reference';
    if (!/^https?:\/\/\S+$/i.test(url)) return `"url" must be an http(s) URL, got ${JSON.stringify(url.slice(0, 80))}`;
  }
  if (blob !== undefined && (typeof blob !== 'string' || !BLOB_REF.test(blob)))
    return '"blob" must be "sha256:" and the 64 hex digits of the bytes\' hash';
  if (blob !== undefined && mediaType === undefined) return 'a blob needs its "mediaType"';
  if (mediaType !== undefined && !(IMAGE_MEDIA_TYPES as readonly unknown[]).includes(mediaType))
    return `"mediaType" must be one of ${IMAGE_MEDIA_TYPES.join(', ')}, got ${JSON.stringify(mediaType)}`;
  return undefined;
}

/** How an image is named in transcripts and logs: `[image photo.png]`, `[image https://…]`. */
export function imageLabel(image: ImageRef): string {
  return `[image ${image.name ?? image.url ?? image.mediaType ?? ''}]`;
}
