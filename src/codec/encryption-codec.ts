import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { type DataConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { EncryptionMismatch } from './encryption-mismatch';

export { EncryptionMismatch } from './encryption-mismatch';

/** One AES-256 key and the id stored with what it encrypted (so the right key decrypts it, after rotation too). */
export interface EncryptionKey {
  id: string;
  /** 32 bytes. */
  key: Buffer;
}

/** `metadata.encoding` of an encrypted payload. */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
const CIPHER = 'AES256-GCM';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Parses `id:base64key,id:base64key,...` (each key 32 bytes, e.g. `openssl rand -base64 32`).
 * The first key encrypts; all of them decrypt, so a new key goes first and old ones stay until
 * nothing they encrypted is needed. Errors name the entry, never a key.
 */
export function parseEncryptionKeys(raw: string, name = 'AGENT_ENCRYPTION_KEYS'): EncryptionKey[] {
  const entries = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (entries.length === 0)
    throw new Error(`${name} is empty: give id:base64key pairs, e.g. k1:$(openssl rand -base64 32)`);
  const keys = entries.map((entry, i) => {
    const at = entry.indexOf(':');
    const id = at > 0 ? entry.slice(0, at) : '';
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(id))
      throw new Error(
        `${name}: entry ${i + 1} must be id:base64key with an id of letters, digits, _ . - (got ${at > 0 ? `id "${id}"` : 'no id'})`,
      );
    const key = Buffer.from(entry.slice(at + 1), 'base64');
    if (key.length !== 32)
      throw new Error(
        `${name}: key "${id}" is ${key.length} bytes once base64-decoded; AES-256 needs 32 (openssl rand -base64 32)`,
      );
    return { id, key };
  });
  const ids = keys.map((k) => k.id);
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice) throw new Error(`${name}: key id "${twice}" is given twice`);
  return keys;
}

/** The keys of `AGENT_ENCRYPTION_KEYS`, or undefined when it is not set (no encryption). */
export function encryptionKeysFromEnv(env: NodeJS.ProcessEnv): EncryptionKey[] | undefined {
  const raw = env.AGENT_ENCRYPTION_KEYS;
  return raw === undefined || raw.trim() === '' ? undefined : parseEncryptionKeys(raw);
}

/**
 * A payload codec that encrypts every payload with AES-256-GCM: a random 96-bit nonce per
 * payload, the key id in the metadata, the whole original payload (its metadata too) inside the
 * ciphertext, and GCM's tag checked on the way back, so a changed byte fails loudly. Hand-written
 * on `node:crypto`, as Temporal's own samples do: the SDK ships the codec interface, not a cipher.
 */
export class EncryptionCodec implements PayloadCodec {
  private readonly byId: Map<string, Buffer>;

  constructor(
    private readonly keys: readonly EncryptionKey[],
    /**
     * `true`: refuse payloads that are not encrypted (workers, so that nothing a client without
     * the keys sent is run, see {@link encryptingDataConverter}). Default false: they pass
     * through, as the codec server must let the UI show them.
     */
    private readonly requireEncryption = false,
  ) {
    if (keys.length === 0) throw new Error('EncryptionCodec needs at least one key');
    this.byId = new Map(keys.map((k) => [k.id, k.key]));
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const { id, key } = this.keys[0];
    return payloads.map((payload) => {
      const plain = temporal.api.common.v1.Payload.encode(payload).finish();
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      const data = Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return {
        metadata: {
          encoding: Buffer.from(ENCRYPTED_ENCODING),
          'encryption-cipher': Buffer.from(CIPHER),
          'encryption-key-id': Buffer.from(id),
        },
        data,
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (Buffer.from(payload.metadata?.encoding ?? []).toString() !== ENCRYPTED_ENCODING) {
        if (!this.requireEncryption) return payload;
        throw new EncryptionMismatch(
          'a payload is not encrypted, and this worker requires encryption (AGENT_ENCRYPTION_KEYS is set): a client without the keys sent it. ' +
            'Give that client the same AGENT_ENCRYPTION_KEYS, or set AGENT_ENCRYPTION_ALLOW_PLAINTEXT=1 on the workers while clients move over.',
        );
      }
      const id = Buffer.from(payload.metadata?.['encryption-key-id'] ?? []).toString();
      const key = this.byId.get(id);
      if (!key)
        throw new EncryptionMismatch(
          `a payload is encrypted with key "${id}", which is not among the configured keys (${[...this.byId.keys()].join(', ')}); add it to AGENT_ENCRYPTION_KEYS`,
        );
      const data = Buffer.from(payload.data ?? []);
      if (data.length < NONCE_BYTES + TAG_BYTES)
        throw new EncryptionMismatch(`an encrypted payload (key "${id}") is too short to be one`);
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, NONCE_BYTES));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      let plain: Buffer;
      try {
        plain = Buffer.concat([decipher.update(data.subarray(NONCE_BYTES, data.length - TAG_BYTES)), decipher.final()]);
      } catch {
        throw new EncryptionMismatch(
          `an encrypted payload (key "${id}") does not decrypt: it was changed, or the key "${id}" is not the one that encrypted it`,
        );
      }
      return temporal.api.common.v1.Payload.decode(plain) as Payload;
    });
  }
}

/**
 * The data converter of workers and clients that keep content confidential: every payload
 * through {@link EncryptionCodec}, and failure messages and stack traces moved into an (encrypted)
 * payload, since tool and model errors can quote what the agent was told. Failures about the keys
 * themselves stay readable (see `encoded-failure-converter`): a worker with the wrong keys must
 * not write what its peers cannot read.
 *
 * `requireEncryption` (workers: true unless `AGENT_ENCRYPTION_ALLOW_PLAINTEXT`) refuses payloads
 * that are not encrypted: the workflow task fails, saying so, and nothing sent in plaintext runs.
 */
export function encryptingDataConverter(
  keys: readonly EncryptionKey[],
  base: DataConverter = {},
  requireEncryption = false,
): DataConverter {
  return {
    ...base,
    payloadCodecs: [...(base.payloadCodecs ?? []), new EncryptionCodec(keys, requireEncryption)],
    failureConverterPath: encodedFailureConverterPath(),
  };
}

/** Whether `AGENT_ENCRYPTION_ALLOW_PLAINTEXT` lets encrypting workers accept unencrypted payloads (a migration period). */
export function plaintextAllowedFromEnv(env: NodeJS.ProcessEnv): boolean {
  return /^(1|true|yes)$/i.test(env.AGENT_ENCRYPTION_ALLOW_PLAINTEXT ?? '');
}

/** The module of the failure converter that encrypting workers use (also for `bundleWorkflowCode`). */
export function encodedFailureConverterPath(): string {
  return require.resolve('./encoded-failure-converter');
}
