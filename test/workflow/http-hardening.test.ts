import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpApi } from '../../src/http/http-api';
import type { HttpAccessOptions } from '../../src/http/access';
import { signBody } from '../../src/http/webhook-signature';
import { createCodecServer, MAX_CODEC_PAYLOADS } from '../../src/http/codec-server';
import { EncryptionCodec, parseEncryptionKeys } from '../../src/codec/encryption-codec';
import { useTestTemporal } from '../helpers/temporal';

/**
 * The package's HTTP servers against hostile requests: names a web page rebinds to 127.0.0.1 (DNS
 * rebinding), pages of other sites, bodies declared too large, codec requests too large to
 * convert, and guesses of a webhook's secret.
 */
const temporal = useTestTemporal();

async function listening(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** A raw request, with the headers a browser (or an attacker) chooses, `Host` included. */
function send(
  port: number,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path, headers: options.headers },
      (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers }));
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

async function withApi(access: HttpAccessOptions, body: (port: number) => Promise<void>): Promise<void> {
  const server = createHttpApi({ client: temporal().client, taskQueue: 'nobody-polls-this', access });
  try {
    await body(await listening(server));
  } finally {
    server.close();
  }
}

describe('DNS rebinding and other sites', () => {
  it('the HTTP API without tokens answers only loopback names, and pages it serves or CORS allows', async () => {
    await withApi({}, async (port) => {
      const evil = await send(port, { path: '/agents', headers: { host: 'evil.example.com' } });
      expect(evil.status).toBe(403);
      expect(JSON.parse(evil.body)).toEqual({
        error:
          'this server does not answer to the name "evil.example.com" (a web page may be trying to reach it through DNS rebinding); if that is its name, add it to AGENT_ALLOWED_HOSTS',
        errorType: 'Http.ForbiddenHost',
      });
      // Let in, the request is routed: there is no such run (404).
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `app.localhost:${port}`])
        expect({ host, status: (await send(port, { path: '/runs/nope', headers: { host } })).status }).toEqual({
          host,
          status: 404,
        });
      // A run started from another site's page is refused before it starts; the API's own page may.
      const start = (origin: string) =>
        send(port, {
          method: 'POST',
          path: '/runs',
          headers: { host: `127.0.0.1:${port}`, origin, 'content-type': 'application/json' },
          body: '{}',
        });
      const other = await start('http://evil.example.com');
      expect(other.status).toBe(403);
      expect(JSON.parse(other.body).errorType).toBe('Http.ForbiddenOrigin');
      // (400: the empty input, checked once the request was let in.)
      expect((await start(`http://127.0.0.1:${port}`)).status).toBe(400);
    });
    await withApi({ corsOrigins: ['https://app.example.com'] }, async (port) => {
      const allowed = await send(port, {
        path: '/runs/nope',
        headers: { host: `127.0.0.1:${port}`, origin: 'https://app.example.com' },
      });
      expect(allowed.status).toBe(404);
      expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example.com');
    });
  });

  it('lets a page on this machine call the API on this machine straight, CORS included (a Vite page on localhost:5173)', async () => {
    for (const access of [{}, { tokens: ['a-token-of-twenty-chars'] }])
      await withApi(access, async (port) => {
        const page = 'http://localhost:5173';
        const preflight = await send(port, {
          method: 'OPTIONS',
          path: '/api/chat',
          headers: {
            host: `127.0.0.1:${port}`,
            origin: page,
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'content-type, authorization',
          },
        });
        expect(preflight.status).toBe(204);
        expect(preflight.headers).toMatchObject({
          'access-control-allow-origin': page,
          'access-control-allow-credentials': 'true',
          'access-control-allow-headers': expect.stringContaining('authorization'),
        });
        const read = await send(port, {
          path: '/runs/nope',
          headers: { host: `127.0.0.1:${port}`, origin: page, authorization: 'Bearer a-token-of-twenty-chars' },
        });
        expect([read.status, read.headers['access-control-allow-origin']]).toEqual([404, page]);
        // A foreign page gets no CORS headers (and a 403), a loopback page calling a public name neither.
        const foreign = await send(port, {
          path: '/runs/nope',
          headers: { host: `127.0.0.1:${port}`, origin: 'https://evil.example.com' },
        });
        expect([foreign.status, foreign.headers['access-control-allow-origin']]).toEqual([403, undefined]);
      });
  });

  it('AGENT_ALLOWED_HOSTS adds names; with tokens any name is answered (a page cannot present the token)', async () => {
    await withApi({ allowedHosts: ['agents.example.com', '.corp.example'] }, async (port) => {
      for (const [host, status] of [
        ['agents.example.com', 404],
        ['a.corp.example:8080', 404],
        ['corp.example', 404],
        ['evil.example.com', 403],
      ] as const)
        expect({ host, status: (await send(port, { path: '/runs/nope', headers: { host } })).status }).toEqual({
          host,
          status,
        });
    });
    const token = 'a-token-of-sixteen-chars';
    await withApi({ tokens: [token] }, async (port) => {
      const proxied = await send(port, {
        path: '/runs/nope',
        headers: { host: 'agents.internal:8080', authorization: `Bearer ${token}` },
      });
      expect(proxied.status).toBe(404);
    });
  });

  it('the codec server refuses rebound names too', async () => {
    const codec = new EncryptionCodec(parseEncryptionKeys(`k1:${randomBytes(32).toString('base64')}`));
    const server = createCodecServer({ codec, access: { corsOrigins: ['http://localhost:8233'] } });
    const port = await listening(server);
    try {
      const body = JSON.stringify({ payloads: [] });
      const decode = (host: string) =>
        send(port, { method: 'POST', path: '/decode', headers: { host, 'content-type': 'application/json' }, body });
      expect((await decode('evil.example.com')).status).toBe(403);
      expect((await decode(`127.0.0.1:${port}`)).status).toBe(200);
    } finally {
      server.close();
    }
  });
});

describe('limits', () => {
  it('refuses a body declared too large at once, before reading it', async () => {
    await withApi({}, async (port) => {
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        // The headers promise a gigabyte; not a byte of it is sent.
        const req = request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/runs',
            headers: { 'content-type': 'application/json', 'content-length': '999999999' },
          },
          (res) => {
            let body = '';
            res.on('data', (d) => (body += d));
            res.on('end', () => resolve({ status: res.statusCode!, body }));
          },
        );
        req.on('error', reject);
        req.flushHeaders();
      });
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body).errorType).toBe('Http.PayloadTooLarge');
    });
  });

  it(`the codec server converts at most ${MAX_CODEC_PAYLOADS} payloads a request`, async () => {
    const codec = new EncryptionCodec(parseEncryptionKeys(`k1:${randomBytes(32).toString('base64')}`));
    const server = createCodecServer({ codec, access: {} });
    const port = await listening(server);
    try {
      const payloads = (n: number) => JSON.stringify({ payloads: Array.from({ length: n }, () => ({ data: 'eA==' })) });
      const encode = (n: number) =>
        send(port, {
          method: 'POST',
          path: '/encode',
          headers: { 'content-type': 'application/json' },
          body: payloads(n),
        });
      const many = await encode(100_000);
      expect(many.status).toBe(413);
      expect(JSON.parse(many.body).error).toBe(
        `100000 payloads in one request; at most ${MAX_CODEC_PAYLOADS} (send them in several requests)`,
      );
      expect(JSON.parse((await encode(MAX_CODEC_PAYLOADS)).body).payloads).toHaveLength(MAX_CODEC_PAYLOADS);
    } finally {
      server.close();
    }
  });

  it('limits wrong webhook signatures per address, as wrong tokens are', async () => {
    const secret = 'a-webhook-secret-0123';
    await withApi(
      { tokens: ['a-token-of-sixteen-chars'], webhookSecret: secret, rateLimitPerMinute: 5 },
      async (port) => {
        const body = JSON.stringify({ paid: true });
        const deliver = (signature: string) =>
          send(port, {
            method: 'POST',
            path: '/runs/some-run/events/payment',
            headers: { 'content-type': 'application/json', 'x-signature-256': signature },
            body,
          });
        const statuses: number[] = [];
        for (let i = 0; i < 8; i++) statuses.push((await deliver(signBody('not-the-secret-0000', body))).status);
        expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
        // A correct signature from that address waits its turn too (the secret is being guessed).
        const limited = await deliver(signBody(secret, body));
        expect(limited.status).toBe(429);
        expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      },
    );
  });
});
