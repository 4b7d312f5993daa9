import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { createAgentMcpServer } from './agent-mcp-server';
import type { AgentMcpServerOptions } from './mcp-server-options';
import { createModernAgentMcpServer, requestStateCodec } from './modern/modern-server';
import { ExtensionTasks } from './modern/extension-tasks';

/** A connection served over stdio: ends when the client closes stdin, or on `close`. */
export interface StdioConnection {
  closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * The agents as an MCP server over stdio, in the revision the client opens with. Over stdio one
 * connection speaks one revision, chosen by its first message: a request that carries
 * 2026-07-28's `_meta` envelope (a `server/discover` probe, usually) gets the stateless server
 * (modern/, through the v2 SDK's `serveStdio`, pinned to that revision); anything else (an
 * `initialize`) gets the 2025-11-25 server with everything it has (`createAgentMcpServer`).
 *
 * Routed here rather than by `serveStdio` alone: its 2025 leg would serve a v2 server, which has
 * none of the 2025 server's sessions' features (log levels, resource subscriptions, 2025 tasks).
 */
export async function serveAgentsOverStdio(
  options: AgentMcpServerOptions,
  io: { stdin?: Readable; stdout?: Writable } = {},
): Promise<StdioConnection> {
  const raw = new StdioServerTransport(io.stdin, io.stdout);
  let closedNow!: () => void;
  const closed = new Promise<void>((resolve) => (closedNow = resolve));
  raw.onclose = () => closedNow();
  const opening = new Promise<JSONRPCMessage>((resolve) => (raw.onmessage = resolve));
  await raw.start();
  const first = await Promise.race([opening, closed.then(() => undefined)]);
  if (!first) return { closed, close: () => raw.close() };
  const link = new OpenedTransport(raw, first);
  if (isModernOpening(first)) {
    const codec = requestStateCodec(options.requestStateKey);
    // One set of extension tasks for the connection, whichever server instance answers a request.
    const tasks = new ExtensionTasks();
    const handle = serveStdio(() => createModernAgentMcpServer(options, codec, undefined, tasks), {
      legacy: 'reject',
      // The two SDKs' transport interfaces describe the same object.
      transport: link as never,
    });
    return { closed, close: () => handle.close() };
  }
  const server = createAgentMcpServer(options);
  await server.connect(link);
  return { closed, close: () => server.close() };
}

/** Whether a connection's first message opens 2026-07-28: a request carrying its envelope. */
export function isModernOpening(message: JSONRPCMessage): boolean {
  const params = (message as { params?: { _meta?: Record<string, unknown> } }).params;
  return 'method' in message && typeof params?._meta?.['io.modelcontextprotocol/protocolVersion'] === 'string';
}

/**
 * The stdio transport, already started and with its first message read, handed to the server
 * that serves the connection: the first message is delivered once that server is listening.
 */
class OpenedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  constructor(
    private readonly raw: StdioServerTransport,
    private readonly first: JSONRPCMessage,
  ) {
    raw.onmessage = (message) => this.onmessage?.(message);
    raw.onerror = (error) => this.onerror?.(error);
    const closed = raw.onclose;
    raw.onclose = () => {
      closed?.();
      this.onclose?.();
    };
  }

  async start(): Promise<void> {
    // The server sets its handlers before it starts the transport; the message follows that.
    setImmediate(() => this.onmessage?.(this.first));
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.raw.send(message);
  }

  close(): Promise<void> {
    return this.raw.close();
  }
}
