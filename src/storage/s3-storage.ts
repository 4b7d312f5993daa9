import { createHash } from 'node:crypto';
import {
  StorageDriverClaim,
  type Payload,
  type StorageDriver,
  type StorageDriverStoreContext,
} from '@temporalio/common';
import { BlobNotFoundError, blobRef, checkScope, type BlobStore } from './blob-store';
import { claimKey, workflowIndexKey, type PayloadRemover } from './payload-removal';

/**
 * Amazon S3 (or an S3-compatible server) as the payload store, on Temporal's own S3 driver
 * (`@temporalio/external-storage-s3`) and its AWS SDK client. They are optional dependencies,
 * loaded only when `AGENT_PAYLOAD_STORE=s3://...` asks for them, so installs without S3 stay small.
 */

/** The packages S3 needs, for the message when one is missing. */
const S3_PACKAGES = '@temporalio/external-storage-s3 @temporalio/external-storage-s3-aws-sdk @aws-sdk/client-s3';

/** The S3 client of Temporal's driver for `prefix`, from the standard AWS settings in `env`. */
function s3Client(options: { prefix: string; env: NodeJS.ProcessEnv }): {
  client: import('@temporalio/external-storage-s3').S3StorageDriverClient;
  driverModule: typeof import('@temporalio/external-storage-s3');
  deleteObject(bucket: string, key: string): Promise<void>;
  listKeys(bucket: string, under: string): Promise<string[]>;
} {
  let s3: typeof import('@aws-sdk/client-s3');
  let driverModule: typeof import('@temporalio/external-storage-s3');
  let awsClient: typeof import('@temporalio/external-storage-s3-aws-sdk');
  try {
    // Synchronous on purpose: data converters are built synchronously. Optional packages, so required here.
    /* eslint-disable @typescript-eslint/no-require-imports */
    s3 = require('@aws-sdk/client-s3');
    driverModule = require('@temporalio/external-storage-s3');
    awsClient = require('@temporalio/external-storage-s3-aws-sdk');
    /* eslint-enable @typescript-eslint/no-require-imports */
  } catch (err) {
    throw new Error(
      `AGENT_PAYLOAD_STORE=s3://... needs the S3 packages: npm install ${S3_PACKAGES} (${(err as Error).message.split('\n')[0]})`,
    );
  }
  const env = options.env;
  const endpoint = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined;
  const client = new s3.S3Client({
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    // Keys from the environment given (the process's by default); else the SDK's chain (profiles, roles).
    ...(env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
      ? {
          credentials: {
            accessKeyId: env.AWS_ACCESS_KEY_ID,
            secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
            ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
          },
        }
      : {}),
    // Checksums only where S3 requires them: S3-compatible servers do not all read the newer ones.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const inner = new awsClient.AwsSdkS3StorageDriverClient(client);
  const prefix = options.prefix ? `${options.prefix}/` : '';
  // Keys under the prefix keep them apart from the bucket's other objects.
  return {
    driverModule,
    client: {
      putObject: (bucket, key, data, o) => inner.putObject(bucket, prefix + key, data, o),
      objectExists: (bucket, key, o) => inner.objectExists(bucket, prefix + key, o),
      getObject: (bucket, key, o) => inner.getObject(bucket, prefix + key, o),
      describe: () => ({ ...inner.describe?.(), ...(prefix ? { prefix } : {}), ...(endpoint ? { endpoint } : {}) }),
    },
    // Temporal's driver client never deletes; a purge does (see `removeStoredPayloads`).
    deleteObject: async (bucket: string, key: string) => {
      await client.send(new s3.DeleteObjectCommand({ Bucket: bucket, Key: prefix + key }));
    },
    // The keys under `under` (without the prefix), for a purge's index of what a workflow stored.
    listKeys: async (bucket: string, under: string) => {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(
          new s3.ListObjectsV2Command({ Bucket: bucket, Prefix: prefix + under, ContinuationToken: token }),
        );
        for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key.slice(prefix.length));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return keys;
    },
  };
}

/**
 * Temporal's S3 driver for `bucket`, its keys under `prefix`. The client reads the standard AWS
 * settings (`AWS_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, profiles, roles);
 * `AWS_ENDPOINT_URL_S3` (or `AWS_ENDPOINT_URL`) points it at an S3-compatible server, addressed by
 * path as those servers expect.
 */
export function s3StorageDriver(options: { bucket: string; prefix: string; env: NodeJS.ProcessEnv }): StorageDriver {
  const { client, driverModule, deleteObject, listKeys } = s3Client(options);
  const driver = new driverModule.S3StorageDriver({ client, bucket: options.bucket }) as unknown as StorageDriver;
  const indexOf = (namespace: string, workflowId: string) => `by-workflow/${workflowIndexKey(namespace, workflowId)}/`;
  const store = driver.store.bind(driver);
  // What each workflow stored, as small objects of their own beside the payloads: a query's
  // answer is in no history, and a purge of the workflow's copies must find it too.
  driver.store = async (context: StorageDriverStoreContext, payloads: Payload[]) => {
    const claims = await store(context, payloads);
    const target = context.target;
    if (target?.kind === 'workflow' && target.id) {
      const under = indexOf(target.namespace, target.id);
      await Promise.all(
        claims.map((c) =>
          client.putObject(
            options.bucket,
            `${under}${createHash('sha256').update(JSON.stringify(c.claimData)).digest('hex')}`,
            Buffer.from(JSON.stringify(c.claimData)),
          ),
        ),
      );
    }
    return claims;
  };
  const removable: PayloadRemover = {
    // Its claims name their bucket and key (under the prefix the client adds).
    async removePayloads(claims) {
      let removed = 0;
      for (const { claimData } of claims) {
        if (!claimData.bucket || !claimData.key) continue;
        await deleteObject(claimData.bucket, claimData.key);
        removed++;
      }
      return removed;
    },
    async removeWorkflowPayloads(namespace, workflowId, keep) {
      const entries = await listKeys(options.bucket, indexOf(namespace, workflowId));
      let removed = 0;
      for (const entry of entries) {
        const claim = JSON.parse(Buffer.from(await client.getObject(options.bucket, entry)).toString('utf8')) as Record<
          string,
          string
        >;
        if (keep?.has(claimKey(claim))) continue;
        removed += await removable.removePayloads([new StorageDriverClaim(claim)]);
        await deleteObject(options.bucket, entry);
      }
      return removed;
    },
  };
  return Object.assign(driver, removable);
}

/**
 * A blob store in the same bucket, under `<prefix>/blobs/sha256/`: images go where the payloads go.
 * A scope's blobs (a run's workspace states) are under `<prefix>/blobs/scopes/<name>/sha256/`.
 */
export function s3BlobStore(options: { bucket: string; prefix: string; env: NodeJS.ProcessEnv }): BlobStore {
  const s3 = s3Client(options);
  return s3Blobs(s3, options.bucket, `${options.prefix ? `${options.prefix}/` : ''}`, 'blobs/');
}

function s3Blobs(s3: ReturnType<typeof s3Client>, bucket: string, prefix: string, under: string): BlobStore {
  const { client } = s3;
  const location = `s3://${bucket}/${prefix}${under.slice(0, -1)}`;
  const keyOf = (ref: string) => {
    const match = /^sha256:([0-9a-f]{64})$/.exec(ref);
    if (!match) throw new Error(`not a blob reference: ${JSON.stringify(ref)} (expected "sha256:" and 64 hex digits)`);
    return `${under}sha256/${match[1]}`;
  };
  const scopeOf = (name: string) => `blobs/scopes/${checkScope(name)}/`;
  return {
    location,
    async put(bytes) {
      const ref = blobRef(bytes);
      if (!(await client.objectExists(bucket, keyOf(ref)))) await client.putObject(bucket, keyOf(ref), bytes);
      return ref;
    },
    async get(ref) {
      if (!(await client.objectExists(bucket, keyOf(ref)))) throw new BlobNotFoundError(ref, location);
      const bytes = await client.getObject(bucket, keyOf(ref));
      if (blobRef(bytes) !== ref) throw new Error(`blob ${ref} in ${location} is damaged: its bytes do not match`);
      return bytes;
    },
    scope: (name) => s3Blobs(s3, bucket, prefix, scopeOf(name)),
    async removeScope(name) {
      const keys = await s3.listKeys(bucket, scopeOf(name));
      for (const key of keys) await s3.deleteObject(bucket, key);
      return keys.length;
    },
  };
}
