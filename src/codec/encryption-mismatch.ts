/** The error name (and failure type) of {@link EncryptionMismatch}, which failure converters look for. */
export const ENCRYPTION_MISMATCH = 'Encryption.Mismatch';

/**
 * A payload this process cannot, or may not, decode: encrypted with a key it lacks, changed in
 * storage, or not encrypted where encryption is required. A configuration problem, not content:
 * its message is written as it is, unencrypted, so that every process can read what went wrong
 * (see `encoded-failure-converter`). Kept apart from the codec so workflow code can load it.
 */
export class EncryptionMismatch extends Error {
  constructor(message: string) {
    super(message);
    this.name = ENCRYPTION_MISMATCH;
  }
}

/** Whether `err` (or one of its causes) is an {@link EncryptionMismatch}, by name or failure type: errors cross realms and get wrapped. */
export function isEncryptionMismatch(err: unknown): boolean {
  for (
    let e = err as { name?: unknown; type?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 8;
    e = e.cause as typeof e, depth++
  ) {
    if (e.name === ENCRYPTION_MISMATCH || e.type === ENCRYPTION_MISMATCH) return true;
  }
  return false;
}
