import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpServer as LegacyMcpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { McpServer as ModernMcpServer, MissingRequiredClientCapabilityError } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { loadAgentModule } from '../../src/cli/agent-module';
import { parseA2aArgs, parseMcpArgs } from '../../src/cli/server-args';
import { RequiredCapabilities, sdkRequestHandler, sdkToolCallHandler } from '../../src/mcp-server/mcp-server-extension';
import { SessionEventStore } from '../../src/mcp-server/session-event-store';

const message = (n: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/message', params: { n } });

describe('SessionEventStore', () => {
  it('replays what a stream sent after the last event a client saw, and nothing of other streams', async () => {
    const store = new SessionEventStore();
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await store.storeEvent(i % 2 ? 'b' : 'a', message(i)));
    const sent: Array<[string, JSONRPCMessage]> = [];
    const stream = await store.replayEventsAfter(ids[0], { send: async (id, m) => void sent.push([id, m]) });
    expect(stream).toBe('a');
    expect(sent).toEqual([[ids[2], message(2)]]);
    expect(await store.getStreamIdForEventId(ids[1])).toBe('b');
  });

  it('keeps the last messages only, and still knows the stream of an id it let go', async () => {
    const store = new SessionEventStore(3);
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await store.storeEvent('s', message(i)));
    const sent: number[] = [];
    await store.replayEventsAfter(ids[0], {
      send: async (_id, m) => void sent.push((m as unknown as { params: { n: number } }).params.n),
    });
    expect(sent).toEqual([2, 3, 4]);
    expect(await store.getStreamIdForEventId(ids[0])).toBe('s');
    expect(await store.replayEventsAfter('not-ours', { send: async () => undefined })).toBe('');
  });
});

describe('RequiredCapabilities', () => {
  const ctx = (capabilities: object) =>
    ({ mcpReq: { envelope: { 'io.modelcontextprotocol/clientCapabilities': capabilities } } }) as never;

  it("answers a tool's call with -32021 when the request's client lacks what the tool needs", () => {
    const required = new RequiredCapabilities();
    required.require('ask_model', { sampling: {} });
    expect(() => required.check('ask_model', ctx({}))).toThrow(MissingRequiredClientCapabilityError);
    expect(() => required.check('ask_model', ctx({ sampling: {} }))).not.toThrow();
    expect(() => required.check('other', ctx({}))).not.toThrow();
    let refused: unknown;
    try {
      required.check('ask_model', ctx({ elicitation: {} }));
    } catch (err) {
      refused = err;
    }
    expect(refused).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
  });
});

// The extension point hands calls of the application's tools to the SDK's own handler, kept in a
// private map of each SDK's server: a new SDK version that moves it fails here, not in production.
describe("the SDKs' own handlers, which the servers hand calls on to", () => {
  it('are found on the 2025-11-25 server (@modelcontextprotocol/sdk)', async () => {
    const server = new LegacyMcpServer({ name: 't', version: '1' });
    server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({
      content: [{ type: 'text', text }],
    }));
    const call = sdkToolCallHandler<object>(server);
    expect(call).toBeDefined();
    expect(
      await call!({ method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } } as never, {
        signal: new AbortController().signal,
        requestId: 1,
        sendNotification: async () => undefined,
        sendRequest: async () => undefined,
      }),
    ).toMatchObject({ content: [{ type: 'text', text: 'hi' }] });
  });

  it('are found on the 2026-07-28 server (@modelcontextprotocol/server), and its discover answer too', () => {
    const server = new ModernMcpServer({ name: 't', version: '1' });
    server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
      content: [{ type: 'text', text }],
    }));
    expect(sdkToolCallHandler(server)).toBeDefined();
    expect(sdkRequestHandler(server, 'tools/list')).toBeDefined();
    expect(typeof (server.server as unknown as { _ondiscover?: unknown })._ondiscover).toBe('function');
    // taskSupport sets a registered tool's `execution`, which registerTool drops, in this map.
    const registered = (server as unknown as { _registeredTools: Record<string, { execution?: unknown }> })
      ._registeredTools.echo;
    expect(registered).toBeDefined();
    expect('execution' in registered).toBe(true);
  });
});

describe('--module of mcp and a2a', () => {
  it('parses it', () => {
    expect(parseMcpArgs(['--http', '--module', 'x.js'])).toMatchObject({ transport: 'http', module: 'x.js' });
    expect(parseA2aArgs(['--module', 'a.js', '--port', '4000'])).toMatchObject({ port: 4000, module: 'a.js' });
  });

  it('takes --agents as a list of names, and refuses one with none', () => {
    expect(parseMcpArgs(['--agents', 'support, billing'])).toMatchObject({ agents: ['support', 'billing'] });
    for (const empty of ['', ','])
      expect(() => parseMcpArgs(['--agents', empty])).toThrow(/--agents needs at least one agent name/);
  });

  it("loads a module's `mcpServer`, and says what is wrong with one that is not an extension", () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-module-'));
    const good = join(dir, 'good.js');
    writeFileSync(good, 'exports.mcpServer = { legacy() {}, modern() {} };');
    expect(loadAgentModule(good, { mcpServer: true }).mcpServer).toBeDefined();
    const bad = join(dir, 'bad.js');
    writeFileSync(bad, 'exports.mcpServer = { legacy: 3 };');
    expect(() => loadAgentModule(bad, { mcpServer: true })).toThrow(/`mcpServer` must be an object with/);
    // Elsewhere (worker, serve, a2a) a module of nothing but an MCP server serves nothing.
    expect(() => loadAgentModule(good)).toThrow(/exports neither `agents` nor `tools`/);
  });
});
