import { randomBytes } from 'node:crypto';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import { failureConverter } from '../../src/codec/encoded-failure-converter';
import {
  EncryptionCodec,
  EncryptionMismatch,
  encryptionKeysFromEnv,
  parseEncryptionKeys,
  plaintextAllowedFromEnv,
} from '../../src/codec/encryption-codec';

const key = () => randomBytes(32).toString('base64');
const payload = defaultPayloadConverter.toPayload({ message: 'the secret plan', n: 42 });

describe('EncryptionCodec (AES-256-GCM)', () => {
  it('round-trips payloads, hiding their content and metadata, with a fresh nonce each time', async () => {
    const codec = new EncryptionCodec(parseEncryptionKeys(`k1:${key()}`));
    const [a, b] = await codec.encode([payload, payload]);
    expect(Buffer.from(a.metadata!.encoding!).toString()).toBe('binary/encrypted');
    expect(Buffer.from(a.metadata!['encryption-key-id']!).toString()).toBe('k1');
    expect(Buffer.from(a.data!).toString('latin1')).not.toContain('secret');
    expect(Buffer.from(a.data!).equals(Buffer.from(b.data!))).toBe(false);
    const [back] = await codec.decode([a]);
    expect(defaultPayloadConverter.fromPayload(back)).toEqual({ message: 'the secret plan', n: 42 });
  });

  it('rotates keys: the first encrypts, every key decrypts; a retired key cannot', async () => {
    const [oldKey, newKey] = [key(), key()];
    const before = new EncryptionCodec(parseEncryptionKeys(`old:${oldKey}`));
    const during = new EncryptionCodec(parseEncryptionKeys(`new:${newKey},old:${oldKey}`));
    const after = new EncryptionCodec(parseEncryptionKeys(`new:${newKey}`));
    const [sealedOld] = await before.encode([payload]);
    const [sealedNew] = await during.encode([payload]);
    expect(Buffer.from(sealedNew.metadata!['encryption-key-id']!).toString()).toBe('new');
    expect(defaultPayloadConverter.fromPayload((await during.decode([sealedOld]))[0])).toEqual({
      message: 'the secret plan',
      n: 42,
    });
    expect(defaultPayloadConverter.fromPayload((await after.decode([sealedNew]))[0])).toEqual({
      message: 'the secret plan',
      n: 42,
    });
    await expect(after.decode([sealedOld])).rejects.toThrow(
      'a payload is encrypted with key "old", which is not among the configured keys (new); add it to AGENT_ENCRYPTION_KEYS',
    );
  });

  it('refuses a payload changed in storage, and passes unencrypted ones through', async () => {
    const codec = new EncryptionCodec(parseEncryptionKeys(`k1:${key()}`));
    const [sealed] = await codec.encode([payload]);
    const data = Buffer.from(sealed.data!);
    data[20] ^= 1;
    await expect(codec.decode([{ ...sealed, data }])).rejects.toThrow(
      'an encrypted payload (key "k1") does not decrypt: it was changed, or the key "k1" is not the one that encrypted it',
    );
    expect(await codec.decode([payload])).toEqual([payload]);
  });

  it('refuses unencrypted payloads where encryption is required (workers), unless plaintext is allowed', async () => {
    const strict = new EncryptionCodec(parseEncryptionKeys(`k1:${key()}`), true);
    await expect(strict.decode([payload])).rejects.toThrow(EncryptionMismatch);
    await expect(strict.decode([payload])).rejects.toThrow(
      /^a payload is not encrypted, and this worker requires encryption \(AGENT_ENCRYPTION_KEYS is set\)/,
    );
    const [sealed] = await strict.encode([payload]);
    expect(defaultPayloadConverter.fromPayload((await strict.decode([sealed]))[0])).toEqual({
      message: 'the secret plan',
      n: 42,
    });
    expect([
      plaintextAllowedFromEnv({ AGENT_ENCRYPTION_ALLOW_PLAINTEXT: '1' }),
      plaintextAllowedFromEnv({ AGENT_ENCRYPTION_ALLOW_PLAINTEXT: 'true' }),
      plaintextAllowedFromEnv({}),
    ]).toEqual([true, true, false]);
  });

  it('writes failures about the keys as they are, and every other failure encoded (for the codec to encrypt)', () => {
    const mismatch = failureConverter.errorToFailure(
      new EncryptionMismatch('a payload is encrypted with key "k2", which is not among the configured keys (k9)'),
      defaultPayloadConverter,
    );
    expect(mismatch.message).toContain('not among the configured keys');
    expect(mismatch.encodedAttributes).toBeFalsy();
    // Wrapped, as the SDK wraps an activity's start failure.
    const wrapped = failureConverter.errorToFailure(
      ApplicationFailure.create({ message: 'x', type: 'Encryption.Mismatch' }),
      defaultPayloadConverter,
    );
    expect(wrapped.encodedAttributes).toBeFalsy();
    const secret = failureConverter.errorToFailure(new Error('the tool saw SECRET'), defaultPayloadConverter);
    expect(secret.message).toBe('Encoded failure');
    expect(secret.encodedAttributes).toBeTruthy();
  });

  it('parses AGENT_ENCRYPTION_KEYS strictly, never echoing a key', () => {
    expect(encryptionKeysFromEnv({})).toBeUndefined();
    expect(encryptionKeysFromEnv({ AGENT_ENCRYPTION_KEYS: ` a:${key()} , b:${key()} ` })!.map((k) => k.id)).toEqual([
      'a',
      'b',
    ]);
    expect(() => parseEncryptionKeys('nocolon')).toThrow(
      'AGENT_ENCRYPTION_KEYS: entry 1 must be id:base64key with an id of letters, digits, _ . - (got no id)',
    );
    expect(() => parseEncryptionKeys('k1:c2hvcnQ=')).toThrow(
      'AGENT_ENCRYPTION_KEYS: key "k1" is 5 bytes once base64-decoded; AES-256 needs 32 (openssl rand -base64 32)',
    );
    const k = key();
    expect(() => parseEncryptionKeys(`k1:${k},k1:${k}`)).toThrow('AGENT_ENCRYPTION_KEYS: key id "k1" is given twice');
    try {
      parseEncryptionKeys(`bad id:${k}`);
    } catch (err) {
      expect((err as Error).message).not.toContain(k);
    }
  });
});
