import type { IncomingMessage } from 'node:http';
import { Client, Connection } from '@temporalio/client';
import { createHttpApi } from '../../src/http/http-api';
import { createCodecServer } from '../../src/http/codec-server';
import { signedDelivery } from '../../src/http/event-routes';
import {
  FAILED_AUTH_PER_MINUTE,
  httpAccessFromEnv,
  isLoopback,
  originProblem,
  presentedToken,
  requestScope,
  RateLimiter,
  tokenMatches,
} from '../../src/http/access';

describe('HTTP access rules', () => {
  it('match tokens exactly, whatever their length', () => {
    const tokens = ['first-token-0000000', 'second-token-111111'];
    expect(tokenMatches('second-token-111111', tokens)).toBe(true);
    expect(tokenMatches('second-token-11111', tokens)).toBe(false);
    expect(tokenMatches('second-token-1111111', tokens)).toBe(false);
    expect(tokenMatches('', tokens)).toBe(false);
    expect(tokenMatches(undefined, tokens)).toBe(false);
    expect(tokenMatches('anything', [])).toBe(false);
  });

  it('read the token from the Authorization header, else the chat page cookie', () => {
    const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
    expect(presentedToken(req({ authorization: 'Bearer abc' }))).toBe('abc');
    expect(presentedToken(req({ authorization: 'bearer  abc ' }))).toBe('abc');
    expect(presentedToken(req({ authorization: 'Basic abc' }))).toBeUndefined();
    expect(presentedToken(req({ cookie: 'x=1; durable_agents_token=t%2B1' }))).toBe('t+1');
    expect(presentedToken(req({}))).toBeUndefined();
    // Not percent-encoding: taken as it stands (and then matching no token), never thrown.
    expect(presentedToken(req({ cookie: 'durable_agents_token=%' }))).toBe('%');
    expect(presentedToken(req({ cookie: 'durable_agents_token=%E0%A4%A' }))).toBe('%E0%A4%A');
  });

  it('limit each client to N requests a minute, then say when to come back', () => {
    let now = 0;
    const limiter = new RateLimiter(2, () => now);
    expect([limiter.take('a'), limiter.take('a'), limiter.take('b')]).toEqual([0, 0, 0]);
    now = 15_000;
    expect(limiter.take('a')).toBe(45);
    now = 60_000;
    expect(limiter.take('a')).toBe(0);
  });

  it('read the environment, refusing short tokens, odd origins and bad limits without echoing tokens', () => {
    expect(
      httpAccessFromEnv({
        AGENT_HTTP_TOKENS: ' aaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbb ,',
        AGENT_HTTP_CORS_ORIGINS: 'https://a.example.com',
        AGENT_HTTP_RATE_LIMIT: '60',
      }),
    ).toEqual({
      tokens: ['aaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbb'],
      corsOrigins: ['https://a.example.com'],
      rateLimitPerMinute: 60,
    });
    expect(httpAccessFromEnv({})).toEqual({ tokens: [], corsOrigins: [] });
    expect(() => httpAccessFromEnv({ AGENT_HTTP_TOKENS: 'aaaaaaaaaaaaaaaa,hunter2' })).toThrow(
      /^AGENT_HTTP_TOKENS: token 2 is shorter than 16 characters/,
    );
    expect(() => httpAccessFromEnv({ AGENT_HTTP_TOKENS: 'hunter2' })).not.toThrow(/hunter2/);
    expect(() => httpAccessFromEnv({ AGENT_HTTP_CORS_ORIGINS: 'app.example.com' })).toThrow(/is not an origin/);
    expect(() => httpAccessFromEnv({ AGENT_HTTP_RATE_LIMIT: 'lots' })).toThrow(
      /AGENT_HTTP_RATE_LIMIT must be a whole number/,
    );
    expect([
      isLoopback('127.0.0.1'),
      isLoopback('::1'),
      isLoopback('localhost'),
      isLoopback('0.0.0.0'),
      isLoopback('10.0.0.1'),
    ]).toEqual([true, true, true, false, false]);
  });

  it('bind tokens to tenants (AGENT_HTTP_TOKENS=<token>=<tenant>); a token without one is an admin token', () => {
    const access = httpAccessFromEnv({ AGENT_HTTP_TOKENS: 'admin-token-0123456789, acme-token-0123456789=acme' });
    expect(access.tokens).toEqual(['admin-token-0123456789', 'acme-token-0123456789']);
    expect(access.tenants).toEqual({ 'acme-token-0123456789': 'acme' });
    const asking = (token?: string) =>
      ({ headers: token ? { authorization: `Bearer ${token}` } : {} }) as unknown as IncomingMessage;
    expect(requestScope(asking('acme-token-0123456789'), access)).toEqual({ tenant: 'acme' });
    expect(requestScope(asking('admin-token-0123456789'), access)).toEqual({});
    expect(requestScope(asking(), access)).toEqual({});
    // Without tenants every token is an admin's.
    expect(requestScope(asking('acme-token-0123456789'), { tokens: ['acme-token-0123456789'] })).toEqual({});
    expect(() => httpAccessFromEnv({ AGENT_HTTP_TOKENS: 'short=acme' })).toThrow(/token 1 is shorter than 16/);
  });

  it('the codec server (every tenant’s payloads) takes admin tokens only', async () => {
    const codec = { encode: async (p: unknown[]) => p, decode: async (p: unknown[]) => p };
    const access = {
      tokens: ['admin-token-0123456789', 'acme-token-0123456789'],
      tenants: { 'acme-token-0123456789': 'acme' },
    };
    const server = createCodecServer({ codec: codec as never, access });
    server.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/decode`;
    const decode = (token: string) =>
      fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: '{"payloads":[]}' });
    try {
      expect((await decode('admin-token-0123456789')).status).toBe(200);
      const refused = await decode('acme-token-0123456789');
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({ error: expect.stringContaining('takes admin tokens') });
    } finally {
      server.close();
    }
  });

  it('refuse pages of other sites, and let a page on this machine call the API on this machine', () => {
    // The page served by the API itself, or a CORS origin.
    expect(originProblem('http://127.0.0.1:8080', '127.0.0.1:8080', [])).toBeUndefined();
    expect(originProblem('https://app.example.com', 'api.example.com', ['https://app.example.com'])).toBeUndefined();
    // A dev server's page (Vite on :5173) through its proxy, which sets Host to the API's (changeOrigin).
    for (const [origin, host] of [
      ['http://127.0.0.1:5173', '127.0.0.1:8080'],
      ['http://localhost:5173', '127.0.0.1:8080'],
      ['http://localhost:5173', 'localhost:8080'],
      ['http://[::1]:5173', '[::1]:8080'],
      ['http://app.localhost:3000', 'localhost:8080'],
    ])
      expect({ origin, host, problem: originProblem(origin, host, []) }).toEqual({ origin, host, problem: undefined });
    // Another site, even when its name points at 127.0.0.1 (DNS rebinding keeps the page's name).
    expect(originProblem('https://evil.example', '127.0.0.1:8080', [])).toMatch(/AGENT_HTTP_CORS_ORIGINS/);
    expect(originProblem('http://rebound.example:8080', '127.0.0.1:8080', [])).toMatch(/refused/);
    // A loopback page calling a server by its public name is not this machine's own traffic.
    expect(originProblem('http://localhost:5173', 'api.example.com', [])).toMatch(/refused/);
    expect(originProblem('null', '127.0.0.1:8080', [])).toMatch(/refused/);
  });

  it('read AGENT_WEBHOOK_SECRET, refusing a short one; signed event deliveries skip the token check', () => {
    expect(httpAccessFromEnv({ AGENT_WEBHOOK_SECRET: 'whsec-0123456789abcdef' }).webhookSecret).toBe(
      'whsec-0123456789abcdef',
    );
    expect(() => httpAccessFromEnv({ AGENT_WEBHOOK_SECRET: 'short' })).toThrow(/shorter than 16 characters/);
    const req = (method: string, headers: Record<string, string>) =>
      ({ method, headers }) as unknown as IncomingMessage;
    const access = { tokens: ['t'.repeat(20)], webhookSecret: 's'.repeat(20) };
    const signed = req('POST', { 'x-signature-256': 'sha256=00' });
    expect(signedDelivery('/runs/r1/events/paid', signed, access)).toBe(true);
    expect(signedDelivery('/conversations/c1/events/paid', signed, access)).toBe(true);
    expect(signedDelivery('/runs/r1/events', signed, access)).toBe(false);
    expect(signedDelivery('/runs/r1/events/paid', req('POST', {}), access)).toBe(false);
    expect(signedDelivery('/runs/r1/events/paid', signed, { tokens: access.tokens })).toBe(false);
  });

  it('limit wrong tokens per address, with or without a rate limit set', async () => {
    for (const access of [
      { tokens: ['a-long-enough-token'] },
      { tokens: ['a-long-enough-token'], rateLimitPerMinute: 3 },
    ]) {
      const connection = Connection.lazy({ address: '127.0.0.1:1', connectTimeout: 500 });
      const server = createHttpApi({ client: new Client({ connection }), taskQueue: 'x', access });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      try {
        const { port } = server.address() as { port: number };
        const limit = access.rateLimitPerMinute ?? FAILED_AUTH_PER_MINUTE;
        const statuses: number[] = [];
        for (let i = 0; i <= limit; i++)
          statuses.push(
            (await fetch(`http://127.0.0.1:${port}/agents`, { headers: { authorization: `Bearer guess-${i}` } }))
              .status,
          );
        expect(statuses).toEqual([...Array(limit).fill(401), 429]);
        // The health check stays open to a throttled address (a load balancer may share it).
        const health = await fetch(`http://127.0.0.1:${port}/healthz`);
        expect(health.status).not.toBe(429);
      } finally {
        server.closeAllConnections();
        server.close();
        await connection.close();
      }
    }
  });

  it('GET /healthz asks Temporal at most once a second', async () => {
    let asked = 0;
    const client = {
      options: { namespace: 'default' },
      connection: { withDeadline: async () => void asked++ },
      workflowService: { getSystemInfo: async () => ({}) },
      withAbortSignal: (_: AbortSignal, fn: () => Promise<unknown>) => fn(),
    };
    const server = createHttpApi({ client: client as unknown as Client, taskQueue: 'x' });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as { port: number };
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status)),
      );
      expect(answers).toEqual(Array(20).fill(200));
      expect(asked).toBe(1);
      // The answer is kept a second: the time passing is what is tested.
      await new Promise((r) => setTimeout(r, 1_100));
      await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(asked).toBe(2);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('answers 503 Client.Unreachable, not 500, when Temporal cannot be reached (GET /agents during an outage)', async () => {
    const unavailable = () =>
      Promise.reject(Object.assign(new Error('14 UNAVAILABLE: No connection established'), { code: 14 }));
    const client = {
      options: { namespace: 'default' },
      workflowService: { describeTaskQueue: unavailable },
      workflow: { execute: unavailable },
      withAbortSignal: (_: AbortSignal, fn: () => Promise<unknown>) => fn(),
    };
    const server = createHttpApi({ client: client as unknown as Client, taskQueue: 'x' });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as { port: number };
      const res = await fetch(`http://127.0.0.1:${port}/agents`);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({
        error: expect.stringMatching(/^Temporal is unreachable: 14 UNAVAILABLE: No connection established; try again/),
        errorType: 'Client.Unreachable',
      });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('GET /healthz reports an unreachable Temporal as 503, without a token', async () => {
    const connection = Connection.lazy({ address: '127.0.0.1:1', connectTimeout: 500 });
    const server = createHttpApi({
      client: new Client({ connection }),
      taskQueue: 'x',
      access: { tokens: ['a-long-enough-token'] },
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as { port: number };
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({
        status: 'unavailable',
        temporal: { reachable: false, namespace: 'default', error: expect.any(String) },
      });
      expect((await fetch(`http://127.0.0.1:${port}/agents`)).status).toBe(401);
    } finally {
      server.closeAllConnections();
      server.close();
      await connection.close();
    }
  });
});
