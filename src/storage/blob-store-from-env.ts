import { FileBlobStore, defaultBlobDir, type BlobStore } from './blob-store';
import { s3BlobStore } from './s3-storage';

/**
 * The store clients and workers use unless given one: a {@link FileBlobStore} in `AGENT_BLOB_DIR`;
 * without it, the S3 bucket of `AGENT_PAYLOAD_STORE=s3://...` (images go where large payloads
 * go); else a {@link FileBlobStore} in {@link defaultBlobDir}.
 */
export function blobStoreFromEnv(env: NodeJS.ProcessEnv): BlobStore {
  const payloads = (env.AGENT_PAYLOAD_STORE ?? '').trim();
  if (!env.AGENT_BLOB_DIR && payloads.startsWith('s3://')) {
    const url = new URL(payloads);
    return s3BlobStore({ bucket: url.hostname, prefix: url.pathname.replace(/^\/+|\/+$/g, ''), env });
  }
  return new FileBlobStore(defaultBlobDir(env));
}
