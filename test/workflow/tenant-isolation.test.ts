import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { defineAgent } from '../../src/agents/define-agent';
import { createMcpHttpServer } from '../../src/mcp-server/mcp-http-server';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { startHttpApi } from '../helpers/http-api';
import { eventually } from '../helpers/processes';
import { answer, call, lastOf, startModel, toolResults } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/**
 * Tenants cannot reach each other's work through any door: every route of the HTTP API, the AI
 * SDK's chat routes, AG-UI, A2A, MCP over HTTP, schedules, memory and deployments answer a
 * tenant's caller that names another tenant's id exactly as they answer an id no workflow has
 * (each tenant names ids in an id space of its own), lists cannot be widened by a hostile query,
 * and two tenants starting the same new id at once get a conversation each.
 */
const temporal = useTestTemporal();

const ADMIN = 'admin-token-0123456789';
const ACME = 'acme-token-0123456789';
const GLOBEX = 'globex-token-0123456789';
/**
 * Each test's tenants have names of their own (a tenant's ledger runs on the task queue of its
 * first model call: a later test's worker would wait for a worker that has gone).
 */
function tenants(): { A: string; G: string; access: { tokens: string[]; tenants: Record<string, string> } } {
  const suffix = randomUUID().slice(0, 6);
  const A = `acme-${suffix}`;
  const G = `globex-${suffix}`;
  return { A, G, access: { tokens: [ADMIN, ACME, GLOBEX], tenants: { [ACME]: A, [GLOBEX]: G } } };
}

const helper = defineAgent({ name: 'helper', description: 'Answers', instructions: 'Help.', tools: [] });

function model(req: ChatRequest) {
  const said = lastOf(req, 'user');
  const keep = /^remember: (.+)$/.exec(said);
  if (keep && !toolResults(req).length) return call(['remember', { text: keep[1] }]);
  return answer(`you said: ${said}`);
}

it('answers another tenant’s id on every door exactly as an id no workflow has', async () => {
  const { client } = temporal();
  const m = await startModel(model);
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: m.baseURL,
    agents: [helper],
    memory: { dir: mkdtempSync(join(tmpdir(), 'tenant-memory-')) },
  });
  await worker.runUntil(async () => {
    const { A, G, access } = tenants();
    const api = await startHttpApi({ client, taskQueue, access, deployments: 'manage' });
    const mcpServer = createMcpHttpServer({ client, taskQueue, agents: [] }, access);
    mcpServer.listen(0, '127.0.0.1');
    await once(mcpServer, 'listening');
    const mcpUrl = new URL(`http://127.0.0.1:${(mcpServer.address() as AddressInfo).port}/mcp`);
    const send = (token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      fetch(`${api.base}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(30_000),
      });
    try {
      // Globex's work, under ids acme will name.
      const conv = `conv-${randomUUID().slice(0, 8)}`;
      const chat = `chat-${randomUUID().slice(0, 8)}`;
      const thread = `thread-${randomUUID().slice(0, 8)}`;
      const sched = `sched-${randomUUID().slice(0, 8)}`;
      expect((await send(GLOBEX, 'POST', `/conversations/${conv}/messages`, { message: 'globex secret' })).status).toBe(
        200,
      );
      expect((await send(GLOBEX, 'POST', '/api/chat', chatBody(chat, 'globex chat'))).status).toBe(200);
      const agUi = await send(GLOBEX, 'POST', '/ag-ui/helper', agUiBody(thread, 'globex thread'));
      expect(agUi.status).toBe(200);
      await agUi.text();
      const run = await send(
        GLOBEX,
        'POST',
        '/runs',
        { message: 'globex run', agent: 'helper' },
        { 'idempotency-key': 'k-1' },
      );
      const runId = ((await run.json()) as { workflowId: string }).workflowId;
      expect(runId.startsWith(`${G}:`)).toBe(true);
      expect(
        (
          await send(GLOBEX, 'POST', '/schedules', {
            scheduleId: sched,
            every: '1h',
            message: 'tick',
            conversationId: conv,
            paused: true,
          })
        ).status,
      ).toBe(201);
      // A fact globex's agent keeps about its user.
      const remembered = await send(GLOBEX, 'POST', `/conversations/mem-${conv}/messages`, {
        message: 'remember: Globex secret plan',
        user: 'dana',
        tools: ['remember'],
      });
      expect(remembered.status).toBe(200);
      const facts = await (await send(GLOBEX, 'GET', '/memory?user=dana')).json();
      const factId: string = facts.facts[0].id;
      expect(factId).toMatch(/^f_/);
      const rpc = async (token: string, method: string, params: unknown) =>
        (
          await fetch(`${api.base}/a2a/helper/`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'a2a-version': '1.0' },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
          })
        ).json();
      const task = await rpc(GLOBEX, 'SendMessage', {
        message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'globex task' }] },
        configuration: { returnImmediately: false },
      });
      const taskId: string = task.result?.task?.id;
      const contextId: string = task.result?.task?.contextId;
      expect(taskId).toEqual(expect.any(String));

      // Each door, asked by acme for globex's id (as globex named it, and as Temporal knows it)
      // and for an id nobody has: the three answers must be one.
      const doors: [string, string, (id: string) => unknown][] = [
        ['GET', '/runs/:id', () => undefined],
        ['GET', '/conversations/:id', () => undefined],
        ['GET', '/conversations/:id/branches', () => undefined],
        ['POST', '/conversations/:id/branch', () => ({ branch: 'main' })],
        ['POST', '/conversations/:id/fork', () => ({ atMessage: 0 })],
        ['POST', '/conversations/:id/fork', () => ({ atMessage: 0, into: 'forked', branch: 'nope' })],
        ['POST', '/conversations/:id/approvals/call-1', () => ({ approve: true })],
        ['POST', '/runs/:id/approvals/call-1', () => ({ approve: true })],
        ['POST', '/conversations/:id/cancel', () => ({})],
        ['POST', '/conversations/:id/events/paid', () => ({ ok: true })],
        ['GET', '/runs/:id/events', () => undefined],
        ['GET', '/conversations/:id/events', () => undefined],
        ['GET', '/api/chat/:id/messages', () => undefined],
        ['GET', '/api/chat/:id/branches', () => undefined],
        ['POST', '/api/chat/:id/branch', () => ({ branch: 'main' })],
        ['GET', '/api/chat/:id/stream', () => undefined],
        ['GET', '/api/chat/:id/turns', () => undefined],
        ['POST', '/api/chat/:id/stop', () => ({})],
        ['GET', '/schedules/:id', () => undefined],
        ['POST', '/schedules/:id/pause', () => ({})],
        ['POST', '/schedules/:id/trigger', () => ({})],
        ['DELETE', '/schedules/:id', () => undefined],
        ['GET', '/memory/:id', () => undefined],
      ];
      const idsOf = (path: string) =>
        path.startsWith('/memory')
          ? [factId]
          : path.startsWith('/schedules')
            ? [sched, `${G}:${sched}`]
            : path.startsWith('/runs')
              ? [runId.slice(G.length + 1), runId]
              : path.startsWith('/api/chat')
                ? [chat, `${G}:${chat}`, thread]
                : [conv, `${G}:${conv}`, contextId];
      for (const [method, path, body] of doors) {
        const missing = path.startsWith('/memory') ? 'f_00000000000000000000' : `none-${randomUUID().slice(0, 8)}`;
        const asked = async (id: string) => {
          const res = await send(ACME, method, path.replace(':id', encodeURIComponent(id)), body(id));
          const text = res.headers.get('content-type')?.includes('text/event-stream') ? '' : await res.text();
          await res.body?.cancel().catch(() => undefined);
          return `${res.status} ${text.split(id).join('<id>').split(`${A}:`).join('')}`;
        };
        const expected = await asked(missing);
        for (const id of idsOf(path)) expect([method, path, id, await asked(id)]).toEqual([method, path, id, expected]);
        // None of it a server fault.
        expect([method, path, expected]).toEqual([method, path, expect.not.stringMatching(/^5/)]);
      }

      // Acme deleting "dana"'s memory deletes acme's dana's, not globex's; acme lists none of it.
      expect((await (await send(ACME, 'GET', '/memory?user=dana')).json()).facts).toEqual([]);
      expect((await send(ACME, 'DELETE', '/memory?user=dana')).status).toBe(200);
      expect((await (await send(GLOBEX, 'GET', '/memory?user=dana')).json()).facts).toHaveLength(1);

      // Globex's work is untouched: one turn, its own message, its schedule still there.
      const mine = await (await send(GLOBEX, 'GET', `/conversations/${conv}`)).json();
      expect(mine).toMatchObject({ turns: 1, tenant: G });
      expect(JSON.stringify(mine.messages)).not.toMatch(/acme|tick/);
      expect((await send(GLOBEX, 'GET', `/schedules/${sched}`)).status).toBe(200);

      // Starting work under globex's ids starts acme's own: a message, a chat, a thread, a context.
      const sent = await send(ACME, 'POST', `/conversations/${conv}/messages`, { message: 'acme hello' });
      expect(await sent.json()).toMatchObject({ content: 'you said: acme hello' });
      expect(await (await send(ACME, 'GET', `/conversations/${conv}`)).json()).toMatchObject({
        tenant: A,
        turns: 1,
      });
      const acmeChat = await send(ACME, 'POST', '/api/chat', chatBody(chat, 'acme chat'));
      expect(acmeChat.status).toBe(200);
      expect(deltas(await acmeChat.text())).toBe('you said: acme chat');
      const acmeThread = await send(ACME, 'POST', '/ag-ui/helper', agUiBody(thread, 'acme thread'));
      expect(deltas(await acmeThread.text())).toBe('you said: acme thread');
      const intrusion = await rpc(ACME, 'SendMessage', {
        message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'acme task' }], contextId },
        configuration: { returnImmediately: false },
      });
      expect(intrusion.result?.task).toMatchObject({ contextId, status: { state: 'TASK_STATE_COMPLETED' } });
      // A2A: globex's task is no task to acme, as a task nobody has.
      const unknown = randomUUID();
      const foreign = JSON.stringify((await rpc(ACME, 'GetTask', { id: taskId })).error)
        .split(taskId)
        .join('<id>');
      const none = JSON.stringify((await rpc(ACME, 'GetTask', { id: unknown })).error)
        .split(unknown)
        .join('<id>');
      expect(foreign).toBe(none);
      // The same Idempotency-Key names acme's own run, with acme's answer.
      const acmeRun = await send(
        ACME,
        'POST',
        '/runs',
        { message: 'acme run', agent: 'helper' },
        { 'idempotency-key': 'k-1' },
      );
      expect(await acmeRun.json()).toMatchObject({
        content: 'you said: acme run',
        workflowId: expect.stringMatching(new RegExp(`^${A}:`)),
      });
      // A schedule of acme's naming globex's conversation writes to acme's conversation of that name.
      expect(
        (
          await send(ACME, 'POST', '/schedules', {
            scheduleId: sched,
            every: '1h',
            message: 'tick',
            conversationId: conv,
            paused: true,
          })
        ).status,
      ).toBe(201);
      expect((await send(ACME, 'POST', `/schedules/${sched}/trigger`, {})).status).toBe(202);
      await eventually(
        async () => (await (await send(ACME, 'GET', `/conversations/${conv}`)).json()).turns === 2,
        30_000,
      );
      expect(await (await send(GLOBEX, 'GET', `/conversations/${conv}`)).json()).toMatchObject({ turns: 1 });
      for (const who of [ACME, GLOBEX]) await send(who, 'DELETE', `/schedules/${sched}`);

      // MCP over HTTP: globex's conversation and task are no resource or task to acme's session.
      const mcp = new McpClient({ name: 'tenant-walk', version: '1.0.0' });
      await mcp.connect(
        new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers: { authorization: `Bearer ${ACME}` } } }),
      );
      try {
        const read = async (id: string) =>
          (await mcp.readResource({ uri: `durable-agents://conversations/${id}` }).catch((e: Error) => e)) as Error;
        const none = `none-${randomUUID().slice(0, 8)}`;
        const words = (e: Error, id: string) => e.message.split(id).join('<id>').split(`${A}:`).join('');
        expect(words(await read(`${G}:${conv}`), `${G}:${conv}`)).toBe(words(await read(none), none));
        const getTask = async (id: string) =>
          (await mcp
            .request({ method: 'tasks/get', params: { taskId: id } }, TaskSchemaAny)
            .catch((e: Error) => e)) as Error;
        expect(words(await getTask(runId), runId)).toBe(words(await getTask(none), none));
      } finally {
        await mcp.close();
      }

      // Deployments are the fleet's: 403 to a tenant, whatever the name.
      expect((await send(ACME, 'GET', '/deployments/shop')).status).toBe(403);
      // Another tenant's usage reads as a tenant with none.
      expect((await send(ACME, 'GET', `/tenants/${G}`)).status).toBe(
        (await send(ACME, 'GET', '/tenants/nobody')).status,
      );
    } finally {
      api.close();
      mcpServer.close();
    }
  });
});

it('keeps lists to the tenant whatever the query, and gives two tenants starting one new id a conversation each', async () => {
  const { client } = temporal();
  const m = await startModel(model);
  const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: m.baseURL, agents: [helper] });
  await worker.runUntil(async () => {
    const { A, G, access } = tenants();
    const api = await startHttpApi({ client, taskQueue, access });
    const send = (token: string, method: string, path: string, body?: unknown) =>
      fetch(`${api.base}${path}`, {
        signal: AbortSignal.timeout(20_000),
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    try {
      // Both tenants send the first message to the same new ids at once.
      const ids = Array.from({ length: 6 }, () => `race-${randomUUID().slice(0, 8)}`);
      const answers = await Promise.all(
        ids.flatMap((id) =>
          [ACME, GLOBEX].map(async (token, i) => {
            const path = i === 0 ? `/conversations/${id}/messages` : '/api/chat';
            const body = i === 0 ? { message: `acme ${id}` } : chatBody(id, `globex ${id}`);
            const res = await send(token, 'POST', path, body);
            return [res.status, await res.text()] as const;
          }),
        ),
      );
      for (const [status] of answers) expect(status).toBe(200);
      for (const id of ids) {
        const a = await (await send(ACME, 'GET', `/conversations/${id}`)).json();
        const g = await (await send(GLOBEX, 'GET', `/conversations/${id}`)).json();
        expect([a.tenant, a.turns, JSON.stringify(a.messages).includes('globex')]).toEqual([A, 1, false]);
        expect([g.tenant, g.turns, JSON.stringify(g.messages).includes('acme')]).toEqual([G, 1, false]);
      }

      // Hostile queries: refused, or kept inside the tenant's list.
      const list = async (token: string, query: string) => {
        const res = await send(token, 'GET', `/conversations?limit=100&query=${encodeURIComponent(query)}`);
        return [res.status, (await res.json()) as { runs?: { tenant?: string }[]; error?: string }] as const;
      };
      const [refused, why] = await list(
        ACME,
        `WorkflowId = 'a\\' ' ) OR ( AgentTenant = '${G}' ) OR ( WorkflowId = 'b\\' '`,
      );
      expect([refused, why.error]).toEqual([400, expect.stringMatching(/not a list filter/)]);
      await eventually(async () => (await list(ACME, `AgentTenant = '${A}'`))[1].runs!.length >= ids.length);
      // [query, how many of acme's it lists at least]
      for (const [q, least] of [
        [`WorkflowId = 'x' OR AgentTenant = '${G}'`, 0],
        ["ExecutionStatus = 'Running' OR ExecutionStatus != 'Running'", ids.length],
        [`WorkflowId = "a' ) OR ( AgentTenant = '${G}' ) OR ( x = 'b"`, 0],
        ["WorkflowId != 'it\\'s' AND WorkflowId != 'it''s'", ids.length],
      ] as const) {
        const [status, body] = await list(ACME, q);
        expect([q, status]).toEqual([q, 200]);
        expect(body.runs!.filter((r) => r.tenant !== A)).toEqual([]);
        expect(body.runs!.length).toBeGreaterThanOrEqual(least);
      }
    } finally {
      api.close();
    }
  });
});

/** The text of a UI message stream's or AG-UI stream's deltas. */
function deltas(sse: string): string {
  return sse
    .split('\n')
    .filter((l) => l.startsWith('data: {'))
    .map((l) => JSON.parse(l.slice(6)) as { type: string; delta?: string })
    .filter((e) => e.type === 'text-delta' || e.type === 'TEXT_MESSAGE_CONTENT')
    .map((e) => e.delta)
    .join('');
}

/** A useChat POST body. */
function chatBody(id: string, text: string) {
  return {
    id,
    trigger: 'submit-message',
    messages: [{ id: randomUUID(), role: 'user', parts: [{ type: 'text', text }] }],
  };
}

/** An AG-UI RunAgentInput. */
function agUiBody(threadId: string, text: string) {
  return {
    threadId,
    runId: randomUUID(),
    state: {},
    messages: [{ id: randomUUID(), role: 'user', content: text }],
    tools: [],
    context: [],
    forwardedProps: {},
  };
}

/** Any result of `tasks/get` (the test compares failures). */
const TaskSchemaAny = { parse: (v: unknown) => v } as never;
