import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { httpAccessFromEnv, isLoopback } from '../http/access';
import { createCodecServer } from '../http/codec-server';
import { EncryptionCodec, encryptionKeysFromEnv } from '../codec/encryption-codec';

/** The embedded dev server's Web UI, the default origin allowed to call the codec server. */
const EMBEDDED_UI_ORIGIN = 'http://localhost:8233';

/**
 * `npm run codec-server` / `durable-agents codec-server`: decodes payloads encrypted with
 * `AGENT_ENCRYPTION_KEYS` for the Temporal UI and CLI. `CODEC_PORT` (8888) and `CODEC_HOST`
 * (127.0.0.1); tokens from `AGENT_CODEC_TOKENS` (its own, not the HTTP API's); allowed UI
 * origins from `AGENT_CODEC_CORS_ORIGINS` (default the embedded UI, http://localhost:8233).
 */
export async function serveCodec(env: NodeJS.ProcessEnv): Promise<void> {
  const keys = encryptionKeysFromEnv(env);
  if (!keys)
    throw new Error(
      "AGENT_ENCRYPTION_KEYS is not set: the codec server decrypts with the workers' keys (id:base64key,...)",
    );
  const access = httpAccessFromEnv({
    AGENT_HTTP_TOKENS: env.AGENT_CODEC_TOKENS,
    AGENT_HTTP_CORS_ORIGINS: env.AGENT_CODEC_CORS_ORIGINS ?? EMBEDDED_UI_ORIGIN,
    AGENT_HTTP_RATE_LIMIT: env.AGENT_CODEC_RATE_LIMIT,
    AGENT_ALLOWED_HOSTS: env.AGENT_ALLOWED_HOSTS,
  });
  const port = env.CODEC_PORT ? Number(env.CODEC_PORT) : 8888;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`CODEC_PORT must be a port number (0-65535), got "${env.CODEC_PORT}"`);
  const host = env.CODEC_HOST || '127.0.0.1';
  const open = !access.tokens?.length;
  if (open && !isLoopback(host))
    throw new Error(
      `CODEC_HOST=${host} would let anyone on the network decrypt: set AGENT_CODEC_TOKENS or listen on 127.0.0.1`,
    );
  const server = createCodecServer({ codec: new EncryptionCodec(keys), access });
  server.listen(port, host);
  const [err] = await Promise.race([once(server, 'listening').then(() => [undefined]), once(server, 'error')]);
  if (err)
    throw new Error(
      (err as NodeJS.ErrnoException).code === 'EADDRINUSE'
        ? `port ${port} is in use on ${host}; set CODEC_PORT to another port`
        : `cannot listen on ${host}:${port}: ${(err as Error).message}`,
    );
  const { address, port: bound } = server.address() as AddressInfo;
  const endpoint = `http://${address.includes(':') ? `[${address}]` : address}:${bound}`;
  console.log(
    `durable-agents codec server on ${endpoint} (keys: ${keys.map((k) => k.id).join(', ')}; UI origins: ${access.corsOrigins?.join(', ') || 'none'})`,
  );
  console.log(
    open
      ? 'No AGENT_CODEC_TOKENS: loopback only, anyone on this machine can decode.'
      : `Token required (${access.tokens!.length} configured).`,
  );
  console.log(
    `Temporal UI: Settings (the gear) > Codec Server > endpoint ${endpoint}${open ? '' : `, "Include cross-origin credentials" on; then open ${endpoint}/?access_token=<token> once in the same browser`}.`,
  );
  console.log(
    `temporal CLI: temporal workflow show -w <id> --codec-endpoint ${endpoint}${open ? '' : " --codec-auth 'Bearer <token>'"}`,
  );
  console.log('Press Ctrl+C to stop.');
  await Promise.race([once(process, 'SIGINT'), once(process, 'SIGTERM')]);
  server.close();
  server.closeAllConnections();
}
