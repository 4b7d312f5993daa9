import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { IMAGE_MEDIA_TYPES, imageRefProblem, MAX_IMAGES_PER_MESSAGE } from '../core/messages/images';
import type { ImageRef } from '../core/messages/chat-message';
import type { BlobStore } from './blob-store';

/**
 * Images as clients take them, and as workers send them: bytes, data URLs and files become blobs
 * in the blob store and a reference (an {@link ImageRef}) before anything starts, so a history
 * only ever holds the reference; the model-call activity turns a reference back into bytes.
 */

/**
 * An image as a client takes it:
 * - a string: an `http(s)` URL (the provider fetches it) or a `data:image/...;base64,` URL;
 * - `{ data, mediaType?, name? }`: the bytes (their type is read from them: PNG, JPEG, GIF, WebP);
 * - an {@link ImageRef}, as stored before.
 */
export type ImageInput = string | ImageRef | { data: Uint8Array; mediaType?: string; name?: string };

/** The largest image a client stores: 20 MB, what OpenAI and Gemini take inline (Anthropic: 5 MB). */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

/** An image a client cannot take, with what is wrong (the message names the fix). */
export class ImageInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImageInputError';
  }
}

/**
 * Stores what needs storing and returns the references, in order; undefined for no images.
 * Throws an {@link ImageInputError} for an image it cannot take (unknown type, too large, a
 * string that is neither an http(s) nor a data URL).
 */
export async function storeImages(
  images: readonly ImageInput[] | undefined,
  store: BlobStore,
): Promise<ImageRef[] | undefined> {
  if (!images || images.length === 0) return undefined;
  if (images.length > MAX_IMAGES_PER_MESSAGE)
    throw new ImageInputError(`${images.length} images; a message may carry at most ${MAX_IMAGES_PER_MESSAGE}`);
  return Promise.all(images.map((image, i) => storeImage(image, store, i)));
}

async function storeImage(image: ImageInput, store: BlobStore, index: number): Promise<ImageRef> {
  const which = `image ${index + 1}`;
  if (typeof image === 'string') {
    if (image.startsWith('data:')) {
      const { bytes, mediaType } = parseDataUrl(image, which);
      return storeBytes(bytes, mediaType, undefined, store, which);
    }
    if (/^https?:\/\/\S+$/i.test(image)) return { url: image };
    throw new ImageInputError(
      `${which} is neither an http(s) URL nor a data URL: ${JSON.stringify(image.slice(0, 80))} (the CLI takes file paths; in code pass the bytes as { data })`,
    );
  }
  if (image === null || typeof image !== 'object') throw new ImageInputError(`${which} must be a string or an object`);
  if ('data' in image) {
    if (!(image.data instanceof Uint8Array))
      throw new ImageInputError(`${which}: "data" must be a Uint8Array (a Buffer)`);
    return storeBytes(image.data, image.mediaType, image.name, store, which);
  }
  if (typeof image.url === 'string' && image.url.startsWith('data:')) {
    const { bytes, mediaType } = parseDataUrl(image.url, which);
    return storeBytes(bytes, mediaType, image.name, store, which);
  }
  const problem = imageRefProblem(image);
  if (problem) throw new ImageInputError(`${which}: ${problem}`);
  return image;
}

async function storeBytes(
  bytes: Uint8Array,
  given: string | undefined,
  name: string | undefined,
  store: BlobStore,
  which: string,
): Promise<ImageRef> {
  if (bytes.byteLength === 0) throw new ImageInputError(`${which} is empty`);
  if (bytes.byteLength > MAX_IMAGE_BYTES)
    throw new ImageInputError(
      `${which}${name ? ` (${name})` : ''} is ${(bytes.byteLength / 1024 / 1024).toFixed(1)} MB; an image may be at most ${MAX_IMAGE_BYTES / 1024 / 1024} MB: scale it down`,
    );
  // The bytes say what they are (a provider refuses a JPEG sent as PNG); a stated type only names a refusal.
  const mediaType = sniffImageType(bytes);
  if (!mediaType)
    throw new ImageInputError(
      `${which}${name ? ` (${name})` : ''} is ${given && !(IMAGE_MEDIA_TYPES as readonly string[]).includes(given) ? `of type ${given}` : 'not an image of a known type'}; models take ${IMAGE_MEDIA_TYPES.join(', ')}`,
    );
  const ref: ImageRef = { blob: await store.put(bytes), mediaType, bytes: bytes.byteLength };
  if (name) ref.name = name;
  return ref;
}

/** The bytes and type of a `data:image/png;base64,...` URL. */
export function parseDataUrl(url: string, which = 'the image'): { bytes: Uint8Array; mediaType?: string } {
  const match = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s.exec(url);
  if (!match) throw new ImageInputError(`${which} is not a valid data URL (data:image/png;base64,...)`);
  if (!match[2].split(';').includes('base64'))
    throw new ImageInputError(`${which} is a data URL without ";base64": images are sent base64-encoded`);
  return { bytes: Buffer.from(match[3], 'base64'), mediaType: match[1] || undefined };
}

/** The image type of some bytes by their signature (PNG, JPEG, GIF, WebP), or undefined. */
export function sniffImageType(bytes: Uint8Array): string | undefined {
  const b = bytes;
  if (b.length >= 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) return 'image/png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 6 && String.fromCharCode(...b.subarray(0, 4)) === 'GIF8') return 'image/gif';
  if (
    b.length >= 12 &&
    String.fromCharCode(...b.subarray(0, 4)) === 'RIFF' &&
    String.fromCharCode(...b.subarray(8, 12)) === 'WEBP'
  )
    return 'image/webp';
  return undefined;
}

/** An image file or URL as the CLI takes it: a URL as it is, a file as its bytes and name. */
export async function readImageArgument(arg: string): Promise<ImageInput> {
  if (/^(https?:|data:)/i.test(arg)) return arg;
  try {
    return { data: await readFile(arg), name: basename(arg) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ImageInputError(
      code === 'ENOENT' ? `--image ${arg}: no such file` : `--image ${arg}: cannot read it (${(err as Error).message})`,
    );
  }
}

/**
 * An image as the model-call activity sends it: a URL as it is, a blob as a `data:` URL of its
 * bytes, read from the store.
 */
export async function imageUrl(image: ImageRef, store: BlobStore): Promise<string> {
  if (image.url) return image.url;
  const bytes = await store.get(image.blob!);
  return `data:${image.mediaType};base64,${Buffer.from(bytes).toString('base64')}`;
}
