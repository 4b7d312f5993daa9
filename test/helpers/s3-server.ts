import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

/**
 * A real S3-compatible server (s3rver) on loopback, with one bucket, its objects in a temporary
 * directory; and the environment that points the payload store at it.
 */
export async function startS3Server(bucket = 'payloads'): Promise<{
  env: NodeJS.ProcessEnv;
  directory: string;
  close: () => Promise<void>;
}> {
  const directory = mkdtempSync(join(tmpdir(), 's3rver-'));
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const { port } = await server.run();
  return {
    env: {
      AGENT_PAYLOAD_STORE: `s3://${bucket}/agents`,
      AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}`,
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_REGION: 'us-east-1',
    },
    directory,
    close: () => server.close(),
  };
}
