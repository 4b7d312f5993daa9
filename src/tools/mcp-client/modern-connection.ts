import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttpTransport,
} from '@modelcontextprotocol/client';
import { StdioClientTransport as SdkStdioTransport } from '@modelcontextprotocol/client/stdio';
import type { OAuthClientProvider } from '@modelcontextprotocol/client';
import { loginNeeded } from './mcp-oauth';
import type { CreateMessageRequest, CreateMessageResult, ElicitResult } from '@modelcontextprotocol/sdk/types.js';

/**
 * MCP's 2026-07-28 revision for the worker's tool sources, on the official SDK's v2 client
 * (`@modelcontextprotocol/client`): stateless requests after `server/discover`, no session, and a
 * server's questions (elicitation, sampling) as multi-round-trip `input_required` results, which
 * the SDK answers through the same handlers as a 2025-11-25 server's requests, so they become the
 * same durable questions and model calls. Over HTTP (with or without OAuth), a server that does
 * not offer the revision is spoken to as before (`mcp-tool-source.ts`, on SDK 1.x), whose error
 * handling the outage tests pin down; over stdio the v2 client serves both revisions (see
 * {@link connectModernStdio}).
 */
export { ModernClient };

/** How long a stdio server may take to answer `server/discover` before it is taken for a 2025 one. */
const STDIO_PROBE_MS = 10_000;

/** The version this client reports to servers. */
const CLIENT_VERSION = '0.2.0';

/** What a modern connection answers a server's questions with (the tool source's handlers). */
export interface ModernHandlers {
  elicit(params: Record<string, unknown>, signal: AbortSignal): Promise<ElicitResult>;
  sample(params: CreateMessageRequest['params'], signal: AbortSignal): Promise<CreateMessageResult>;
  toolsChanged(): void;
}

/**
 * A client of the streamable-HTTP server at `url` on the 2026-07-28 revision, or undefined when the
 * server does not offer it (or cannot be reached this way: the caller connects as before and
 * reports that). The SDK probes with `server/discover` and falls back to `initialize`; a fallback
 * is closed here, so a 2025-era server keeps the connection it always had.
 */
export async function connectModern(
  url: string,
  headers: Record<string, string>,
  handlers: ModernHandlers,
  timeoutMs: number,
  authProvider?: OAuthClientProvider,
): Promise<ModernClient | undefined> {
  const client = modernClient(handlers, timeoutMs);
  try {
    await client.connect(
      new ModernHttpTransport(new URL(url), { requestInit: { headers }, ...(authProvider ? { authProvider } : {}) }),
      { timeout: timeoutMs },
    );
  } catch (err) {
    await client.close().catch(() => undefined);
    // A login the worker lacks is the answer, whatever the revision.
    if (loginNeeded(err)) throw err;
    return undefined;
  }
  if (client.getProtocolEra() !== 'modern') {
    await client.close().catch(() => undefined);
    return undefined;
  }
  return client;
}

/** How a stdio server is started. */
export interface StdioCommand {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
}

/**
 * A client of the stdio server `command` in the newest revision it speaks: 2026-07-28 when it
 * answers `server/discover`, else 2025-11-25 (`initialize`) on the same process, so a server is
 * started once either way. Undefined when the server went away at the probe (a server whose SDK
 * ends on any request before `initialize`): the caller starts it again with the handshake alone.
 */
export async function connectModernStdio(
  server: StdioCommand,
  handlers: ModernHandlers,
  timeoutMs: number,
): Promise<ModernClient | undefined> {
  // A server that ignores the probe is a 2025 server after this long (one still starting, npx
  // installing it, too: it is then spoken to on 2025-11-25).
  const client = modernClient(handlers, Math.min(timeoutMs, STDIO_PROBE_MS));
  try {
    await client.connect(new InPlaceStdioTransport({ ...server, stderr: 'inherit' }), { timeout: timeoutMs });
  } catch {
    await client.close().catch(() => undefined);
    return undefined;
  }
  return client;
}

/**
 * The SDK's stdio transport, probing in place: the base class probes `server/discover` on a
 * sibling process it starts for the purpose and then starts the server again; a subclass probes on
 * the one process (the SDK's documented behaviour for stdio-shaped transports), so a 2025 server
 * that answers the probe with an error is started once, as before.
 */
class InPlaceStdioTransport extends SdkStdioTransport {}

function modernClient(handlers: ModernHandlers, probeTimeoutMs: number): ModernClient {
  const client = new ModernClient(
    { name: 'durable-agents', version: CLIENT_VERSION },
    {
      capabilities: { elicitation: { form: { applyDefaults: true }, url: {} }, sampling: {} },
      versionNegotiation: { mode: 'auto', probe: { timeoutMs: probeTimeoutMs } },
    },
  );
  client.setRequestHandler('elicitation/create', (request, ctx) =>
    handlers.elicit(request.params as Record<string, unknown>, ctx.mcpReq.signal),
  );
  client.setRequestHandler(
    'sampling/createMessage',
    async (request, ctx) =>
      // The two SDKs' types of the same wire shape.
      (await handlers.sample(request.params as CreateMessageRequest['params'], ctx.mcpReq.signal)) as never,
  );
  client.setNotificationHandler('notifications/tools/list_changed', () => handlers.toolsChanged());
  return client;
}
