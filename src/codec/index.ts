/**
 * `durable-agents/codec`: payload encryption (AES-256-GCM with rotating keys) for workers and
 * clients of your own, and the codec server that lets the Temporal UI and CLI show encrypted
 * payloads. The plugin, `createAgentWorker` and `connectTemporal` read `AGENT_ENCRYPTION_KEYS`
 * themselves; this is for code that builds its own clients or servers.
 */
export {
  EncryptionCodec,
  EncryptionMismatch,
  encryptingDataConverter,
  parseEncryptionKeys,
  encryptionKeysFromEnv,
  plaintextAllowedFromEnv,
  encodedFailureConverterPath,
  ENCRYPTED_ENCODING,
  type EncryptionKey,
} from './encryption-codec';
