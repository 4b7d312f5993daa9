import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { calculatorAgent, exampleAgents } from '../../scripts/demo-agents/agents';
import { freePort } from '../../src/connection/dev-server';
import { cleanEnv, ROOT, runTs, devServerPort, nodeArgs } from '../helpers/processes';
import { answer, call, closeScriptedModels, lastOf, startModel, toolResults } from '../helpers/scripted-model';
import { connectTestTemporal, createTestWorker, type TestTemporal } from '../helpers/temporal';

/** `npm run mcp`: an MCP client (the official SDK's) calls durable agents over stdio and HTTP. */

afterEach(closeScriptedModels);

/** The calculator adds "add A and B"; any other message is echoed with the conversation's first message. */
function calculatorModel() {
  return startModel((req) => {
    const user = lastOf(req, 'user');
    const add = /^add (\d+) and (\d+)$/.exec(user);
    if (req.messages[req.messages.length - 1].role === 'tool') return answer(`the sum is ${toolResults(req)[0]}`);
    if (add) return call(['add', { a: Number(add[1]), b: Number(add[2]) }]);
    const first = req.messages.find((m) => m.role === 'user')?.content;
    return answer(`you said "${user}"; you first said "${first}"`);
  });
}

const text = (result: unknown) =>
  (result as { content: Array<{ type: string; text: string }> }).content.map((c) => c.text).join('\n');

describe('npm run mcp over stdio (embedded Temporal, its own worker)', () => {
  it('lists the agents as tools, runs one with progress notifications, and keeps a conversation by id', async () => {
    const model = await calculatorModel();
    const env = cleanEnv({
      OPENAI_BASE_URL: model.baseURL,
      OPENAI_API_KEY: 'e2e',
      AGENT_DEV_SERVER_PORT: String(await devServerPort()),
      AGENT_DEV_SERVER_DB: `/tmp/durable-agents-mcp-${randomUUID()}.db`,
    });
    const client = new McpClient({ name: 'e2e', version: '1' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: nodeArgs(['mcp.ts']),
      cwd: ROOT,
      env: env as Record<string, string>,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    await client.connect(transport, { timeout: 90_000 });
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(exampleAgents.map((a) => a.name).sort());
      expect(tools.find((t) => t.name === 'calculator')?.description).toContain(calculatorAgent.description);
      expect(tools[0].inputSchema).toMatchObject({
        properties: { message: { type: 'string' }, conversationId: { type: 'string' } },
        required: ['message'],
      });

      const progress: string[] = [];
      const result = await client.callTool({ name: 'calculator', arguments: { message: 'add 2 and 3' } }, undefined, {
        onprogress: (p) => progress.push(String(p.message)),
        timeout: 60_000,
      });
      expect(result.isError).toBe(false);
      expect(text(result)).toMatch(
        /^the sum is 5\nTemporal workflow: agent-add-2-and-3-[0-9a-f]+ \(http:\/\/localhost:\d+\/namespaces\/default\/workflows\/agent-add-2-and-3-[0-9a-f]+\); status completed, 2 model calls\.$/,
      );
      expect(result.structuredContent).toMatchObject({
        workflowId: expect.stringMatching(/^agent-add-2-and-3-/),
        status: 'completed',
        content: 'the sum is 5',
        iterations: 2,
      });
      expect(progress).toEqual(
        expect.arrayContaining(['thinking (model call 1)', 'calling add', 'add done', 'thinking (model call 2)']),
      );

      const id = `mcp-conv-${randomUUID()}`;
      await client.callTool({ name: 'calculator', arguments: { message: 'hello', conversationId: id } });
      const second = await client.callTool({ name: 'calculator', arguments: { message: 'again', conversationId: id } });
      expect(text(second)).toContain('you said "again"; you first said "hello"');
      expect(second.structuredContent).toMatchObject({ workflowId: id, status: 'completed' });

      const bad = await client.callTool({ name: 'calculator', arguments: { message: '' } });
      expect(bad.isError).toBe(true);
      // Too long for a run: refused by the tool's input schema, before the call reaches us (it used
      // to start a workflow that then failed, with the 200 KB in its history).
      const long = await client.callTool({ name: 'calculator', arguments: { message: 'x'.repeat(200_000) } });
      expect(long.isError).toBe(true);
      expect(text(long)).toMatch(/^MCP error -32602: Input validation error: .*100000/s);
    } finally {
      await client.close();
    }
    expect(stderr).toContain('durable-agents MCP server on stdio: agents calculator, weather');
  });
});

describe('npm run mcp -- --http (a configured Temporal, workers elsewhere)', () => {
  let t: TestTemporal;
  beforeAll(async () => {
    t = await connectTestTemporal();
  });
  afterAll(async () => t?.close());

  it('serves the agents over streamable HTTP to clients with a bearer token; a failed run is an MCP error result naming the failure', async () => {
    const model = await startModel((req) =>
      lastOf(req, 'user') === 'fail'
        ? { http: { status: 401, body: { error: { message: 'bad key' } } } }
        : answer(`echo ${lastOf(req, 'user')}`),
    );
    const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL, agents: exampleAgents });
    const port = await freePort();
    const token = 'mcp-token-0123456789';
    const env = cleanEnv({
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
      AGENT_TASK_QUEUE: taskQueue,
      AGENT_HTTP_TOKENS: token,
    });
    await worker.runUntil(async () => {
      const server = spawn(
        process.execPath,
        nodeArgs(['mcp.ts', '--http', '--port', String(port), '--agents', 'calculator']),
        { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      const ready = new Promise<void>((resolve, reject) => {
        server.stderr!.on('data', (d: Buffer) => {
          stderr += d.toString();
          if (stderr.includes('Press Ctrl+C')) resolve();
        });
        server.once('exit', (code) => reject(new Error(`mcp exited with ${code}: ${stderr}`)));
      });
      await ready;
      const stranger = new McpClient({ name: 'e2e', version: '1' });
      await expect(
        stranger.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`))),
      ).rejects.toThrow(/401|Unauthorized|bearer/i);
      const client = new McpClient({ name: 'e2e', version: '1' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      try {
        expect((await client.listTools()).tools.map((x) => x.name)).toEqual(['calculator']);
        const ok = await client.callTool({ name: 'calculator', arguments: { message: 'hi there' } });
        expect(text(ok)).toMatch(/^echo hi there\nTemporal workflow: agent-hi-there-/);
        const failed = await client.callTool({ name: 'calculator', arguments: { message: 'fail' } });
        expect(failed.isError).toBe(true);
        expect(text(failed)).toMatch(/^The agent failed \(ModelCall\.Auth\): .*bad key/);
      } finally {
        await client.close();
        server.kill('SIGTERM');
        await new Promise((r) => server.once('exit', r));
      }
      expect(stderr).toContain(
        `durable-agents MCP server on http://127.0.0.1:${port}/mcp (streamable HTTP): agents calculator (task queue "${taskQueue}")`,
      );
    });
  });

  it('refuses bad flags before connecting anywhere', async () => {
    const r = await runTs(['client.ts', 'mcp', '--port', 'x', '--http'], cleanEnv({ TEMPORAL_ADDRESS: '127.0.0.1:1' }));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--port must be a port number (0-65535), got "x"');
    expect(r.stderr).toContain('usage: client.ts mcp [--http]');
    const open = await runTs(
      ['client.ts', 'mcp', '--http', '--host', '0.0.0.0'],
      cleanEnv({ TEMPORAL_ADDRESS: '127.0.0.1:1' }),
    );
    expect(open.code).toBe(2);
    expect(open.stderr).toContain(
      '--host 0.0.0.0 would expose the agents to the network without authentication: set AGENT_HTTP_TOKENS',
    );
  });
});
