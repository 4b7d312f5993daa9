import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEncryptionKeys } from '../../src/codec/encryption-codec';
import { parseMcpServers } from '../../src/tools/mcp-client/mcp-config';
import { defaultTokenPath, mcpAuthProvider, McpTokenStore, missingScope } from '../../src/tools/mcp-client/mcp-oauth';

/** Where logins to OAuth MCP servers are kept, and how a server's `oauth` is read. */
const keys = parseEncryptionKeys(`k1:${Buffer.alloc(32, 7).toString('base64')}`);
const tokens = { access_token: 'secret-access-token', token_type: 'Bearer', refresh_token: 'r1' };

it('keeps logins in a file only its owner reads, encrypted with the payload keys when there are some', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-tokens-'));
  const sealed = new McpTokenStore(join(dir, 'sealed.json'), keys);
  await sealed.update('https://a.example/mcp', (l) => ({ ...l, tokens }));
  const text = readFileSync(join(dir, 'sealed.json'), 'utf8');
  expect(text).not.toContain('secret-access-token');
  expect(statSync(join(dir, 'sealed.json')).mode & 0o777).toBe(0o600);
  expect((await sealed.get('https://a.example/mcp')).tokens).toEqual(tokens);
  // Without the keys: a clear error naming the fix.
  await expect(new McpTokenStore(join(dir, 'sealed.json')).get('https://a.example/mcp')).rejects.toThrow(
    /is encrypted: set AGENT_ENCRYPTION_KEYS/,
  );
  const plain = new McpTokenStore(join(dir, 'plain.json'));
  await plain.update('https://b.example/mcp', (l) => ({ ...l, tokens }));
  expect(JSON.parse(readFileSync(join(dir, 'plain.json'), 'utf8'))['https://b.example/mcp'].tokens).toEqual(tokens);
  expect(await plain.get('https://nowhere.example/mcp')).toEqual({});
});

it('reads a server’s oauth settings, with ${VAR} from the environment, and refuses what cannot work', () => {
  const servers = parseMcpServers(
    {
      crm: {
        url: 'https://crm.example/mcp',
        oauth: { grant: 'client_credentials', clientId: 'c', clientSecret: '${CRM_SECRET}' },
      },
      docs: { url: 'https://docs.example/mcp', oauth: {} },
    },
    'mcp.json',
    { CRM_SECRET: 's3' },
  );
  expect(servers.crm).toMatchObject({ oauth: { grant: 'client_credentials', clientId: 'c', clientSecret: 's3' } });
  expect(() =>
    parseMcpServers(
      { crm: { url: 'https://crm.example/mcp', oauth: { grant: 'client_credentials' } } },
      'mcp.json',
      {},
    ),
  ).toThrow(
    /mcpServers.crm.oauth: the client_credentials grant needs "clientId" and "clientSecret" \(or "privateKey"\)/,
  );
  expect(() =>
    parseMcpServers({ crm: { url: 'https://crm.example/mcp', oauth: { grant: 'magic' } } }, 'mcp.json', {}),
  ).toThrow(/oauth.grant must be "authorization_code" or "client_credentials"/);
});

it('never opens a browser in a worker: a login it lacks names the command that makes it', async () => {
  const provider = mcpAuthProvider('docs', 'https://docs.example/mcp', {}, new McpTokenStore());
  await expect(
    Promise.resolve(provider.redirectToAuthorization(new URL('https://as.example/authorize'))),
  ).rejects.toThrow(
    /the MCP server "docs" \(https:\/\/docs.example\/mcp\) needs a login: run `durable-agents mcp login docs`/,
  );
  expect(defaultTokenPath({ AGENT_MCP_TOKENS: '/srv/tokens.json' })).toBe('/srv/tokens.json');
  expect(defaultTokenPath({})).toMatch(/\.durable-agents\/mcp-tokens\.json$/);
});

it('registers a client only where a login can follow, and again for a login on another redirect', async () => {
  const store = new McpTokenStore();
  const url = 'https://docs.example/mcp';
  // A worker: no client to register for (it cannot log in), so it says how to log in instead.
  const worker = mcpAuthProvider('docs', url, {}, store);
  await expect(Promise.resolve(worker.clientInformation())).rejects.toThrow(
    /needs a login: run `durable-agents mcp login docs`/,
  );
  // A login: a client registered for an earlier login's loopback port is registered again.
  await store.update(url, (l) => ({
    ...l,
    client: { client_id: 'c1', redirect_uris: ['http://127.0.0.1:4000/callback'] },
  }));
  const login = (redirectUrl: string) =>
    mcpAuthProvider('docs', url, {}, store, { redirectUrl, openAuthorization: () => undefined });
  expect(await login('http://127.0.0.1:5000/callback').clientInformation()).toBeUndefined();
  expect(await login('http://127.0.0.1:4000/callback').clientInformation()).toMatchObject({ client_id: 'c1' });
  // With a stored client, the worker uses it (its tokens are refreshed with it).
  expect(await worker.clientInformation()).toMatchObject({ client_id: 'c1' });
});

describe('a step up to a larger scope', () => {
  it('asks for what is lacking beside what was granted, and nothing when all is granted', () => {
    expect(missingScope('mcp:write', 'mcp:read')).toBe('mcp:read mcp:write');
    expect(missingScope('mcp:read', 'mcp:read mcp:write')).toBeUndefined();
    expect(missingScope(undefined, 'mcp:read')).toBeUndefined();
  });

  it('keeps the scope a worker was refused for; the next login asks for it (the stored token hidden meanwhile), and forgets it once granted', async () => {
    const url = 'https://mcp.example.com/mcp';
    const store = new McpTokenStore();
    await store.update(url, () => ({ tokens: { access_token: 'old', token_type: 'Bearer', scope: 'mcp:read' } }));
    const worker = mcpAuthProvider('docs', url, {}, store);
    await expect(
      worker.redirectToAuthorization(new URL('https://as.example.com/authorize?scope=mcp%3Awrite')),
    ).rejects.toThrow(/needs a login/);
    expect((await store.get(url)).wantedScope).toBe('mcp:write');
    const login = mcpAuthProvider('docs', url, {}, store, {
      redirectUrl: 'http://127.0.0.1:9/callback',
      openAuthorization: () => undefined,
    }) as ReturnType<typeof mcpAuthProvider> & { stepUpScope(): Promise<string | undefined> };
    expect(await login.stepUpScope()).toBe('mcp:read mcp:write');
    expect(await login.tokens()).toBeUndefined();
    await login.saveTokens({ access_token: 'new', token_type: 'Bearer', scope: 'mcp:read mcp:write' });
    expect(await store.get(url)).toMatchObject({ tokens: { access_token: 'new' }, wantedScope: undefined });
    expect(await login.tokens()).toMatchObject({ access_token: 'new' });
  });
});

describe('the authorization server a login is bound to (SEP-2352)', () => {
  const url = 'https://docs.example/mcp';
  const state = {
    authorizationServerUrl: 'https://auth.example/',
    authorizationServerMetadata: { issuer: 'https://auth.example/' },
  } as never;

  it('keeps what a login found for the code it brings back, and drops it once the login gave tokens', async () => {
    const store = new McpTokenStore();
    const login = mcpAuthProvider('docs', url, {}, store, {
      redirectUrl: 'http://127.0.0.1:9/callback',
      openAuthorization: () => undefined,
    });
    expect(await login.discoveryState!()).toBeUndefined();
    await login.saveDiscoveryState!(state);
    expect(await login.discoveryState!()).toEqual(state);
    await login.saveTokens(tokens);
    // A worker finds the server's authorization server afresh: it may have moved.
    expect(await login.discoveryState!()).toBeUndefined();
    await login.saveDiscoveryState!(state);
    await login.invalidateCredentials!('discovery');
    expect(await login.discoveryState!()).toBeUndefined();
  });

  it('forgets a login that was never finished, after a person’s time to log in', async () => {
    const store = new McpTokenStore();
    const login = mcpAuthProvider('docs', url, {}, store);
    await login.saveDiscoveryState!(state);
    jest.useFakeTimers({ now: Date.now() + 16 * 60_000 });
    try {
      expect(await login.discoveryState!()).toBeUndefined();
    } finally {
      jest.useRealTimers();
    }
  });

  it('binds a configured client to the first authorization server it is used with, its secret kept out of the file', async () => {
    const store = new McpTokenStore();
    const oauth = { clientId: 'c1', clientSecret: 's1' };
    const worker = mcpAuthProvider('docs', url, oauth, store);
    const info = (issuer?: string) =>
      (worker.clientInformation as (c?: { issuer?: string }) => Promise<unknown>)(issuer ? { issuer } : undefined);
    expect(await info('https://auth.example/')).toEqual({
      client_id: 'c1',
      client_secret: 's1',
      issuer: 'https://auth.example/',
    });
    expect((await store.get(url)).client).toEqual({ client_id: 'c1', issuer: 'https://auth.example/' });
    // Met at another server later, it still says the first: the SDK then refuses to use it there.
    expect(await info('https://elsewhere.example/')).toMatchObject({ issuer: 'https://auth.example/' });
  });
});
