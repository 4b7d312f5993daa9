import type { ImageRef } from '../core/messages/chat-message';
import type { BlobStore } from '../storage/blob-store';
import { clientSettings } from '../connection/settings';
import { ImageInputError, storeImages, type ImageInput } from '../storage/images';
import { ClientError } from './client-error';
import { CodecBlobStore } from '../storage/codec-blob-store';
import type { Client } from '@temporalio/client';

/**
 * A message's images as a workflow takes them: references, the bytes stored in `store` (default:
 * {@link clientBlobStore}). An image the client cannot take is refused as `invalid` before
 * anything starts.
 */
export async function storedImages(
  client: Client,
  images: readonly ImageInput[] | undefined,
  store?: BlobStore,
): Promise<ImageRef[] | undefined> {
  if (images !== undefined && !Array.isArray(images))
    throw new ClientError('invalid', '"images" must be an array of URLs, data URLs or { data } objects');
  try {
    return await storeImages(images, store ?? clientBlobStore(client));
  } catch (err) {
    if (err instanceof ImageInputError) throw new ClientError('invalid', err.message);
    throw err;
  }
}

/**
 * The blob store a client writes by default: the store its settings name (`AGENT_BLOB_DIR`, see
 * `clientSettings`; the process's environment is read when a message brings images), through the
 * client's payload codecs (encryption), so an image is as confidential as the message it came
 * with. Workers with the same keys read it (`AgentsPlugin`).
 */
export function clientBlobStore(client: Client): BlobStore {
  const codecs = client.options.dataConverter?.payloadCodecs ?? [];
  const files = clientSettings().blobStore;
  return codecs.length ? new CodecBlobStore(files, codecs) : files;
}
