import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineAgent } from '../../src/agents/define-agent';
import { keptEvents } from '../../src/client/event-stream';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { freePort } from '../../src/connection/dev-server';
import type { McpServers } from '../../src/tools/mcp-client/mcp-config';
import { ToolRegistry } from '../../src/tools/registry';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { cleanEnv, ROOT, runTs } from '../helpers/processes';
import { readStatus } from '../../src/client/workflow-controls';
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

it("waits in the run for a person to answer a server's elicitation, across a worker restart, answered from the CLI", async () => {
  const m = await startModel((req) =>
    toolResults(req).length === 0 ? call(['everything__trigger-elicitation-request', {}]) : answer(toolResults(req)[0]),
  );
  const t = temporal();
  const agent = defineAgent({ name: 'form_filler', instructions: 'Fill it.', tools: [], mcpServers: ['everything'] });
  const mcpServers: McpServers = { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } };
  const first = await createTestWorker(t, {
    baseURL: m.baseURL,
    registry: new ToolRegistry(),
    agents: [agent],
    mcpServers,
  });
  const { handle, status, events } = await first.worker.runUntil(async () => {
    const h = await startAgentRun(
      t.client,
      { agent: 'form_filler', message: 'fill in the form' },
      { taskQueue: first.taskQueue },
    );
    // The server's form is a question in the run.
    await eventuallyWaiting(h.workflowId);
    const events = await keptEvents(t.client, h.workflowId);
    return { handle: h, status: await readStatus(t.client, h.workflowId), events };
  });
  expect(status.pendingApprovals[0]).toMatchObject({
    name: 'everything__trigger-elicitation-request',
    question: expect.stringMatching(
      /^everything asks: Please provide inputs for the following fields: .*"name" \(string, required\)/,
    ),
  });
  // The form itself, for clients that draw it.
  const asked = events.find((e) => e.type === 'mcp_elicitation');
  expect(asked).toMatchObject({
    tool: 'everything__trigger-elicitation-request',
    server: 'everything',
    message: 'Please provide inputs for the following fields:',
    requestedSchema: { type: 'object', properties: expect.objectContaining({ name: expect.anything() }) },
  });
  // The worker is gone (restarted); a new one carries on, and a person answers from the CLI.
  const second = await createTestWorker(t, {
    baseURL: m.baseURL,
    registry: new ToolRegistry(),
    agents: [agent],
    mcpServers,
    taskQueue: first.taskQueue,
  });
  const env = cleanEnv({ TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!, AGENT_TASK_QUEUE: first.taskQueue });
  await second.worker.runUntil(async () => {
    const callId = status.pendingApprovals[0].callId;
    const bad = await runTs(['client.ts', 'approve', handle.workflowId, callId, '--reason', '{"integer": 500}'], env);
    expect([bad.code, bad.stdout]).toEqual([0, `Approved ${callId}\n`]);
    // An answer that does not fit the form is asked again, saying why.
    let again = await readStatus(t.client, handle.workflowId);
    for (let i = 0; i < 150 && !again.pendingApprovals[0]?.question?.includes('did not fit'); i++) {
      await new Promise((r) => setTimeout(r, 200));
      again = await readStatus(t.client, handle.workflowId);
    }
    expect(again.pendingApprovals[0].question).toMatch(
      /The last answer did not fit: the answer does not fit the form: .*integer/,
    );
    const good = await runTs(
      ['client.ts', 'approve', handle.workflowId, callId, '--reason', '{"name": "Ada Lovelace", "check": true}'],
      env,
    );
    expect(good.code).toBe(0);
    const outcome = await runOutcome(handle);
    expect(outcome.status).toBe('completed');
    // The server got the answer, with the form's defaults filled in by the SDK.
    expect(outcome.content).toContain('"name": "Ada Lovelace"');
    expect(outcome.content).toContain('"integer": 42');
  });

  async function eventuallyWaiting(id: string): Promise<void> {
    for (let i = 0; i < 150; i++) {
      const s = await readStatus(t.client, id);
      if (s.pendingApprovals.length) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error('the run did not come to wait for a person');
  }
}, 180_000);

it("answers a server's sampling request with the run's model, as a recorded model call of the run", async () => {
  const m = await startModel((req) => {
    const user = String(req.messages.at(-1)!.content);
    if (user.startsWith('Resource trigger-sampling-request context:')) return answer('sampled: 42');
    const results = toolResults(req);
    return results.length
      ? answer(results[0])
      : call(['everything__trigger-sampling-request', { prompt: 'what is 6 times 7?', maxTokens: 50 }]);
  });
  const t = temporal();
  const agent = defineAgent({ name: 'sampler', instructions: 'Ask.', tools: [], mcpServers: ['everything'] });
  const { worker, taskQueue } = await createTestWorker(t, {
    baseURL: m.baseURL,
    registry: new ToolRegistry(),
    agents: [agent],
    mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
  });
  await worker.runUntil(async () => {
    const handle = await startAgentRun(t.client, { agent: 'sampler', message: 'sample it' }, { taskQueue });
    const outcome = await runOutcome(handle);
    expect(outcome.status).toBe('completed');
    // The server got the model's reply.
    expect(outcome.content).toContain('"text": "sampled: 42"');
    // The sampling request went to the model once, with the server's system prompt and no tools.
    const sampled = m.requests.filter((r) => String(r.messages.at(-1)!.content).startsWith('Resource trigger'));
    expect(sampled).toHaveLength(1);
    expect(sampled[0].messages[0]).toMatchObject({ role: 'system', content: 'You are a helpful test server.' });
    expect(sampled[0].tools ?? []).toEqual([]);
    // A model call of the run: an activity in its history, its usage counted in the run's.
    const history = await t.client.workflow.getHandle(handle.workflowId).fetchHistory();
    const activities = history.events!.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
    expect(activities.filter((a) => a === 'sampleModel')).toHaveLength(1);
    // The run's usage is its model calls' and the sampling's, together.
    const replies = history.events!.flatMap((e) => {
      const data = e.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data;
      return data ? [JSON.parse(Buffer.from(data).toString('utf8')) as { usage?: { totalTokens: number } }] : [];
    });
    const spent = replies.map((r) => r.usage?.totalTokens ?? 0);
    expect(spent.filter((n) => n > 0)).toHaveLength(3);
    expect(outcome.usage.totalTokens).toBe(spent.reduce((a, b) => a + b, 0));
  });
}, 120_000);
