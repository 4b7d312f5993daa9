import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { defineAgent } from '../../src/agents/define-agent';
import { freePort } from '../../src/connection/dev-server';
import { cleanEnv, eventually, startTs, type Started } from '../helpers/processes';
import { call, lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';
import { testRegistry } from '../helpers/test-tools';

/**
 * MCP tasks, through the official SDK client: a task-augmented call is a run whose workflow id is
 * the task's id, answered from Temporal, so it outlives the MCP server process.
 */
const temporal = useTestTemporal();

const clerk = defineAgent({
  name: 'clerk',
  description: 'Writes reports and pays people',
  instructions: 'Work.',
  tools: ['transfer'],
});

it('answers tasks/get, tasks/list, tasks/result and tasks/cancel from Temporal, across a restart of the MCP server process', async () => {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const m = await startModel(async (req) => {
    const last = req.messages.at(-1)!;
    if (last.role === 'tool') return { content: `tool said: ${String(last.content)}` };
    if (lastOf(req, 'user') === 'pay bob') return call(['transfer', { to: 'bob', amount: 3 }]);
    await released;
    return { content: 'the report, done' };
  });
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, {
    baseURL: m.baseURL,
    registry: testRegistry(),
    agents: [clerk],
  });
  const port = await freePort();
  const url = new URL(`http://127.0.0.1:${port}/mcp`);
  const env = cleanEnv({ TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!, AGENT_TASK_QUEUE: taskQueue });
  const start = () => startTs(['mcp.ts', '--http', '--port', String(port)], env, /Press Ctrl\+C/, 120_000);
  const connect = async () => {
    const client = new McpClient({ name: 'tasks', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(url));
    return client;
  };
  let server: Started | undefined;
  try {
    await worker.runUntil(async () => {
      server = await start();
      let client = await connect();
      const { tools } = await client.listTools();
      expect(tools.find((x) => x.name === 'clerk')?.execution).toEqual({ taskSupport: 'optional' });

      const created = await client.request(
        {
          method: 'tools/call',
          params: { name: 'clerk', arguments: { message: 'write the report' }, task: { ttl: 60_000 } },
        },
        CreateTaskResultSchema,
      );
      const taskId = created.task.taskId;
      expect(taskId).toMatch(/^mcp-task-/);
      expect(created.task.status).toBe('working');
      // The task is the run: the workflow id names it.
      expect((await t.client.workflow.getHandle(taskId).describe()).status.name).toBe('RUNNING');
      expect((await client.experimental.tasks.getTask(taskId)).status).toBe('working');
      expect((await client.experimental.tasks.listTasks()).tasks.map((x) => x.taskId)).toContain(taskId);

      // The MCP server process goes away and comes back; the client starts a new session.
      server.kill('SIGKILL');
      await server.exited;
      await client.close().catch(() => undefined);
      server = await start();
      client = await connect();
      expect((await client.experimental.tasks.getTask(taskId)).status).toBe('working');
      release();
      const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      expect(result.content[0]).toMatchObject({ type: 'text', text: 'the report, done' });
      expect(result.structuredContent).toMatchObject({ workflowId: taskId, status: 'completed' });
      expect((await client.experimental.tasks.getTask(taskId)).status).toBe('completed');

      // A task waiting for a person is input_required; cancelling it cancels the run.
      const paying = await client.request(
        { method: 'tools/call', params: { name: 'clerk', arguments: { message: 'pay bob' }, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      );
      const payId = paying.task.taskId;
      let status = await client.experimental.tasks.getTask(payId);
      expect(
        await eventually(async () => {
          status = await client.experimental.tasks.getTask(payId);
          return status.status === 'input_required';
        }),
      ).toBe(true);
      expect(status.statusMessage).toMatch(/waiting for approval: transfer\(.*bob.*\)/);
      // The answer is the task cancelled: the run has ended before tasks/cancel answers.
      expect(await client.experimental.tasks.cancelTask(payId)).toMatchObject({ taskId: payId, status: 'cancelled' });
      expect((await client.experimental.tasks.getTask(payId)).status).toBe('cancelled');

      // A task with a conversation is refused with the reason.
      await expect(
        client.request(
          {
            method: 'tools/call',
            params: { name: 'clerk', arguments: { message: 'hi', conversationId: 'c-1' }, task: { ttl: 60_000 } },
          },
          CreateTaskResultSchema,
        ),
      ).rejects.toThrow(/A task is a run/);
      await client.close();
    });
  } finally {
    release();
    server?.kill('SIGKILL');
    await server?.exited;
  }
}, 240_000);
