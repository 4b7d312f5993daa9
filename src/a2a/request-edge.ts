import { AGENT_CARD_PATH } from '@a2a-js/sdk';
import type { IncomingMessage } from 'node:http';

/**
 * The base URL the cards advertise for a request: `publicUrl` when the server is behind a proxy;
 * otherwise the request's own scheme and host, with a loopback address named `localhost` (what the
 * A2A TCK and most clients expect of a local server: a card that names `127.0.0.1` reads as an
 * internal address leaking out).
 */
export function publicBase(
  req: { protocol: string; get(name: string): string | undefined },
  publicUrl?: string,
): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, '');
  return `${req.protocol}://${loopbackAsLocalhost(req.get('host') ?? 'localhost')}`;
}

/** `127.0.0.1:8080` → `localhost:8080` (any 127/8 address, and `[::1]`); other hosts as they are. */
export function loopbackAsLocalhost(host: string): string {
  const m = /^(\[::1\]|127(?:\.\d{1,3}){3})(:\d+)?$/.exec(host);
  return m ? `localhost${m[2] ?? ''}` : host;
}

/**
 * A JSON-RPC request without an `A2A-Version` header is read by the SDK as protocol 0.3 (the
 * version before the header existed). A request that names a 1.0 method (`SendMessage`, `GetTask`:
 * 0.3's are `message/send`, `tasks/get`, always with a slash) is a 1.0 client that did not send
 * the header, as the A2A TCK does: it gets the header, and a 1.0 answer. So does a request with no
 * method at all, which only 1.0's handler answers with the spec's -32600.
 */
export function assumeVersionFromMethod(req: IncomingMessage & { body?: unknown }): void {
  if (req.headers[VERSION_HEADER] !== undefined) return;
  const body = req.body;
  const method =
    body && typeof body === 'object' && !Array.isArray(body) ? (body as { method?: unknown }).method : undefined;
  if (typeof method === 'string' && method.includes('/')) return;
  req.headers[VERSION_HEADER] = '1.0';
}

/**
 * The SDK's `A2A_VERSION_HEADER`, as Node names incoming headers. Spelled out so this file does not
 * load the SDK: `serve` reads {@link publicUrlProblem} at start, and loads the SDK only for A2A.
 */
const VERSION_HEADER = 'a2a-version';

/** Checks `AGENT_PUBLIC_URL`/`publicUrl`: an http(s) URL without query or fragment. */
export function publicUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `"${url}" is not a URL like https://agents.example.com`;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return `"${url}" is not an http or https URL (like https://agents.example.com)`;
  if (parsed.search || parsed.hash) return `"${url}" has a query or fragment; give the base URL alone`;
  return undefined;
}

/**
 * Whether a request is for the default agent at the server's root: its card, JSON-RPC at `/`, and
 * HTTP+JSON's paths (`/message:send`, `/tasks/...`, `/extendedAgentCard`, 0.3's `/v1/...`), where
 * clients given only the server's address send them (the A2A TCK joins every path to the root).
 */
export function isRootAgentPath(method: string | undefined, path: string): boolean {
  if (path === ROOT_CARD_PATH) return method === 'GET' || method === 'HEAD';
  if (path === '/') return method === 'POST';
  return ROOT_REST.test(path);
}

/** Where clients look for a server's agent card (the SDK's `AGENT_CARD_PATH`, from the root). */
export const ROOT_CARD_PATH = `/${AGENT_CARD_PATH}`;

const ROOT_REST = /^\/(?:v1\/)?(?:message:(?:send|stream)$|tasks(?:$|[/:])|extendedAgentCard$|card$)/;
