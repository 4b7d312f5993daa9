import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { accessChecker, type HttpAccessOptions } from '../http/access';
import { createAgentMcpServer, type AgentMcpServerOptions } from './agent-mcp-server';

/**
 * The agents as an MCP server over streamable HTTP, at `/mcp`, stateless, behind the HTTP API's
 * access rules (tokens, CORS, rate limit). Every request is answered, whatever it holds, and
 * none ends the server.
 */
export function createMcpHttpServer(options: AgentMcpServerOptions, access: HttpAccessOptions): Server {
  const checkAccess = accessChecker(access);
  return createServer((req, res) => {
    try {
      if (checkAccess(req, res) === 'allowed') {
        handleHttp(req, res, () => createAgentMcpServer(options)).catch((err: unknown) => internalError(res, err));
      }
    } catch (err) {
      internalError(res, err);
    }
  });
}

function internalError(res: ServerResponse, err: unknown): void {
  if (res.headersSent) return void res.end();
  res.writeHead(500, { 'content-type': 'application/json' }).end(
    JSON.stringify({
      jsonrpc: '2.0',
      error: { code: -32603, message: (err as Error)?.message ?? String(err) },
      id: null,
    }),
  );
}

/**
 * One HTTP request, stateless: a server and transport of its own (no sessions to keep across
 * requests or processes). Calls are the only requests a client needs to keep.
 */
async function handleHttp(
  req: IncomingMessage,
  res: ServerResponse,
  server: () => ReturnType<typeof createAgentMcpServer>,
): Promise<void> {
  const path = (req.url ?? '').split('?')[0];
  if (path !== '/mcp') {
    res
      .writeHead(404, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: 'not found: the MCP endpoint is /mcp' }));
    return;
  }
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'POST', 'content-type': 'application/json' }).end(
      JSON.stringify({
        jsonrpc: '2.0',
        error: { code: -32000, message: 'Method not allowed: this server is stateless (POST only)' },
        id: null,
      }),
    );
    return;
  }
  const mcp = server();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => {
    void transport.close();
    void mcp.close();
  });
  try {
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  } catch (err) {
    if (!res.headersSent)
      res.writeHead(500, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          jsonrpc: '2.0',
          error: { code: -32603, message: (err as Error).message },
          id: randomUUID(),
        }),
      );
  }
}
