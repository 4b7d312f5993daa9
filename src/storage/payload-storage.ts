import { join } from 'node:path';
import { ExternalStorage, type StorageDriver } from '@temporalio/common';
import { FileStorageDriver } from './file-storage-driver';
import { s3StorageDriver } from './s3-storage';

/**
 * Where payloads too large for a workflow history go: Temporal's External Storage, which replaces
 * a payload over the threshold by a small claim in the history and stores it with a driver (a
 * 4 MB tool output, say: Temporal refuses payloads over 2 MB). Workers and clients configure the
 * same store, so either side reads what the other wrote.
 *
 *   AGENT_PAYLOAD_STORE      unset: files in `.temporal/payloads` (one machine, the embedded default);
 *                            a path or `file:///dir`: files there; `s3://bucket[/prefix]`: Amazon S3
 *                            (or any S3-compatible server: AWS_ENDPOINT_URL_S3), with the standard
 *                            AWS variables; `off`: none (payloads over 2 MB then fail)
 *   AGENT_PAYLOAD_THRESHOLD  the size from which a payload is stored, in bytes (default 65536, 64 KiB)
 */

/**
 * Default {@link payloadStorageFromEnv} threshold: 64 KiB. Well under Temporal's 2 MB limit per
 * payload, and low enough that a long run of medium tool outputs (300 of 100 KB) keeps its history
 * small: the limit that matters there is the history's (50 MB), not the payload's.
 */
export const DEFAULT_PAYLOAD_THRESHOLD = 64 * 1024;

/** The default directory of the file driver: `.temporal/payloads` under the working directory. */
export function defaultPayloadDir(cwd = process.cwd()): string {
  return join(cwd, '.temporal', 'payloads');
}

/** A payload store as `AGENT_PAYLOAD_STORE` names it, and where it is (for messages). */
export interface PayloadStore {
  storage: ExternalStorage;
  /** `files in /path`, `s3://bucket/prefix`. */
  where: string;
  /** Whether machines can share it (a file store is for one machine, or a shared volume). */
  shared: boolean;
}

/**
 * The External Storage configuration of `AGENT_PAYLOAD_STORE` and `AGENT_PAYLOAD_THRESHOLD`, or
 * undefined for `off`. Throws, naming the variable, on a value it cannot use.
 */
export function payloadStorageFromEnv(env: NodeJS.ProcessEnv): PayloadStore | undefined {
  const raw = (env.AGENT_PAYLOAD_STORE ?? '').trim();
  if (raw === 'off') return undefined;
  const threshold = payloadThreshold(env.AGENT_PAYLOAD_THRESHOLD);
  let driver: StorageDriver;
  let where: string;
  let shared = false;
  if (raw.startsWith('s3://')) {
    const url = new URL(raw);
    if (!url.hostname) throw new Error(`AGENT_PAYLOAD_STORE: "${raw}" names no bucket (s3://bucket/prefix)`);
    // The S3 driver and the AWS SDK are optional dependencies: s3-storage.ts loads them only now.
    driver = s3StorageDriver({ bucket: url.hostname, prefix: url.pathname.replace(/^\/+|\/+$/g, ''), env });
    where = raw;
    shared = true;
  } else if (raw === '' || raw.startsWith('file://') || !/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) {
    const dir = raw === '' ? defaultPayloadDir() : raw.startsWith('file://') ? new URL(raw).pathname : raw;
    driver = new FileStorageDriver(dir);
    where = `files in ${(driver as FileStorageDriver).dir}`;
  } else {
    throw new Error(
      `AGENT_PAYLOAD_STORE: "${raw}" is not a store: use a directory (or file:///dir), s3://bucket/prefix, or off`,
    );
  }
  return { storage: new ExternalStorage({ drivers: [driver], payloadSizeThreshold: threshold }), where, shared };
}

function payloadThreshold(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return DEFAULT_PAYLOAD_THRESHOLD;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) > 2 * 1024 * 1024 - 64 * 1024)
    throw new Error(
      `AGENT_PAYLOAD_THRESHOLD must be a number of bytes under Temporal's 2 MB payload limit (e.g. 65536), got "${raw}"`,
    );
  return Number(raw);
}
