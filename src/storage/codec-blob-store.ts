import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { BlobStore } from './blob-store';

/**
 * A blob store whose blobs go through payload codecs, as payloads do: with the encryption codec
 * (`AGENT_ENCRYPTION_KEYS`) an image is as confidential in the store as the messages are in the
 * history. Each blob is stored as an encoded payload, so the references name the encoded bytes
 * (a random nonce makes each copy different: the same image stored twice is two blobs), and the
 * codec's own checks (GCM's tag, the key id) apply on the way back.
 */
export class CodecBlobStore implements BlobStore {
  readonly location: string;

  constructor(
    private readonly inner: BlobStore,
    /** Applied in order on the way in, in reverse on the way out, as a data converter's codecs. */
    private readonly codecs: readonly PayloadCodec[],
  ) {
    this.location = inner.location;
    // Scoped when the store it wraps is: a scope's blobs go through the same codecs.
    if (inner.scope) this.scope = (name) => new CodecBlobStore(inner.scope!(name), codecs);
    if (inner.removeScope) this.removeScope = (name) => inner.removeScope!(name);
  }

  readonly scope?: (name: string) => BlobStore;
  readonly removeScope?: (name: string) => Promise<number>;

  async put(bytes: Uint8Array): Promise<string> {
    let payloads: Payload[] = [{ metadata: { encoding: Buffer.from('binary/plain') }, data: bytes }];
    for (const codec of this.codecs) payloads = await codec.encode(payloads);
    return this.inner.put(temporal.api.common.v1.Payload.encode(payloads[0]).finish());
  }

  async get(ref: string): Promise<Uint8Array> {
    const stored = await this.inner.get(ref);
    let payload: Payload;
    try {
      payload = temporal.api.common.v1.Payload.decode(stored) as Payload;
    } catch {
      // Not a payload: stored by a client without codecs (a migration to encryption, say).
      return stored;
    }
    // Every payload this store writes names its encoding: bytes that happen to parse are raw too.
    if (!payload.metadata?.encoding) return stored;
    let payloads: Payload[] = [payload];
    for (const codec of [...this.codecs].reverse()) payloads = await codec.decode(payloads);
    return payloads[0].data ?? new Uint8Array();
  }
}
