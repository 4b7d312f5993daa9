import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport, UnauthorizedError, auth } from '@modelcontextprotocol/client';
import type { McpHttpServer } from './mcp-config';
import { modernAuthProvider, type McpTokenStore } from './mcp-oauth';

/** What {@link loginToMcpServer} did. */
export interface McpLoginResult {
  /** `logged-in`: a person authorized; `already`: the stored login (or the machine client) was enough. */
  outcome: 'logged-in' | 'already';
  /** The tools the server offers with the login. */
  tools: string[];
}

/**
 * Logs in to an MCP server that needs OAuth, once, for the workers: the authorization code grant
 * with PKCE (the server's authorization server found from its metadata, the client registered
 * dynamically unless one is configured), the person sent to `openAuthorization` (a link to open),
 * the redirect received on a loopback port, the code exchanged, and the client registration and
 * tokens kept in `store`, where workers read (and refresh) them. Then it checks the login by
 * listing the server's tools, in the newest MCP revision the server speaks (on the SDK's v2
 * client, which probes with `server/discover` and falls back to `initialize`), so a server that
 * speaks 2026-07-28 only is logged in to as well.
 */
export async function loginToMcpServer(
  name: string,
  config: McpHttpServer,
  store: McpTokenStore,
  openAuthorization: (url: URL) => void | Promise<void>,
  /** `tenant`: the login is that tenant's, used by its runs only (`mcp login <server> --tenant T`). */
  options: { timeoutMs?: number; tenant?: string } = {},
): Promise<McpLoginResult> {
  const oauth = config.oauth ?? {};
  const callback = await loopbackCallback(oauth.redirectUrl);
  try {
    const provider = modernAuthProvider(
      name,
      config.url,
      oauth,
      store,
      { redirectUrl: callback.redirectUrl, openAuthorization },
      options.tenant,
    );
    const transport = new StreamableHTTPClientTransport(new URL(config.url), {
      authProvider: provider,
      requestInit: { headers: config.headers ?? {} },
    });
    const first = negotiatingClient();
    try {
      await first.connect(transport);
      const tools = (await first.listTools()).tools.map((t) => t.name);
      // The stored login serves, unless a worker was refused for want of a larger scope: ask for it.
      const stepUp = await (provider as { stepUpScope?: () => Promise<string | undefined> }).stepUpScope?.();
      if (stepUp === undefined) return { outcome: 'already', tools };
      if ((await auth(provider, { serverUrl: config.url, scope: stepUp })) === 'AUTHORIZED')
        return { outcome: 'logged-in', tools };
    } catch (err) {
      if (!(err instanceof UnauthorizedError)) throw err;
    } finally {
      await first.close().catch(() => undefined);
    }
    const answer = await callback.received(options.timeoutMs ?? 10 * 60_000);
    const expected = await provider.state?.();
    if (expected && answer.get('state') !== expected)
      throw new Error('the login came back with another state than it was sent with: start it again');
    // The whole answer: the SDK reads the code and the issuer (`iss`, RFC 9207), which it checks
    // against the authorization server it sent the person to before the code is redeemed.
    await transport.finishAuth(answer);
    // The stored login, as a worker will use it.
    const check = negotiatingClient();
    try {
      await check.connect(
        new StreamableHTTPClientTransport(new URL(config.url), {
          authProvider: modernAuthProvider(name, config.url, oauth, store),
          requestInit: { headers: config.headers ?? {} },
        }),
      );
      return { outcome: 'logged-in', tools: (await check.listTools()).tools.map((t) => t.name) };
    } finally {
      await check.close().catch(() => undefined);
    }
  } finally {
    callback.close();
  }
}

/** A client that speaks the newest revision the server offers. */
function negotiatingClient(): Client {
  return new Client({ name: 'durable-agents', version: '0.2.0' }, { versionNegotiation: { mode: 'auto' } });
}

/**
 * A loopback HTTP server that takes the authorization server's redirect (`?code=...&state=...&iss=...`):
 * its query, once it has a code.
 */
async function loopbackCallback(configured?: string): Promise<{
  redirectUrl: string;
  received(timeoutMs: number): Promise<URLSearchParams>;
  close(): void;
}> {
  const wanted = configured ? new URL(configured) : undefined;
  let deliver!: (v: URLSearchParams) => void;
  let refuse!: (err: Error) => void;
  const arrived = new Promise<URLSearchParams>((resolve, reject) => {
    deliver = resolve;
    refuse = reject;
  });
  arrived.catch(() => undefined);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const code = url.searchParams.get('code');
    const error = url.searchParams.get('error');
    res.writeHead(code ? 200 : 400, { 'content-type': 'text/plain; charset=utf-8' });
    if (code) {
      res.end('Logged in. You can close this tab; the durable-agents workers have the login.');
      deliver(url.searchParams);
    } else {
      res.end(`The login did not complete${error ? `: ${error}` : ''}.`);
      if (error)
        refuse(
          new Error(`the authorization server refused: ${error} ${url.searchParams.get('error_description') ?? ''}`),
        );
    }
  });
  server.listen(wanted ? Number(wanted.port) || 80 : 0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    redirectUrl: wanted ? wanted.toString() : `http://127.0.0.1:${port}/callback`,
    received: (timeoutMs) => {
      const timer = setTimeout(
        () => refuse(new Error(`no login within ${Math.round(timeoutMs / 60_000)} minutes: start it again`)),
        timeoutMs,
      );
      return arrived.finally(() => clearTimeout(timer));
    },
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
