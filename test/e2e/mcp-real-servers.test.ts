import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineAgent } from '../../src/agents/define-agent';
import { keptEvents } from '../../src/client/event-stream';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { freePort } from '../../src/connection/dev-server';
import type { McpServers } from '../../src/tools/mcp/mcp-config';
import { ToolRegistry } from '../../src/tools/registry';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { ROOT } from '../helpers/processes';
import { answer, call, startModel, toolResults } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/**
 * Our MCP client against servers no one here wrote, from the registry: the reference
 * `server-everything` over stdio and over streamable HTTP, and `server-filesystem` on a temporary
 * directory, their tools called by an agent through a scripted model.
 */
const temporal = useTestTemporal();

const EVERYTHING = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const FILESYSTEM = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');

/** Calls three of the server's tools at once (one reports progress), then reads the file, then answers. */
function model(server: string) {
  return (req: ChatRequest) => {
    const results = toolResults(req);
    if (results.length === 0)
      return call(
        [`${server}__echo`, { message: 'durable hello' }],
        [`${server}__get-sum`, { a: 2, b: 3 }],
        [`${server}__trigger-long-running-operation`, { duration: 2, steps: 4 }],
        [`${server}__get-tiny-image`, {}],
        [`${server}__get-annotated-message`, { messageType: 'success', includeImage: false }],
        [`${server}__get-resource-reference`, { resourceType: 'Text', resourceId: 3 }],
      );
    if (results.length === 6) return call(['files__read_text_file', { path: req.messages[1].content }]);
    return answer(results.join(' | '));
  };
}

async function startEverythingHttp(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const seen = (d: Buffer) => {
      out += d.toString();
      if (out.includes('listening on port')) resolve();
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.once('exit', (code) => reject(new Error(`server-everything exited with ${code}: ${out}`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

it.each(['stdio', 'http'] as const)(
  'runs an agent on server-everything (over %s) and server-filesystem: echo, add, a long operation with progress, a file',
  async (transport) => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-files-'));
    const file = join(dir, 'notes.txt');
    writeFileSync(file, 'the meeting is at noon\n');
    const http = transport === 'http' ? await startEverythingHttp() : undefined;
    try {
      const mcpServers: McpServers = {
        everything: http
          ? { url: http.url, timeout: '30s' }
          : { command: process.execPath, args: [EVERYTHING, 'stdio'], timeout: '30s' },
        files: { command: process.execPath, args: [FILESYSTEM, dir] },
      };
      const m = await startModel(model('everything'));
      const t = temporal();
      const agent = defineAgent({
        name: 'everything_user',
        instructions: 'Use the tools.',
        tools: [],
        mcpServers: ['everything', 'files'],
      });
      const { worker, taskQueue } = await createTestWorker(t, {
        baseURL: m.baseURL,
        registry: new ToolRegistry(),
        agents: [agent],
        mcpServers,
      });
      await worker.runUntil(async () => {
        // The first user message is the file's path (the model reads it from there).
        const handle = await startAgentRun(t.client, { agent: 'everything_user', message: file }, { taskQueue });
        const outcome = await runOutcome(handle);
        expect(outcome.status).toBe('completed');
        const [echo, sum, long, image, annotated, resource, read] = outcome.toolExecutions.map((x) => x.result);
        // The image goes to the model as an image (stored by reference), its place marked in the text.
        expect(image).toMatch(/\[image: image\/png, \d+ bytes\]/);
        expect(outcome.toolExecutions[3].images).toHaveLength(1);
        expect(annotated).toBe('Operation completed successfully');
        // An embedded resource: its URI and its text.
        expect(resource).toMatch(/\[resource demo:\/\/resource\/dynamic\/text\/3 \(text\/plain\)\]\nResource 3: /);
        expect(echo).toBe('Echo: durable hello');
        expect(sum).toMatch(/sum of 2 and 3 is 5/);
        expect(long).toMatch(/Long running operation completed\. Duration: 2 seconds, Steps: 4/);
        expect(read).toBe('the meeting is at noon\n');
        // The long operation's progress notifications reached the run's event stream.
        const progress = (await keptEvents(t.client, handle.workflowId)).filter((e) => e.type === 'tool_progress');
        expect(progress.length).toBeGreaterThanOrEqual(1);
        expect(progress[0]).toMatchObject({ name: 'everything__trigger-long-running-operation', total: 4 });
      });
    } finally {
      http?.child.kill();
    }
  },
  120_000,
);
