import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { EncryptionCodec, type EncryptionKey } from '../codec/encryption-codec';

/**
 * A small JSON file of secrets (logins to MCP servers, tenants' credentials): written atomically,
 * mode 0600, and encrypted with the payload keys when there are any (so a copied file is no use
 * without them). Without a path, in memory (a test, a process that keeps them for itself).
 */
export class SealedJsonFile<T extends object> {
  private memory: T;

  constructor(
    readonly path: string | undefined,
    private readonly keys: readonly EncryptionKey[] | undefined,
    private readonly empty: () => T,
    /** What to do when the file is encrypted and there are no keys: the command that writes it anew. */
    private readonly rewrite: string,
  ) {
    this.memory = empty();
  }

  async read(): Promise<T> {
    if (!this.path) return structuredClone(this.memory);
    if (!existsSync(this.path)) return this.empty();
    const raw = readFileSync(this.path, 'utf8').trim();
    if (!raw) return this.empty();
    if (raw.startsWith('{')) return JSON.parse(raw) as T;
    if (!this.keys?.length)
      throw new Error(
        `${this.path} is encrypted: set AGENT_ENCRYPTION_KEYS to the keys it was written with (or write it again: ${this.rewrite})`,
      );
    const payload = temporal.api.common.v1.Payload.decode(Buffer.from(raw, 'base64')) as Payload;
    const [plain] = await new EncryptionCodec(this.keys).decode([payload]);
    return JSON.parse(Buffer.from(plain.data ?? []).toString('utf8')) as T;
  }

  async write(value: T): Promise<void> {
    if (!this.path) return void (this.memory = structuredClone(value));
    let text = JSON.stringify(value, null, 2);
    if (this.keys?.length) {
      const plain: Payload = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(text) };
      const [sealed] = await new EncryptionCodec(this.keys).encode([plain]);
      text = Buffer.from(temporal.api.common.v1.Payload.encode(sealed).finish()).toString('base64');
    }
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const temp = `${this.path}.${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(temp, `${text}\n`, { mode: 0o600 });
    renameSync(temp, this.path);
    chmodSync(this.path, 0o600);
  }
}
