/**
 * A real MCP server for tests, over stdio (`--stdio`) or streamable HTTP (`--http <port>`, with
 * sessions). Tools: `echo`, `add`, `fail` (an isError result), `slow` (waits; logs when it is
 * cancelled), `files.read` (a name OpenAI does not allow), `picture` (an image and text) and
 * `flaky` (the process exits in the middle of the call once per MARKER file, as a crash would) and
 * `big` (a text of the given number of bytes).
 * MCP_LOG: a file to append what happened to; MCP_TOKEN: a bearer token HTTP requests must carry.
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const logFile = process.env.MCP_LOG;
const log = (line: string) => {
  if (logFile) appendFileSync(logFile, `${line}\n`);
};

function buildServer(): McpServer {
  const server = new McpServer({ name: 'test-server', version: '1.0.0' });
  // A 1x1 PNG, for the `picture` tool: models that take images get it.
  const ONE_PIXEL_PNG =
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
  server.registerTool(
    'echo',
    { description: 'Echoes the text', inputSchema: { text: z.string() } },
    async ({ text }) => {
      log(`echo ${text}`);
      return { content: [{ type: 'text', text: `echo: ${text}` }] };
    },
  );
  server.registerTool(
    'add',
    { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );
  server.registerTool(
    'fail',
    { description: 'Always fails', inputSchema: { reason: z.string() } },
    async ({ reason }) => ({ isError: true, content: [{ type: 'text', text: `cannot do that: ${reason}` }] }),
  );
  server.registerTool(
    'slow',
    { description: 'Takes its time', inputSchema: { ms: z.number() } },
    async ({ ms }, extra) => {
      log(`slow started ${ms}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        extra.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          log('slow cancelled');
          resolve();
        });
      });
      return { content: [{ type: 'text', text: `waited ${ms} ms` }] };
    },
  );
  server.registerTool(
    'files.read',
    { description: 'Reads a file', inputSchema: { path: z.string() } },
    async ({ path }) => ({ content: [{ type: 'text', text: `contents of ${path}` }] }),
  );
  server.registerTool('picture', { description: 'Draws a picture' }, async () => ({
    content: [
      { type: 'text', text: 'here it is' },
      { type: 'image', data: ONE_PIXEL_PNG, mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'a note' } },
    ],
  }));
  server.registerTool(
    'big',
    { description: 'Writes a long text', inputSchema: { bytes: z.number() } },
    async ({ bytes }) => ({ content: [{ type: 'text', text: 'x'.repeat(bytes - 4) + ' end' }] }),
  );
  server.registerTool('flaky', { description: 'Reads a page', inputSchema: { page: z.number() } }, async ({ page }) => {
    const marker = process.env.MARKER;
    if (marker && !existsSync(marker)) {
      writeFileSync(marker, 'crashed once');
      log(`flaky crashes on page ${page}`);
      setTimeout(() => process.exit(3), 50);
      return new Promise(() => undefined); // never answers: the process dies first
    }
    log(`flaky page ${page}`);
    return { content: [{ type: 'text', text: `page ${page} of the flaky server` }] };
  });
  return server;
}

async function main(): Promise<void> {
  const [mode, port] = process.argv.slice(2);
  if (mode === '--stdio') {
    log(`stdio server ${process.pid} started`);
    await buildServer().connect(new StdioServerTransport());
    return;
  }
  const token = process.env.MCP_TOKEN;
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer(async (req, res) => {
    if (token && req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'unauthorized' }));
      return;
    }
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (!transport) {
      if (typeof id === 'string') {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => void sessions.set(sid, created),
      });
      transport = created;
      await buildServer().connect(created);
    }
    await transport.handleRequest(req, res);
  });
  http.listen(Number(port), '127.0.0.1', () => {
    log(`http server ${process.pid} listening`);
    process.stdout.write(`listening on ${port}\n`);
  });
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
