import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttpTransport,
} from '@modelcontextprotocol/client';
import type { CreateMessageRequest, CreateMessageResult, ElicitResult } from '@modelcontextprotocol/sdk/types.js';

/**
 * MCP's 2026-07-28 revision for the worker's tool sources, on the official SDK's v2 client
 * (`@modelcontextprotocol/client`): stateless requests after `server/discover`, no session, and a
 * server's questions (elicitation, sampling) as multi-round-trip `input_required` results, which
 * the SDK answers through the same handlers as a 2025-11-25 server's requests, so they become the
 * same durable questions and model calls. A server that does not offer the revision is spoken to
 * as before (`mcp-tool-source.ts`, on SDK 1.x), until its OAuth and error handling move over too.
 */
export { ModernClient };

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
): Promise<ModernClient | undefined> {
  const client = new ModernClient(
    { name: 'durable-agents', version: '0.1.0' },
    {
      capabilities: { elicitation: { form: { applyDefaults: true }, url: {} }, sampling: {} },
      versionNegotiation: { mode: 'auto', probe: { timeoutMs } },
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
  try {
    await client.connect(new ModernHttpTransport(new URL(url), { requestInit: { headers } }), { timeout: timeoutMs });
  } catch {
    await client.close().catch(() => undefined);
    return undefined;
  }
  if (client.getProtocolEra() !== 'modern') {
    await client.close().catch(() => undefined);
    return undefined;
  }
  return client;
}
