import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import {
  CancelTaskResultV2Schema,
  CreateTaskResultV2Schema,
  GetTaskResultV2Schema,
  TaskStatusNotificationV2Schema,
  UpdateTaskResultV2Schema,
} from '@modelcontextprotocol/ext-tasks/core/v2';
import { defineAgent } from '../../src/agents/define-agent';
import { freePort } from '../../src/connection/dev-server';
import { cleanEnv, eventually, ROOT, startTs, type Started, nodeArgs } from '../helpers/processes';
import { answer, call, lastOf, startModel, toolResults } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';
import { testRegistry } from '../helpers/test-tools';

/**
 * `mcp --http` on MCP's 2026-07-28 revision, through the official SDK's v2 client pinned to it:
 * no `initialize`, no session; an approval reaches the client as an `input_required` round and
 * its answer decides it; runs as tasks of the tasks extension (checked against the extension's
 * own 2026-07-28 schemas); resources, prompts and completions as on 2025-11-25.
 */
const temporal = useTestTemporal();

const payer = defineAgent({
  name: 'modern_payer',
  description: 'Adds numbers and pays people',
  examples: ['add 2 and 3'],
  instructions: 'Work.',
  tools: ['add', 'transfer'],
});

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {
    elicitation: { form: {} },
    extensions: { 'io.modelcontextprotocol/tasks': {} },
  },
};

/** One JSON-RPC request as a 2026-07-28 client sends it (the tasks extension has no SDK client call). */
async function rpc(url: URL, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      // The revision's routing headers mirror the body.
      ...(typeof (params.name ?? params.taskId) === 'string'
        ? { 'mcp-name': String(params.name ?? params.taskId) }
        : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: ENVELOPE } }),
  });
  const text = await res.text();
  // A JSON body, or (for a call that reported progress) the last message of an SSE stream.
  const json = res.headers.get('content-type')?.includes('event-stream')
    ? JSON.parse(
        text
          .trim()
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .at(-1)!
          .slice(5),
      )
    : JSON.parse(text);
  if (json.error) throw new Error(`${json.error.code}: ${json.error.message}`);
  return json.result;
}

/** A `subscriptions/listen` stream, raw: the messages it carries, as they come, until closed. */
function listen(
  url: URL,
  notifications: Record<string, unknown>,
): { messages: Record<string, unknown>[]; close(): void } {
  const messages: Record<string, unknown>[] = [];
  const stop = new AbortController();
  void (async () => {
    const res = await fetch(url, {
      method: 'POST',
      signal: stop.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'subscriptions/listen',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'listen-1',
        method: 'subscriptions/listen',
        params: { notifications, _meta: ENVELOPE },
      }),
    });
    let buffered = '';
    for await (const chunk of res.body!) {
      buffered += Buffer.from(chunk).toString();
      for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
        const data = buffered
          .slice(0, end)
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5))
          .join('');
        buffered = buffered.slice(end + 2);
        if (data) messages.push(JSON.parse(data));
      }
    }
  })().catch(() => undefined);
  return { messages, close: () => stop.abort() };
}

it('serves a 2026-07-28 client statelessly: tools, approvals as input_required, tasks, resources and prompts', async () => {
  const m = await startModel((req) => {
    const user = lastOf(req, 'user');
    if (req.messages.at(-1)!.role === 'tool') return answer(`tool said: ${toolResults(req).at(-1)}`);
    const add = /^add (\d+) and (\d+)$/.exec(user);
    if (add) return call(['add', { a: Number(add[1]), b: Number(add[2]) }]);
    return call(['transfer', { to: 'bob', amount: Number(/\d+/.exec(user)?.[0] ?? 1) }]);
  });
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, {
    baseURL: m.baseURL,
    registry: testRegistry(),
    agents: [payer],
  });
  const port = await freePort();
  const url = new URL(`http://127.0.0.1:${port}/mcp`);
  const env = cleanEnv({ TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!, AGENT_TASK_QUEUE: taskQueue });
  let server: Started | undefined;
  const sent: string[] = [];
  const sessions: string[] = [];
  try {
    await worker.runUntil(async () => {
      server = await startTs(['mcp.ts', '--http', '--port', String(port)], env, /Press Ctrl\+C/, 120_000);
      const asked: Array<Record<string, unknown>> = [];
      let reply: Record<string, unknown> = { action: 'accept', content: { approve: true } };
      const client = new Client(
        { name: 'modern', version: '1' },
        { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      client.setRequestHandler('elicitation/create', async (request) => {
        asked.push(request.params as Record<string, unknown>);
        return reply as never;
      });
      // What goes over the wire: no initialize, no session id either way.
      const watched: typeof fetch = async (input, init) => {
        if (init?.body) sent.push(String(JSON.parse(String(init.body)).method));
        const res = await fetch(input, init);
        if (res.headers.get('mcp-session-id')) sessions.push(res.headers.get('mcp-session-id')!);
        return res;
      };
      await client.connect(new StreamableHTTPClientTransport(url, { fetch: watched }));
      expect(client.getProtocolEra()).toBe('modern');
      expect(client.getServerCapabilities()).toMatchObject({
        tools: {},
        prompts: {},
        resources: {},
        completions: {},
        extensions: { 'io.modelcontextprotocol/tasks': {} },
      });

      const { tools } = await client.listTools();
      expect(tools.map((x) => x.name)).toEqual(['modern_payer']);
      const httpProgress: string[] = [];
      const added = await client.callTool(
        { name: 'modern_payer', arguments: { message: 'add 2 and 3' } },
        { onprogress: (p) => httpProgress.push(String(p.message)) },
      );
      // Progress of the run, in order, before the result. (Once, over stdio, a first call's progress
      // did not come at all: how many arrive is not asserted until that is understood.)
      expect(httpProgress).toEqual(
        ['started: add 2 and 3', 'thinking (model call 1)', 'calling add', 'add done', 'thinking (model call 2)'].slice(
          0,
          httpProgress.length,
        ),
      );
      expect(added.content).toEqual([
        { type: 'text', text: 'tool said: 5' },
        expect.objectContaining({ text: expect.stringMatching(/^Temporal workflow: /) }),
      ]);
      const runId = (added.structuredContent as { workflowId: string }).workflowId;

      // An approval: asked as an input_required round, answered, and the call goes on to the result.
      const paid = await client.callTool({ name: 'modern_payer', arguments: { message: 'pay bob 3' } });
      expect((paid.content as Array<{ text: string }>)[0].text).toBe('tool said: sent 3 to bob');
      expect(asked[0]).toMatchObject({
        mode: 'form',
        message: expect.stringMatching(/^Approve transfer\(.*bob.*\)\?/),
        requestedSchema: { properties: { approve: { type: 'boolean' } }, required: ['approve'] },
      });
      reply = { action: 'decline' };
      const refused = await client.callTool({ name: 'modern_payer', arguments: { message: 'pay bob 4' } });
      expect((refused.content as Array<{ text: string }>)[0].text).toMatch(/rejected this call to transfer/);
      expect(asked).toHaveLength(2);

      // A conversation, in two calls.
      const conversationId = `modern-${Date.now()}`;
      await client.callTool({ name: 'modern_payer', arguments: { message: 'add 1 and 1', conversationId } });
      const second = await client.callTool({
        name: 'modern_payer',
        arguments: { message: 'add 4 and 4', conversationId },
      });
      expect(second.structuredContent).toMatchObject({ workflowId: conversationId, content: 'tool said: 8' });

      // Bad input: a clear answer, nothing started.
      const bad = await client.callTool({ name: 'modern_payer', arguments: { message: '' } });
      expect(bad.isError).toBe(true);
      await expect(client.callTool({ name: 'nobody', arguments: { message: 'hi' } })).rejects.toThrow(
        /Tool nobody not found/,
      );

      // Resources, prompts and completions.
      const read = await client.readResource({ uri: `durable-agents://runs/${runId}` });
      expect(JSON.parse((read.contents[0] as { text: string }).text).status).toMatchObject({ state: 'completed' });
      const prompt = await client.getPrompt({ name: 'modern_payer', arguments: { message: 'add 7 and 8' } });
      expect(prompt.messages[0].content).toMatchObject({ text: expect.stringContaining('add 7 and 8') });
      const examples = await client.complete({
        ref: { type: 'ref/prompt', name: 'modern_payer' },
        argument: { name: 'message', value: 'add' },
      });
      expect(examples.completion.values).toEqual(['add 2 and 3']);
      expect(sent).not.toContain('initialize');
      expect(sent).toContain('server/discover');
      expect(sessions).toEqual([]);
      await client.close();

      // Tasks: a run for a client that takes them is a task, polled, answered and cancelled.
      const created = await rpc(url, 'tools/call', { name: 'modern_payer', arguments: { message: 'pay bob 7' } });
      expect(CreateTaskResultV2Schema.parse(created)).toMatchObject({ resultType: 'task', status: 'working' });
      const taskId = String(created.taskId);
      expect((await t.client.workflow.getHandle(taskId).describe()).status.name).toBe('RUNNING');
      // Its status as it changes, on a listen stream (the caller's own tasks only: no other is followed).
      const stream = listen(url, { taskIds: [taskId, 'no-such-task'] });
      // Naming no task of the caller's (and nothing else): acknowledged with none, and ended at once.
      const empty = listen(url, { taskIds: ['no-such-task'] });
      await eventually(() => empty.messages.length === 2, 10_000);
      expect(empty.messages).toEqual([
        expect.objectContaining({ params: expect.objectContaining({ notifications: { taskIds: [] } }) }),
        expect.objectContaining({ id: 'listen-1', result: expect.objectContaining({ resultType: 'complete' }) }),
      ]);
      const told = () => stream.messages.filter((m) => m.method === 'notifications/tasks');
      // The client learns that the task waits for input from the stream, without polling.
      await eventually(() => told().some((m) => (m.params as { status: string }).status === 'input_required'), 20_000);
      let task = await rpc(url, 'tasks/get', { taskId });
      expect(task.status).toBe('input_required');
      GetTaskResultV2Schema.parse(task);
      const askedOnStream = told().filter((m) => (m.params as { status: string }).status === 'input_required');
      expect(askedOnStream.at(-1)!.params).toEqual(
        expect.objectContaining({ taskId, inputRequests: task.inputRequests }),
      );
      const [key, request] = Object.entries(task.inputRequests as Record<string, { method: string; params: never }>)[0];
      expect(request).toMatchObject({ method: 'elicitation/create', params: { mode: 'form' } });
      expect(
        UpdateTaskResultV2Schema.parse(
          await rpc(url, 'tasks/update', {
            taskId,
            inputResponses: { [key]: { action: 'accept', content: { approve: true } } },
          }),
        ),
      ).toMatchObject({ resultType: 'complete' });
      await eventually(async () => {
        task = await rpc(url, 'tasks/get', { taskId });
        return task.status === 'completed';
      });
      expect(GetTaskResultV2Schema.parse(task)).toMatchObject({
        status: 'completed',
        result: { content: [{ type: 'text', text: 'tool said: sent 7 to bob' }, expect.anything()] },
      });
      await eventually(() => told().some((m) => (m.params as { status: string }).status === 'completed'), 20_000);
      stream.close();
      expect(stream.messages[0]).toMatchObject({
        method: 'notifications/subscriptions/acknowledged',
        params: {
          notifications: { taskIds: [taskId] },
          _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' },
        },
      });
      const statuses = told().map((m) => TaskStatusNotificationV2Schema.parse(m).params.status);
      // What the task asked for, then its end (it may be told working in between, and before).
      expect(statuses.at(-1)).toBe('completed');
      expect(statuses.indexOf('input_required')).toBeGreaterThanOrEqual(0);
      expect(statuses.filter((s) => s === 'completed')).toHaveLength(1);
      expect(told().every((m) => (m.params as { taskId: string }).taskId === taskId)).toBe(true);

      const other = await rpc(url, 'tools/call', { name: 'modern_payer', arguments: { message: 'pay bob 9' } });
      CancelTaskResultV2Schema.parse(await rpc(url, 'tasks/cancel', { taskId: String(other.taskId) }));
      expect(GetTaskResultV2Schema.parse(await rpc(url, 'tasks/get', { taskId: String(other.taskId) }))).toMatchObject({
        status: 'cancelled',
      });
      await expect(rpc(url, 'tasks/get', { taskId: 'no-such-task' })).rejects.toThrow(/-32602: Task not found/);

      // Over stdio: the connection's first message picks the revision; this one opens 2026-07-28.
      const piped = new Client(
        { name: 'modern-stdio', version: '1' },
        { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      piped.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { approve: true } }));
      await piped.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: nodeArgs(['mcp.ts']),
          cwd: ROOT,
          env: env as Record<string, string>,
          stderr: 'pipe',
        }),
        { timeout: 60_000 },
      );
      try {
        expect(piped.getProtocolEra()).toBe('modern');
        expect((await piped.listTools()).tools.map((x) => x.name)).toEqual(['modern_payer']);
        const sum = await piped.callTool(
          { name: 'modern_payer', arguments: { message: 'add 20 and 22' } },
          { timeout: 60_000 },
        );
        expect((sum.content as Array<{ text: string }>)[0].text).toBe('tool said: 42');
        const over = await piped.callTool(
          { name: 'modern_payer', arguments: { message: 'pay bob 11' } },
          { timeout: 60_000 },
        );
        expect((over.content as Array<{ text: string }>)[0].text).toBe('tool said: sent 11 to bob');
      } finally {
        await piped.close();
      }
    });
  } finally {
    server?.kill('SIGKILL');
    await server?.exited;
  }
}, 240_000);

it('follows a conversation for a 2026-07-28 client that listens to its resource (subscriptions/listen): each change is told on the stream', async () => {
  const m = await startModel(() => answer('noted'));
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, {
    baseURL: m.baseURL,
    registry: testRegistry(),
    agents: [payer],
  });
  const port = await freePort();
  const url = new URL(`http://127.0.0.1:${port}/mcp`);
  const env = cleanEnv({ TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!, AGENT_TASK_QUEUE: taskQueue });
  let server: Started | undefined;
  try {
    await worker.runUntil(async () => {
      server = await startTs(['mcp.ts', '--http', '--port', String(port)], env, /Press Ctrl\+C/, 120_000);
      const client = new Client(
        { name: 'listener', version: '1' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      await client.connect(new StreamableHTTPClientTransport(url));
      expect(client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true });
      // Discovery names every revision the endpoint serves, the 2025 ones a client reaches with initialize too.
      expect(await rpc(url, 'server/discover', {})).toMatchObject({
        supportedVersions: expect.arrayContaining(['2026-07-28', '2025-11-25', '2025-06-18']),
      });
      const conversationId = `listen-${Date.now()}`;
      const uri = `durable-agents://conversations/${conversationId}`;
      const updated: string[] = [];
      client.setNotificationHandler('notifications/resources/updated', (n) => void updated.push(String(n.params.uri)));
      // A conversation that does not exist yet: followed once it starts.
      const subscription = await client.listen({ resourceSubscriptions: [uri] });
      try {
        await client.callTool({ name: 'modern_payer', arguments: { message: 'hello', conversationId } });
        expect(await eventually(() => updated.includes(uri), 20_000)).toBe(true);
        // Once it has started, what happened before is not told again; what comes next is.
        await new Promise((r) => setTimeout(r, 1500));
        const before = updated.length;
        await client.callTool({ name: 'modern_payer', arguments: { message: 'and again', conversationId } });
        expect(await eventually(() => updated.length > before, 20_000)).toBe(true);
        // Only what it listens to.
        expect(updated.every((u) => u === uri)).toBe(true);
      } finally {
        await subscription.close();
        await client.close();
      }
    });
  } finally {
    server?.kill('SIGTERM');
    await server?.exited;
    await m.close();
  }
}, 120_000);
