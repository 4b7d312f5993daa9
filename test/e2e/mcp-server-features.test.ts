import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type ElicitRequest,
  type ElicitResult,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { decideApproval, readStatus } from '../../src/client/workflow-controls';
import { listAgentRuns } from '../../src/client/list-runs';
import { defineAgent } from '../../src/agents/define-agent';
import { listAgents } from '../../src/client/list-agents';
import { createMcpHttpServer } from '../../src/mcp-server/mcp-http-server';
import { answer, call, lastOf, startModel, toolResults } from '../helpers/scripted-model';
import { eventually } from '../helpers/processes';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';
import { testRegistry } from '../helpers/test-tools';

/**
 * `mcp --http` beyond tools, through the official SDK client: log messages at the client's level,
 * runs and conversations as resources (read, listed, subscribed to), each agent's prompt, and
 * completions of prompt arguments and resource ids; sessions a restarted server does not know.
 */
const temporal = useTestTemporal();

const calculator = defineAgent({
  name: 'calculator',
  description: 'Adds numbers',
  examples: ['add 2 and 3', 'add 40 and 2'],
  instructions: 'Use add.',
  tools: ['add'],
});

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

it('logs progress at the client level, serves runs and conversations as resources with updates, prompts and completions', async () => {
  const m = await startModel((req) => {
    const add = /^add (\d+) and (\d+)$/.exec(lastOf(req, 'user'));
    if (req.messages.at(-1)!.role === 'tool') return answer(`the sum is ${toolResults(req)[0]}`);
    if (add) return call(['add', { a: Number(add[1]), b: Number(add[2]) }]);
    return answer('hello');
  });
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, {
    baseURL: m.baseURL,
    registry: testRegistry(),
    agents: [calculator],
  });
  await worker.runUntil(async () => {
    const agents = await listAgents(t.client, { taskQueue });
    let server = createMcpHttpServer({ client: t.client, taskQueue, agents }, {});
    const url = await listen(server);
    const client = new McpClient({ name: 'features', version: '1' });
    const logs: LoggingMessageNotification['params'][] = [];
    const updated: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      expect(client.getServerCapabilities()).toMatchObject({
        logging: {},
        completions: {},
        prompts: {},
        resources: { subscribe: true },
      });

      // Logging: the run's progress at info, none once the client asks for errors only.
      await client.setLoggingLevel('info');
      const first = await client.callTool({ name: 'calculator', arguments: { message: 'add 2 and 3' } });
      const workflowId = (first.structuredContent as { workflowId: string }).workflowId;
      expect(logs.map((l) => [l.level, l.logger, (l.data as { message: string }).message])).toEqual(
        expect.arrayContaining([
          ['info', 'calculator', 'started: add 2 and 3'],
          ['info', 'calculator', 'calling add'],
        ]),
      );
      expect(logs.every((l) => (l.data as { workflowId: string }).workflowId === workflowId)).toBe(true);
      await client.setLoggingLevel('error');
      const before = logs.length;
      await client.callTool({ name: 'calculator', arguments: { message: 'add 1 and 1' } });
      expect(logs.length).toBe(before);

      // Resources: the run, read from Temporal; listed; the two templates.
      const uri = `durable-agents://runs/${workflowId}`;
      const read = await client.readResource({ uri });
      const body = JSON.parse((read.contents[0] as { text: string }).text);
      expect(body.status).toMatchObject({ kind: 'run', workflowId, state: 'completed' });
      expect(body.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'the sum is 5' });
      expect((await client.listResources()).resources.map((r) => r.uri)).toContain(uri);
      expect((await client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate).sort()).toEqual([
        'durable-agents://conversations/{id}',
        'durable-agents://runs/{id}',
      ]);
      await expect(client.readResource({ uri: `durable-agents://conversations/${workflowId}` })).rejects.toThrow(
        /is a run: read durable-agents:\/\/runs\//,
      );

      // A conversation, subscribed to: a message to it is an update.
      const conversationId = `mcp-features-${Date.now()}`;
      await client.callTool({ name: 'calculator', arguments: { message: 'hi', conversationId } });
      const conversation = `durable-agents://conversations/${conversationId}`;
      await client.subscribeResource({ uri: conversation });
      await client.callTool({ name: 'calculator', arguments: { message: 'add 4 and 4', conversationId } });
      expect(await eventually(() => updated.includes(conversation), 10_000)).toBe(true);
      await client.unsubscribeResource({ uri: conversation });

      // The agent's prompt, with its examples; completions from them, and of conversation ids.
      const { prompts } = await client.listPrompts();
      expect(prompts).toEqual([
        expect.objectContaining({
          name: 'calculator',
          description: expect.stringContaining('"add 2 and 3"'),
          arguments: [expect.objectContaining({ name: 'message', required: false })],
        }),
      ]);
      const prompt = await client.getPrompt({ name: 'calculator', arguments: { message: 'add 7 and 8' } });
      expect(prompt.messages[0].content).toMatchObject({ text: expect.stringContaining('add 7 and 8') });
      const examples = await client.complete({
        ref: { type: 'ref/prompt', name: 'calculator' },
        argument: { name: 'message', value: 'add 4' },
      });
      expect(examples.completion.values).toEqual(['add 40 and 2']);
      const ids = await client.complete({
        ref: { type: 'ref/resource', uri: 'durable-agents://conversations/{id}' },
        argument: { name: 'id', value: 'mcp-features-' },
      });
      expect(ids.completion.values).toContain(conversationId);
      // The runs template completes finished runs too (their transcripts stay readable).
      const runIds = await client.complete({
        ref: { type: 'ref/resource', uri: 'durable-agents://runs/{id}' },
        argument: { name: 'id', value: workflowId.slice(0, 4) },
      });
      expect(runIds.completion.values).toContain(workflowId);
      const nothing = await client.complete({
        ref: { type: 'ref/prompt', name: 'nobody' },
        argument: { name: 'message', value: '' },
      });
      expect(nothing.completion.values).toEqual([]);

      // A restarted server does not know the session: the client is told (404) and starts another.
      server.closeAllConnections();
      server.close();
      server = createMcpHttpServer({ client: t.client, taskQueue, agents }, {});
      server.listen(Number(new URL(url).port), '127.0.0.1');
      await once(server, 'listening');
      // (The first request may meet the old server's closed keep-alive socket.)
      const refused = await client.listTools().catch((e: Error) => e);
      const told = /fetch failed/.test(String(refused)) ? await client.listTools().catch((e: Error) => e) : refused;
      expect(String(told)).toMatch(/404|session/i);
      const again = new McpClient({ name: 'features', version: '1' });
      await again.connect(new StreamableHTTPClientTransport(new URL(url)));
      const read2 = await again.readResource({ uri });
      expect(JSON.parse((read2.contents[0] as { text: string }).text).status.state).toBe('completed');
      await again.close();
    } finally {
      await client.close().catch(() => undefined);
      server.closeAllConnections();
      server.close();
    }
  });
}, 120_000);

it("asks an elicitation-capable client to decide the agent's approvals, and leaves other clients' approvals to other channels", async () => {
  const m = await startModel((req) => {
    const last = req.messages.at(-1)!;
    if (last.role === 'tool') return answer(`tool said: ${String(last.content)}`);
    return call(['transfer', { to: 'bob', amount: Number(/\d+/.exec(lastOf(req, 'user'))?.[0] ?? 1) }]);
  });
  const t = temporal();
  const payer = defineAgent({ name: 'mcp_elicit_payer', instructions: 'Pay.', tools: ['transfer'] });
  const { worker, taskQueue } = await createTestWorker(t, {
    baseURL: m.baseURL,
    registry: testRegistry(),
    agents: [payer],
  });
  await worker.runUntil(async () => {
    const agents = await listAgents(t.client, { taskQueue });
    const server = createMcpHttpServer({ client: t.client, taskQueue, agents }, {});
    const url = new URL(await listen(server));
    const asked: ElicitRequest['params'][] = [];
    let reply: ElicitResult = { action: 'accept', content: { approve: true } };
    const eliciting = new McpClient({ name: 'eliciting', version: '1' }, { capabilities: { elicitation: {} } });
    eliciting.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return reply;
    });
    await eliciting.connect(new StreamableHTTPClientTransport(url));
    const plain = new McpClient({ name: 'plain', version: '1' });
    await plain.connect(new StreamableHTTPClientTransport(url));
    try {
      const paid = await eliciting.callTool({ name: 'mcp_elicit_payer', arguments: { message: 'pay bob 3' } });
      expect((paid.content as Array<{ text: string }>)[0].text).toBe('tool said: sent 3 to bob');
      expect(asked[0]).toMatchObject({
        message: expect.stringMatching(/^Approve transfer\(.*bob.*\)\?/),
        requestedSchema: { properties: { approve: { type: 'boolean' } }, required: ['approve'] },
      });

      reply = { action: 'decline' };
      const refused = await eliciting.callTool({ name: 'mcp_elicit_payer', arguments: { message: 'pay bob 4' } });
      expect((refused.content as Array<{ text: string }>)[0].text).toMatch(/rejected this call to transfer/);

      // A client without elicitation: the approval waits for another channel (here, the client library).
      const calling = plain.callTool({ name: 'mcp_elicit_payer', arguments: { message: 'pay bob 5' } });
      const { runs } = await (async () => {
        for (;;) {
          const r = await listAgentRuns(t.client, { agent: 'mcp_elicit_payer', status: 'awaiting_approval', limit: 5 });
          const waiting = r.runs[0];
          if (waiting) return { runs: [waiting] };
          await new Promise((res) => setTimeout(res, 200));
        }
      })();
      const status = await readStatus(t.client, runs[0].workflowId);
      await decideApproval(t.client, runs[0].workflowId, { callId: status.pendingApprovals[0].callId, approve: true });
      expect(((await calling).content as Array<{ text: string }>)[0].text).toBe('tool said: sent 5 to bob');
      expect(asked).toHaveLength(2);
    } finally {
      await eliciting.close();
      await plain.close();
      server.closeAllConnections();
      server.close();
    }
  });
}, 120_000);
