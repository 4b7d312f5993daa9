import { createHash } from 'node:crypto';
import { appendFile, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import {
  StorageDriverClaim,
  type Payload,
  type StorageDriver,
  type StorageDriverRetrieveContext,
  type StorageDriverStoreContext,
} from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { writeWhole } from './blob-store';
import { claimKey, workflowIndexKey } from './payload-removal';

/**
 * A storage driver for Temporal's External Storage that keeps payloads as files in a directory:
 * the embedded default, for one machine (workers and clients that share a disk). Hand-written:
 * Temporal ships the driver interface and an S3 driver, not a filesystem one. Payloads are
 * content-addressed (the SHA-256 of their serialized bytes, as Temporal's S3 driver does), written
 * to a temporary file and renamed into place, and checked against their hash when read.
 *
 * @experimental Temporal's External Storage is experimental.
 */
export class FileStorageDriver implements StorageDriver {
  readonly name: string;
  readonly type = 'durable-agents.file';
  readonly dir: string;

  constructor(dir: string, name = 'durable-agents.file') {
    this.dir = resolve(dir);
    this.name = name;
  }

  async store(context: StorageDriverStoreContext, payloads: Payload[]): Promise<StorageDriverClaim[]> {
    const claims = await Promise.all(
      payloads.map(async (payload) => {
        const bytes = temporal.api.common.v1.Payload.encode(payload).finish();
        const hash = createHash('sha256').update(bytes).digest('hex');
        await writeWhole(this.pathOf(hash), bytes);
        return new StorageDriverClaim({ hash });
      }),
    );
    // Which workflow stored them (its history may not refer to them: a query's answer), so a
    // purge of its copies finds them all (see removeWorkflowPayloads).
    const target = context.target;
    if (target?.kind === 'workflow' && target.id) {
      const index = this.indexOf(target.namespace, target.id);
      await mkdir(dirname(index), { recursive: true });
      await appendFile(index, claims.map((c) => `${c.claimData.hash}\n`).join(''));
    }
    return claims;
  }

  /** Removes every payload the workflow stored (see `PayloadRemover.removeWorkflowPayloads`), and its index. */
  async removeWorkflowPayloads(namespace: string, workflowId: string, keep?: ReadonlySet<string>): Promise<number> {
    const index = this.indexOf(namespace, workflowId);
    let listed: string;
    try {
      listed = await readFile(index, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
    const hashes = [...new Set(listed.split('\n').filter((h) => /^[0-9a-f]{64}$/.test(h)))];
    const kept = hashes.filter((hash) => keep?.has(claimKey({ hash })));
    const removed = await this.removePayloads(
      hashes.filter((hash) => !kept.includes(hash)).map((hash) => new StorageDriverClaim({ hash })),
    );
    if (kept.length) await writeFile(index, kept.map((hash) => `${hash}\n`).join(''));
    else await unlink(index).catch(() => undefined);
    return removed;
  }

  private indexOf(namespace: string, workflowId: string): string {
    return join(this.dir, 'by-workflow', workflowIndexKey(namespace, workflowId));
  }

  async retrieve(_context: StorageDriverRetrieveContext, claims: StorageDriverClaim[]): Promise<Payload[]> {
    return Promise.all(
      claims.map(async (claim) => {
        const hash = claim.claimData.hash ?? '';
        if (!/^[0-9a-f]{64}$/.test(hash))
          throw new Error(`not a payload claim of ${this.name}: ${JSON.stringify(claim.claimData)}`);
        let bytes: Buffer;
        try {
          bytes = await readFile(this.pathOf(hash));
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
          throw new Error(
            `payload ${hash} is not in ${this.dir}: it was stored on another machine (or the directory was cleared). Workers and clients on several machines need a shared store: AGENT_PAYLOAD_STORE=s3://bucket/prefix`,
          );
        }
        if (createHash('sha256').update(bytes).digest('hex') !== hash)
          throw new Error(`payload ${hash} in ${this.dir} is damaged: its bytes do not match`);
        return temporal.api.common.v1.Payload.decode(bytes) as Payload;
      }),
    );
  }

  /**
   * Removes stored payloads by their claims (a deletion of memory purging closed workflows that
   * held a user's facts: see `removeStoredPayloads`); answers how many were there.
   */
  async removePayloads(claims: readonly StorageDriverClaim[]): Promise<number> {
    let removed = 0;
    for (const claim of claims) {
      const hash = claim.claimData.hash ?? '';
      if (!/^[0-9a-f]{64}$/.test(hash)) continue;
      try {
        await unlink(this.pathOf(hash));
        removed++;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
    return removed;
  }

  private pathOf(hash: string): string {
    return join(this.dir, hash.slice(0, 2), hash);
  }
}
