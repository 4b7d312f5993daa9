import { randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { ClientCredentialsProvider, PrivateKeyJwtProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import {
  ClientCredentialsProvider as ModernClientCredentials,
  PrivateKeyJwtProvider as ModernPrivateKeyJwt,
  type OAuthClientProvider as ModernOAuthClientProvider,
  type OAuthDiscoveryState,
} from '@modelcontextprotocol/client';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { EncryptionKey } from '../../codec/encryption-codec';
import { SealedJsonFile } from '../../storage/sealed-file';

/**
 * OAuth 2.1 for remote MCP servers, on the SDK's auth (discovery of the protected resource and its
 * authorization server, dynamic client registration or a pre-registered client, PKCE, refresh):
 * what we add is where a worker keeps what a person's login gave it, and the login itself.
 *
 * - `grant: 'client_credentials'` (machine clients): the worker gets its own tokens with the
 *   configured client id and secret, as the server asks (the SDK's ClientCredentialsProvider).
 * - The authorization code grant (a person's account): `durable-agents mcp login <server>` runs it
 *   once (a link to open, a loopback redirect) and stores the client registration and tokens in
 *   the token file, where workers find them and refresh them. A worker never opens a browser: a
 *   server that needs a login it lacks fails the call with the command to run.
 *
 * Tokens live in the token file (encrypted with the payload keys when AGENT_ENCRYPTION_KEYS is
 * set) and in memory, never in a workflow's history: tool results and errors do not carry them.
 */

/** How a remote MCP server is logged in to (`oauth` in its config). */
export interface McpOAuthConfig {
  /** `client_credentials` for a machine client; default: the authorization code grant (`mcp login`). */
  grant?: 'authorization_code' | 'client_credentials';
  /** A pre-registered client; without one, the client registers itself (dynamic registration). */
  clientId?: string;
  clientSecret?: string;
  /**
   * A machine client that proves itself with a signed JWT instead of a secret (`private_key_jwt`):
   * its private key (PEM), and the signing algorithm (default `ES256`).
   */
  privateKey?: string;
  signingAlgorithm?: string;
  /** The scopes to ask for (default: what the server says it supports). */
  scope?: string;
  /** Where the login's redirect lands (default: a loopback port `mcp login` picks). */
  redirectUrl?: string;
  /**
   * An HTTPS URL where you host this client's metadata document (a Client ID Metadata Document:
   * `client_name`, `redirect_uris`, ...): used as the client id by authorization servers that
   * support them, instead of registering a client.
   */
  clientMetadataUrl?: string;
}

/** What the token file keeps for one server. */
interface StoredLogin {
  client?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
  /** When the tokens were saved (ms), to tell an expired access token. */
  savedAt?: number;
  codeVerifier?: string;
  /**
   * The authorization server a login under way found, and when: the code it brings back is
   * exchanged there and nowhere else (SEP-2352: a code and its PKCE verifier are bound to the
   * server that minted them). Dropped once the login gave tokens.
   */
  discovery?: { state: OAuthDiscoveryState; at: number };
  /**
   * The scope a worker was sent to ask for (the server refused its token for want of it, a step
   * up): `mcp login` asks for it, even while the stored token still serves other calls.
   */
  wantedScope?: string;
}

/**
 * The scope to ask for when `granted` (a space-separated scope) lacks some of `wanted`: both
 * together, so the new token still does what the old one did; undefined when nothing is lacking.
 */
export function missingScope(wanted: string | undefined, granted: string | undefined): string | undefined {
  const have = (granted ?? '').split(' ').filter(Boolean);
  const lacking = (wanted ?? '').split(' ').filter((s) => s && !have.includes(s));
  return lacking.length ? [...have, ...new Set(lacking)].join(' ') : undefined;
}

/**
 * The token file: logins by server URL, written atomically (mode 0600), encrypted with the payload
 * keys when there are any (so a copied file is no use without them). Without a path, in memory
 * (a test, a process that logs in for itself).
 */
export class McpTokenStore {
  private readonly file: SealedJsonFile<Record<string, StoredLogin>>;

  constructor(
    readonly path?: string,
    keys?: readonly EncryptionKey[],
  ) {
    this.file = new SealedJsonFile(path, keys, () => ({}), 'durable-agents mcp login <server>');
  }

  async get(server: string): Promise<StoredLogin> {
    return (await this.file.read())[server] ?? {};
  }

  async update(server: string, change: (login: StoredLogin) => StoredLogin): Promise<void> {
    await this.file.update((all) => {
      all[server] = change(all[server] ?? {});
      return all;
    });
  }
}

/** Where workers and `mcp login` keep logins: AGENT_MCP_TOKENS, else ~/.durable-agents/mcp-tokens.json. */
export function defaultTokenPath(env: NodeJS.ProcessEnv): string {
  return env.AGENT_MCP_TOKENS || join(homedir(), '.durable-agents', 'mcp-tokens.json');
}

/** The auth provider of a remote MCP server with `oauth` configured (its transport's `authProvider`). */
export function mcpAuthProvider(
  name: string,
  url: string,
  oauth: McpOAuthConfig,
  store: McpTokenStore,
  login?: LoginHooks,
  /** Whose login (`mcp login <server> --tenant T`): a tenant's runs use their tenant's, never another's. */
  tenant?: string,
): OAuthClientProvider {
  const machine = machineClient(name, oauth);
  if (machine?.kind === 'jwt') return new PrivateKeyJwtProvider(machine.options);
  if (machine?.kind === 'secret') return new ClientCredentialsProvider(machine.options);
  return new StoredLoginProvider(name, url, oauth, store, login, tenant);
}

/**
 * {@link mcpAuthProvider} for the SDK's v2 client (MCP 2026-07-28 and the negotiation that finds
 * it): its own machine-client providers, and the same stored login (its provider interface has
 * the shape of SDK 1.x's, which the login store implements).
 */
export function modernAuthProvider(...args: Parameters<typeof mcpAuthProvider>): ModernOAuthClientProvider {
  const [name, , oauth] = args;
  const machine = machineClient(name, oauth);
  if (machine?.kind === 'jwt') return new ModernPrivateKeyJwt(machine.options);
  if (machine?.kind === 'secret') return new ModernClientCredentials(machine.options);
  return mcpAuthProvider(...args) as ModernOAuthClientProvider;
}

/** The client_credentials grant's client (a private key JWT, or a secret), as both SDKs' providers take it. */
function machineClient(
  name: string,
  oauth: McpOAuthConfig,
):
  | {
      kind: 'jwt';
      options: { clientId: string; privateKey: string; algorithm: string; clientName: string; scope?: string };
    }
  | { kind: 'secret'; options: { clientId: string; clientSecret: string; clientName: string; scope?: string } }
  | undefined {
  if (oauth.grant !== 'client_credentials') return undefined;
  const named = { clientName: 'durable-agents', ...(oauth.scope ? { scope: oauth.scope } : {}) };
  if (oauth.clientId && oauth.privateKey)
    return {
      kind: 'jwt',
      options: {
        clientId: oauth.clientId,
        privateKey: oauth.privateKey,
        algorithm: oauth.signingAlgorithm ?? 'ES256',
        ...named,
      },
    };
  if (!oauth.clientId || !oauth.clientSecret)
    throw new Error(
      `mcpServers.${name}.oauth: the client_credentials grant needs "clientId" and "clientSecret" (or "privateKey")`,
    );
  return { kind: 'secret', options: { clientId: oauth.clientId, clientSecret: oauth.clientSecret, ...named } };
}

/** Where the token file keeps a login: the server's URL, and the tenant's name for a tenant's login. */
export function loginKey(url: string, tenant?: string): string {
  return tenant === undefined ? url : `${url}#tenant=${tenant}`;
}

/** What `mcp login` adds to a provider: the redirect it listens on, and how the person is sent to log in. */
export interface LoginHooks {
  redirectUrl: string;
  openAuthorization(url: URL): void | Promise<void>;
}

/** The authorization code grant with the token file: `mcp login` fills it, workers use and refresh it. */
class StoredLoginProvider implements OAuthClientProvider {
  private readonly expected = randomBytes(16).toString('hex');
  /** A login asking for a larger scope (see {@link StoredLoginProvider.stepUpScope}). */
  private asking = false;

  constructor(
    private readonly name: string,
    private readonly url: string,
    private readonly oauth: McpOAuthConfig,
    private readonly store: McpTokenStore,
    private readonly login?: LoginHooks,
    private readonly tenant?: string,
  ) {}

  /** This login's entry in the token file. */
  private get key(): string {
    return loginKey(this.url, this.tenant);
  }

  get clientMetadataUrl(): string | undefined {
    return this.oauth.clientMetadataUrl;
  }

  get redirectUrl(): string {
    return this.login?.redirectUrl ?? this.oauth.redirectUrl ?? 'http://127.0.0.1/callback';
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'durable-agents',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: this.oauth.clientSecret ? 'client_secret_post' : 'none',
      ...(this.oauth.scope ? { scope: this.oauth.scope } : {}),
    };
  }

  state(): string {
    return this.expected;
  }

  /** `context.issuer`: the authorization server in use (the v2 SDK's, SEP-2352). */
  async clientInformation(context?: { issuer?: string }): Promise<OAuthClientInformationMixed | undefined> {
    const client = (await this.store.get(this.key)).client;
    if (this.oauth.clientId) {
      // Bound to the authorization server it was first used with (SEP-2352), kept with it: the
      // server a configured client is for is the one it meets first.
      const bound = client?.client_id === this.oauth.clientId && 'issuer' in client ? client.issuer : undefined;
      const issuer = bound ?? context?.issuer;
      // (Its id and server only: the secret stays in the configuration.)
      if (bound === undefined && issuer !== undefined)
        await this.store.update(this.key, (login) => ({
          ...login,
          client: { client_id: this.oauth.clientId!, issuer },
        }));
      return {
        client_id: this.oauth.clientId,
        ...(this.oauth.clientSecret ? { client_secret: this.oauth.clientSecret } : {}),
        ...(typeof issuer === 'string' ? { issuer } : {}),
      };
    }
    // A worker registers no client: it cannot log in (and a client registered for no redirect
    // would be the one `mcp login` found later).
    if (!client && !this.login && !this.oauth.clientMetadataUrl) throw this.loginNeeded();
    // A client registered for another login's redirect (its loopback port): register again.
    if (client && this.login && 'redirect_uris' in client && !client.redirect_uris.includes(this.redirectUrl))
      return undefined;
    return client;
  }

  async saveClientInformation(client: OAuthClientInformationMixed): Promise<void> {
    await this.store.update(this.key, (login) => ({ ...login, client }));
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    // Asking for a larger scope: the stored token is not offered (it would be refreshed instead),
    // and stays stored until the new one comes.
    if (this.asking) return undefined;
    return (await this.store.get(this.key)).tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    await this.store.update(this.key, (login) => ({
      ...login,
      tokens,
      savedAt: Date.now(),
      discovery: undefined,
      // Granted at last (a token without a scope has what was asked): no step up is wanted any more.
      wantedScope:
        tokens.scope === undefined || !missingScope(login.wantedScope, tokens.scope) ? undefined : login.wantedScope,
    }));
    this.asking = false;
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    if (!this.login) {
      // A worker cannot send a person anywhere: it keeps the scope it was to ask for, for `mcp login`.
      const scope = url.searchParams.get('scope') ?? undefined;
      if (scope) await this.store.update(this.key, (login) => ({ ...login, wantedScope: scope }));
      throw this.loginNeeded();
    }
    await this.login.openAuthorization(url);
  }

  /**
   * The scope a worker was refused for and the stored token lacks (see {@link StoredLogin.wantedScope}),
   * when there is one: from now on this provider asks for a new authorization.
   */
  async stepUpScope(): Promise<string | undefined> {
    const { wantedScope, tokens } = await this.store.get(this.key);
    const scope = missingScope(wantedScope, tokens?.scope);
    if (scope !== undefined) this.asking = true;
    return scope;
  }

  private loginNeeded(): McpLoginNeeded {
    return new McpLoginNeeded(
      `the MCP server "${this.name}" (${this.url}) needs a login: run \`durable-agents mcp login ${this.name}${this.tenant !== undefined ? ` --tenant ${this.tenant}` : ''}\` with the workers' AGENT_MCP_CONFIG and token file (${this.store.path ?? 'AGENT_MCP_TOKENS'})`,
    );
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    await this.store.update(this.key, (login) => ({ ...login, codeVerifier }));
  }

  async codeVerifier(): Promise<string> {
    const verifier = (await this.store.get(this.key)).codeVerifier;
    if (!verifier) throw new Error(`no login under way for ${this.url}: run durable-agents mcp login ${this.name}`);
    return verifier;
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    await this.store.update(this.key, (login) => ({ ...login, discovery: { state, at: Date.now() } }));
  }

  /**
   * What the login under way found (see {@link StoredLogin.discovery}). Only for as long as a
   * login takes: the SDK skips discovery when it is given one, and a worker must find a server
   * that moved to another authorization server.
   */
  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    const { discovery } = await this.store.get(this.key);
    return discovery && Date.now() - discovery.at < LOGIN_WINDOW_MS ? discovery.state : undefined;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    await this.store.update(this.key, (login) => {
      if (scope === 'all') return {};
      if (scope === 'client') return { ...login, client: undefined };
      if (scope === 'tokens') return { ...login, tokens: undefined };
      if (scope === 'verifier') return { ...login, codeVerifier: undefined };
      return { ...login, discovery: undefined };
    });
  }
}

/** How long a login's discovery is kept for the code it brings back: a person's time to log in. */
const LOGIN_WINDOW_MS = 15 * 60_000;

/**
 * A worker met a server that needs a (new) login: none was made, it expired for good, or the
 * server asks for more scopes. The tool call asks a person to run `mcp login` (see McpToolSource).
 */
export class McpLoginNeeded extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpLoginNeeded';
  }
}

/** The {@link McpLoginNeeded} in an error or its causes. */
export function loginNeeded(err: unknown): McpLoginNeeded | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = (e as { cause?: unknown }).cause, depth++)
    if (e instanceof McpLoginNeeded) return e;
  return undefined;
}
