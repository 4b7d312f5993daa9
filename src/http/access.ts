import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseTenantToken, type TenantScope } from '../core/fleet/tenants';

/**
 * Who may use an HTTP endpoint of durable-agents (the HTTP API, the MCP server over HTTP), and
 * how much: bearer tokens, CORS origins and a per-client rate limit. Hand-written: these are a
 * few dozen lines on `node:http`, and a framework's middleware would bring the framework.
 */
export interface HttpAccessOptions {
  /**
   * Accepted bearer tokens (`Authorization: Bearer <token>`). Empty or absent: no authentication,
   * which `npm run serve` and `npm run mcp -- --http` only allow on a loopback address.
   */
  tokens?: readonly string[];
  /**
   * The tenant each token acts for (token → tenant; `AGENT_HTTP_TOKENS=<token>=<tenant>`): such a
   * token sees and acts on only that tenant's runs and conversations, on every route, and starts
   * work as it. A token not named here is an admin token, which sees every tenant.
   */
  tenants?: Readonly<Record<string, string>>;
  /** Browser origins allowed to call the API (CORS), e.g. `https://app.example.com`; none by default. */
  corsOrigins?: readonly string[];
  /** Requests per minute per client (its token, or its address without one); unlimited when absent. */
  rateLimitPerMinute?: number;
  /**
   * The secret of signed webhooks (`AGENT_WEBHOOK_SECRET`): event deliveries
   * (`POST /runs/:id/events/:name`, `POST /conversations/:id/events/:name`) then need
   * `X-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>` under it, or a bearer token; a
   * signed request needs no token, so a payment provider can call the route directly.
   */
  webhookSecret?: string;
  /**
   * Host names requests may give in their `Host` header besides loopback ones (`localhost`,
   * `127.0.0.1`, `[::1]`, `*.localhost`): the server's public name behind a proxy; `.example.com`
   * for a domain and its subdomains; `*` for any (`AGENT_ALLOWED_HOSTS`). A server without tokens
   * answers only these: a web page that rebinds its own name to 127.0.0.1 (DNS rebinding) gets 403.
   * With tokens, any name is answered unless this is set: a page cannot present the token.
   */
  allowedHosts?: readonly string[];
}

/** The cookie the chat page's requests carry once opened with `?access_token=` (HttpOnly, SameSite=Strict). */
export const TOKEN_COOKIE = 'durable_agents_token';

/** Shortest token accepted: a guessable token is no protection. */
export const MIN_TOKEN_LENGTH = 16;

/**
 * Reads `AGENT_HTTP_TOKENS` (comma-separated), `AGENT_HTTP_CORS_ORIGINS` (comma-separated),
 * `AGENT_HTTP_RATE_LIMIT` (requests per minute per client), `AGENT_WEBHOOK_SECRET` and
 * `AGENT_ALLOWED_HOSTS` (comma-separated). Throws on a token or secret shorter than 16
 * characters, an origin that is not `scheme://host[:port]`, a limit that is not a whole number, or
 * a host that is not a name.
 */
export function httpAccessFromEnv(env: NodeJS.ProcessEnv): HttpAccessOptions {
  const list = (raw: string | undefined) =>
    (raw ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const entries = list(env.AGENT_HTTP_TOKENS).map(parseTenantToken);
  const tokens = entries.map((e) => e.token);
  const tenants = Object.fromEntries(entries.filter((e) => e.tenant !== undefined).map((e) => [e.token, e.tenant!]));
  const short = tokens.findIndex((t) => t.length < MIN_TOKEN_LENGTH);
  if (short >= 0)
    throw new Error(
      `AGENT_HTTP_TOKENS: token ${short + 1} is shorter than ${MIN_TOKEN_LENGTH} characters (use e.g. openssl rand -hex 32)`,
    );
  const corsOrigins = list(env.AGENT_HTTP_CORS_ORIGINS);
  for (const origin of corsOrigins) {
    if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin))
      throw new Error(`AGENT_HTTP_CORS_ORIGINS: "${origin}" is not an origin like https://app.example.com`);
  }
  const options: HttpAccessOptions = { tokens, corsOrigins };
  if (Object.keys(tenants).length > 0) options.tenants = tenants;
  const hosts = list(env.AGENT_ALLOWED_HOSTS).map((h) => h.toLowerCase());
  for (const host of hosts)
    if (host !== '*' && !/^\.?[a-z0-9-]+(\.[a-z0-9-]+)*$|^\[[0-9a-f:.]+\]$/.test(host))
      throw new Error(
        `AGENT_ALLOWED_HOSTS: "${host}" is not a host name (like api.example.com, .example.com for its subdomains too, or *)`,
      );
  if (hosts.length) options.allowedHosts = hosts;
  const limit = env.AGENT_HTTP_RATE_LIMIT;
  if (limit !== undefined && limit !== '') {
    if (!/^\d+$/.test(limit) || Number(limit) < 1)
      throw new Error(`AGENT_HTTP_RATE_LIMIT must be a whole number of requests per minute >= 1, got "${limit}"`);
    options.rateLimitPerMinute = Number(limit);
  }
  const secret = env.AGENT_WEBHOOK_SECRET;
  if (secret !== undefined && secret !== '') {
    if (secret.length < MIN_TOKEN_LENGTH)
      throw new Error(
        `AGENT_WEBHOOK_SECRET is shorter than ${MIN_TOKEN_LENGTH} characters (use e.g. openssl rand -hex 32)`,
      );
    options.webhookSecret = secret;
  }
  return options;
}

/**
 * Whom a request acts for: the tenant its token is bound to (see {@link HttpAccessOptions.tenants}),
 * or every tenant (`{}`) for an admin token and a server without tokens. Call it after the
 * access check, which refuses wrong tokens.
 */
export function requestScope(req: IncomingMessage, access: HttpAccessOptions): TenantScope {
  if (!access.tenants) return {};
  const token = presentedToken(req);
  const tenant = token !== undefined && Object.hasOwn(access.tenants, token) ? access.tenants[token] : undefined;
  return tenant === undefined ? {} : { tenant };
}

/**
 * Whom a caller presenting `token` acts for under these rules, for callers that are not HTTP
 * requests (A2A's gRPC binding): as {@link requestScope}, and undefined when the server has
 * tokens and this is not one of them.
 */
export function tokenScope(token: string | undefined, access: HttpAccessOptions): TenantScope | undefined {
  const tokens = access.tokens ?? [];
  if (tokens.length === 0) return {};
  if (token === undefined || !tokenMatches(token, tokens)) return undefined;
  const tenant = access.tenants && Object.hasOwn(access.tenants, token) ? access.tenants[token] : undefined;
  return tenant === undefined ? {} : { tenant };
}

/** Whether `host` is a loopback address (where an API without tokens may listen). */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Whether `candidate` is one of `tokens`, in constant time: both sides are hashed to equal-length
 * digests compared with `timingSafeEqual`, and every token is compared (no early exit), so the
 * time taken says nothing about how much of a token was right, or which one.
 */
export function tokenMatches(candidate: string | undefined, tokens: readonly string[]): boolean {
  if (candidate === undefined) return false;
  const given = digest(candidate);
  let match = false;
  for (const token of tokens) match = timingSafeEqual(given, digest(token)) || match;
  return match;
}

/**
 * The token a request presents: `Authorization: Bearer`, else the chat page's cookie. A cookie
 * value that is not valid percent-encoding is taken as it stands (and then matches no token):
 * whatever a client sends, reading it must not throw.
 */
export function presentedToken(req: IncomingMessage): string | undefined {
  const auth = req.headers.authorization;
  const bearer = auth && /^Bearer\s+(\S+)\s*$/i.exec(auth);
  if (bearer) return bearer[1];
  const cookie = (req.headers.cookie ?? '')
    .split(';')
    .map((c) => c.trim())
    .find((c) => c.startsWith(`${TOKEN_COOKIE}=`));
  if (!cookie) return undefined;
  const raw = cookie.slice(TOKEN_COOKIE.length + 1);
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * The request's URL, or undefined when its target cannot be read as one (`GET http://[ HTTP/1.1`
 * reaches the handler as it stands): callers answer 400.
 */
export function requestUrl(req: IncomingMessage): URL | undefined {
  try {
    return new URL(req.url ?? '/', 'http://localhost');
  } catch {
    return undefined;
  }
}

/** Answers a request whose target is not a URL: 400, as JSON. */
export function sendBadTarget(res: ServerResponse): void {
  res.writeHead(400, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify({ error: 'the request target is not a valid URL path', errorType: 'Http.BadRequest' }));
}

/**
 * A fixed-window limit per client: at most `perMinute` requests in each minute. Memory is
 * bounded: windows that are over are dropped as new ones open.
 */
export class RateLimiter {
  private windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts a request of `client`; returns 0 when allowed, else the seconds until it may try again. */
  take(client: string): number {
    const now = this.now();
    if (this.windows.size > 10_000)
      for (const [k, w] of this.windows) if (now - w.start >= 60_000) this.windows.delete(k);
    const w = this.windows.get(client);
    if (!w || now - w.start >= 60_000) {
      this.windows.set(client, { start: now, count: 1 });
      return 0;
    }
    if (w.count >= this.perMinute) return Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000));
    w.count++;
    return 0;
  }

  /** Like {@link take}, without counting a request: 0 when `client` may go on, else the seconds to wait. */
  blocked(client: string): number {
    const now = this.now();
    const w = this.windows.get(client);
    if (!w || now - w.start >= 60_000 || w.count < this.perMinute) return 0;
    return Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000));
  }
}

/** Requests with a wrong or missing token an address may make per minute, when no rate limit is set. */
export const FAILED_AUTH_PER_MINUTE = 60;

/** What {@link checkAccess} decided: go on, or the response was sent already. */
export type AccessDecision = 'allowed' | 'answered';

/**
 * Paths an {@link accessChecker} lets through without a token: `'public'` ones (a health check,
 * an A2A Agent Card: what a load balancer or a client must read before it can authenticate) for
 * anyone, whatever its address did; `'signed'` ones (a webhook delivery with a signature, checked
 * by its route) only for an address not throttled for wrong credentials.
 */
export type OpenPath = 'public' | 'signed' | false;

/**
 * Why a request's `Host` is refused, or undefined: only loopback names and `allowed` ones (see
 * {@link HttpAccessOptions.allowedHosts}). A request without one (HTTP/1.0) is not from a browser.
 */
export function hostProblem(host: string | undefined, allowed: readonly string[]): string | undefined {
  if (host === undefined || allowed.includes('*')) return undefined;
  let name: string;
  try {
    name = new URL(`http://${host}`).hostname.toLowerCase();
  } catch {
    return `the Host header "${host}" is not a host name`;
  }
  if (
    isLoopbackName(name) ||
    allowed.some((a) => (a.startsWith('.') ? name === a.slice(1) || name.endsWith(a) : name === a))
  )
    return undefined;
  return `this server does not answer to the name "${name}" (a web page may be trying to reach it through DNS rebinding); if that is its name, add it to AGENT_ALLOWED_HOSTS`;
}

/** Whether a host name (as `URL.hostname` gives it) names this machine: `localhost`, `*.localhost`, 127.x, `[::1]`. */
function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name.endsWith('.localhost') || name === '[::1]' || isLoopback(name);
}

/**
 * Why a request's `Origin` (a web page's) is refused, or undefined: the page must be one of the
 * CORS origins, be served by this server itself (its origin names the request's own host), or be
 * a page on this machine calling the API on this machine: a front-end dev server (Vite on :5173)
 * whose proxy forwards to the API with its own `Host` (`changeOrigin`). No site on the web has a
 * loopback origin, and a page that rebinds its own name to 127.0.0.1 keeps its own name as its
 * origin, so this lets no foreign page in.
 */
export function originProblem(
  origin: string | undefined,
  host: string | undefined,
  corsOrigins: readonly string[],
): string | undefined {
  if (origin === undefined || corsOrigins.includes('*') || corsOrigins.includes(origin)) return undefined;
  try {
    if (origin !== 'null' && host !== undefined) {
      const page = new URL(origin);
      const server = new URL(`http://${host}`);
      if (page.host === server.host) return undefined;
      if (isLoopbackName(page.hostname.toLowerCase()) && isLoopbackName(server.hostname)) return undefined;
    }
  } catch {
    // not a URL: refused below
  }
  return `requests from web pages at ${origin} are refused; to allow them, add the origin to AGENT_HTTP_CORS_ORIGINS`;
}

/** Whether a page at `origin` (a loopback one) calls a server it reached by a loopback name (`host`). */
function loopbackPair(origin: string, host: string | undefined): boolean {
  if (origin === 'null' || host === undefined) return false;
  try {
    return isLoopbackName(new URL(origin).hostname.toLowerCase()) && isLoopbackName(new URL(`http://${host}`).hostname);
  } catch {
    return false;
  }
}

/** Answers 403 with a sentence. */
function forbidden(res: ServerResponse, error: string, errorType: string): void {
  res.writeHead(403, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify({ error, errorType }));
}

/** The access rules of one server; see {@link accessChecker}. */
export interface AccessChecker {
  (req: IncomingMessage, res: ServerResponse): AccessDecision;
  /**
   * Counts a credential a route found wrong (a webhook's bad signature) against the caller's
   * address, as wrong tokens are: returns 0 while the address may go on, else the seconds until it
   * may try again (answer 429).
   */
  failedCredential(req: IncomingMessage): number;
}

/**
 * Applies the access rules to a request before it is routed: the `Host` (403 for a name this
 * server does not answer to, which stops DNS rebinding) and `Origin` (403 for a page that is
 * neither a CORS origin nor served here), CORS headers (and answers a preflight), the bearer token
 * (401 with `WWW-Authenticate: Bearer`), the rate limit (429 with `Retry-After`), which requests
 * with a wrong token count against too, per address (at {@link FAILED_AUTH_PER_MINUTE} a minute
 * without a limit set). A target that is not a URL gets 400. `open` paths (see {@link OpenPath})
 * skip the host, the token and the limit; an address over its wrong guesses gets 429 on signed
 * ones, never on public ones.
 */
export function accessChecker(
  options: HttpAccessOptions,
  open: (path: string, req: IncomingMessage) => OpenPath = () => false,
): AccessChecker {
  const tokens = options.tokens ?? [];
  const origins = options.corsOrigins ?? [];
  const limiter = options.rateLimitPerMinute ? new RateLimiter(options.rateLimitPerMinute) : undefined;
  // Wrong tokens are limited per address whether or not a rate limit is set: guessing costs time.
  const guesses = new RateLimiter(options.rateLimitPerMinute ?? FAILED_AUTH_PER_MINUTE);
  // Without tokens, the host is all that tells a page on another site from the user's own tools.
  const checkHost = tokens.length === 0 || options.allowedHosts !== undefined;
  const allowedHosts = options.allowedHosts ?? [];
  const address = (req: IncomingMessage) => `a:${req.socket.remoteAddress ?? '?'}`;
  const checkAccess = (req: IncomingMessage, res: ServerResponse): AccessDecision => {
    const origin = req.headers.origin;
    const url = requestUrl(req);
    if (!url) {
      sendBadTarget(res);
      return 'answered';
    }
    const kind = open(url.pathname, req);
    if (kind === 'public') return 'allowed';
    if (kind === 'signed') {
      const retryAfter = guesses.blocked(address(req));
      if (retryAfter === 0) return 'allowed';
      tooMany(res, retryAfter, options.rateLimitPerMinute ?? FAILED_AUTH_PER_MINUTE);
      return 'answered';
    }
    const badHost = checkHost ? hostProblem(req.headers.host, allowedHosts) : undefined;
    if (badHost) {
      forbidden(res, badHost, 'Http.ForbiddenHost');
      return 'answered';
    }
    const badOrigin = originProblem(origin, req.headers.host, origins);
    if (badOrigin) {
      forbidden(res, badOrigin, 'Http.ForbiddenOrigin');
      return 'answered';
    }
    if (answerCors(req, res, origins)) return 'answered';
    const token = presentedToken(req);
    if (tokens.length > 0 && !tokenMatches(token, tokens)) {
      refuseToken(res, token, guesses.take(address(req)), options.rateLimitPerMinute ?? FAILED_AUTH_PER_MINUTE);
      return 'answered';
    }
    if (limiter) {
      // Per token when there are tokens (one caller may use many addresses), else per address.
      const client = tokens.length > 0 ? `t:${digest(token!).toString('hex')}` : address(req);
      const retryAfter = limiter.take(client);
      if (retryAfter > 0) {
        tooMany(res, retryAfter, options.rateLimitPerMinute!);
        return 'answered';
      }
    }
    return 'allowed';
  };
  return Object.assign(checkAccess, { failedCredential: (req: IncomingMessage) => guesses.take(address(req)) });
}

/** 429, with when to try again. */
function tooMany(res: ServerResponse, retryAfter: number, perMinute: number): void {
  res.writeHead(429, { 'content-type': 'application/json; charset=utf-8', 'retry-after': String(retryAfter) });
  res.end(
    JSON.stringify({
      error: `too many requests: at most ${perMinute} a minute; try again in ${retryAfter} s`,
      errorType: 'Http.RateLimited',
    }),
  );
}

/** A missing or wrong token: 401 (429 once the address has guessed too often). */
function refuseToken(res: ServerResponse, token: string | undefined, retryAfter: number, perMinute: number): void {
  if (retryAfter > 0) return tooMany(res, retryAfter, perMinute);
  res.writeHead(401, {
    'content-type': 'application/json; charset=utf-8',
    'www-authenticate': 'Bearer realm="durable-agents"',
  });
  res.end(
    JSON.stringify({
      error: token === undefined ? 'missing bearer token (Authorization: Bearer <token>)' : 'invalid bearer token',
      errorType: 'Http.Unauthorized',
    }),
  );
}

/**
 * CORS: the headers for an origin that may call (a CORS origin, or a page on this machine), and
 * the answer to its preflight. True when it answered (a preflight).
 */
function answerCors(req: IncomingMessage, res: ServerResponse, origins: readonly string[]): boolean {
  const origin = req.headers.origin;
  // A page on this machine calling the API on this machine (Vite's dev server on localhost:5173
  // fetching 127.0.0.1:8080) is let through CORS as well as the origin check: no site on the
  // web has a loopback origin (see originProblem).
  const local = origin !== undefined && loopbackPair(origin, req.headers.host);
  if (origin && (origins.includes('*') || origins.includes(origin) || local)) {
    const any = origins.includes('*') && !local;
    res.setHeader('access-control-allow-origin', any ? '*' : origin);
    res.setHeader('vary', 'Origin');
    // A named origin may send the cookie (the Temporal UI's "include cross-origin credentials").
    if (!any) res.setHeader('access-control-allow-credentials', 'true');
    res.setHeader('access-control-expose-headers', 'location, x-workflow-id, retry-after');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        'access-control-allow-methods': 'GET, POST, PUT, DELETE, OPTIONS',
        'access-control-allow-headers':
          'authorization, content-type, last-event-id, prefer, mcp-session-id, mcp-protocol-version, x-namespace, x-signature-256',
        'access-control-max-age': '600',
      });
      res.end();
      return true;
    }
  }
  return false;
}
