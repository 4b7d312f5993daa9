import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from '@temporalio/worker';
import { defineAgent } from '../../src/agents/define-agent';
import type { McpServerConfig } from '../../src/tools/mcp-client/mcp-config';
import { AgentsPlugin } from '../../src/worker/agents-plugin';
import { decideApproval, readStatus } from '../../src/client/workflow-controls';
import { freePort } from '../../src/connection/dev-server';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { eventually, ROOT, nodeArgs } from '../helpers/processes';
import { answer, call, startModel, toolResults } from '../helpers/scripted-model';
import { createTestWorker, modelAt, useTestTemporal } from '../helpers/temporal';

/**
 * Tools from real MCP servers (test/helpers/mcp-test-server.ts) over stdio and streamable HTTP:
 * listing, calls, errors, a slow call cancelled by the time limit, a server dying mid-call, a
 * worker restart, and replay without the servers.
 */
const temporal = useTestTemporal();
const SERVER = join(ROOT, 'test', 'helpers', 'mcp-test-server.ts');

function scratch(): { dir: string; log: string; read: () => string } {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-test-'));
  const log = join(dir, 'server.log');
  return { dir, log, read: () => (existsSync(log) ? readFileSync(log, 'utf8') : '') };
}

function stdioServer(env: Record<string, string>): McpServerConfig {
  return { command: process.execPath, args: nodeArgs([SERVER, '--stdio']), cwd: ROOT, env };
}

/** An HTTP MCP server process, started again whenever it exits (as a supervisor would), until stopped. */
async function httpServer(env: Record<string, string>): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  let stopped = false;
  const start = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const c = spawn(process.execPath, nodeArgs([SERVER, '--http', String(port)]), {
        cwd: ROOT,
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      child = c;
      c.stdout!.on('data', (d: Buffer) => d.toString().includes('listening') && resolve());
      c.once('exit', (code) => {
        reject(new Error(`the MCP test server exited with ${code}`));
        if (!stopped) void start();
      });
    });
  await start();
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stop: async () => {
      stopped = true;
      if (child && child.exitCode === null) {
        const exited = new Promise((r) => child!.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

/** A model that calls the tool named in the user message (`call <tool> <json args>`), then answers with its results. */
function toolCallingModel() {
  return startModel((req) => {
    const user = String(req.messages.find((m) => m.role === 'user')?.content ?? '');
    const m = /^call (\S+) (.*)$/.exec(user);
    if (m && !req.messages.some((x) => x.role === 'tool')) return call([m[1], JSON.parse(m[2])]);
    return answer(`results: ${toolResults(req).join(' | ')}`);
  });
}

describe('MCP tools over stdio', () => {
  it('are offered as <server>__<tool> to agents that opt in, and their calls, errors and content come back to the LLM', async () => {
    const s = scratch();
    const model = await toolCallingModel();
    const agent = defineAgent({ name: 'mcp-user', instructions: 'Use the tools.', tools: [], mcpServers: ['test'] });
    const other = defineAgent({ name: 'no-mcp', instructions: 'No tools.', tools: [] });
    const t = temporal();
    const { worker, taskQueue } = await createTestWorker(t, {
      baseURL: model.baseURL,
      agents: [agent, other],
      mcpServers: { test: stdioServer({ MCP_LOG: s.log }) },
    });
    await worker.runUntil(async () => {
      const run = (message: string, agentName = 'mcp-user') =>
        startAgentRun(t.client, { agent: agentName, message }, { taskQueue }).then(runOutcome);
      const echoed = await run('call test__echo {"text":"hi"}');
      expect(echoed).toMatchObject({ status: 'completed', content: 'results: echo: hi' });
      expect(echoed.toolExecutions[0]).toMatchObject({
        name: 'test__echo',
        arguments: { text: 'hi' },
        result: 'echo: hi',
        error: false,
      });
      const offered = model.requests[0].tools!.map((x) => x.function.name);
      expect(offered.sort()).toEqual([
        'test__add',
        'test__big',
        'test__echo',
        'test__fail',
        'test__files_read',
        'test__flaky',
        'test__picture',
        'test__slow',
      ]);
      expect(model.requests[0].tools!.find((x) => x.function.name === 'test__add')!.function).toMatchObject({
        description: 'Adds two numbers',
        parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
      });

      const failed = await run('call test__fail {"reason":"no disk"}');
      expect(failed.toolExecutions[0]).toMatchObject({ result: 'Error: cannot do that: no disk', error: true });
      const badArgs = await run('call test__add {"a":"one"}');
      expect(badArgs.toolExecutions[0]).toMatchObject({
        error: true,
        result: expect.stringMatching(/^Error: invalid arguments for test__add: /),
      });
      expect(badArgs.toolExecutions[0].result).toMatch(/a: expected number/);
      expect(badArgs.toolExecutions[0].result).toMatch(/b: required/);
      const picture = await run('call test__picture {}');
      expect(picture.toolExecutions[0].result).toBe(
        'here it is\n[image: image/png, 70 bytes]\n[resource file:///notes.txt (text/plain)]\na note',
      );
      // The image itself went to the model (after the tool's result: Chat Completions tool messages hold text only).
      expect(picture.toolExecutions[0].images).toEqual([
        expect.objectContaining({ mediaType: 'image/png', bytes: 70 }),
      ]);
      const seen = model.requests.at(-1)!.messages.at(-1)!;
      expect(seen).toMatchObject({ role: 'user', images: [expect.stringMatching(/^data:image\/png;base64,iVBOR/)] });
      const dotted = await run('call test__files_read {"path":"/etc/motd"}');
      expect(dotted.toolExecutions[0].result).toBe('contents of /etc/motd');

      const without = await run('call test__echo {"text":"hi"}', 'no-mcp');
      expect(without.toolExecutions[0]).toMatchObject({
        error: true,
        result: 'Error: there is no tool named "test__echo". Available tools: none.',
      });
    });
    // One server process served every call: the connection is pooled.
    expect(s.read().match(/stdio server \d+ started/g)).toHaveLength(1);
  });

  it('a slow call is cancelled by the run time limit, and the server hears of it', async () => {
    const s = scratch();
    const model = await toolCallingModel();
    const t = temporal();
    const { worker, taskQueue } = await createTestWorker(t, {
      baseURL: model.baseURL,
      registry: undefined,
      agents: [
        defineAgent({ name: 'patient', instructions: 'x', tools: [], mcpServers: 'all', maxExecutionTime: '3s' }),
      ],
      mcpServers: { test: stdioServer({ MCP_LOG: s.log }) },
    });
    const outcome = await worker.runUntil(async () =>
      runOutcome(
        await startAgentRun(t.client, { agent: 'patient', message: 'call test__slow {"ms":60000}' }, { taskQueue }),
      ),
    );
    expect(outcome).toMatchObject({ status: 'time_limit' });
    expect(s.read()).toContain('slow started 60000');
    expect(await eventually(() => s.read().includes('slow cancelled'), 10_000)).toBe(true);
  });

  it('a server that dies in the middle of a call is started again and the call retried', async () => {
    const s = scratch();
    const model = await toolCallingModel();
    const t = temporal();
    const marker = join(s.dir, 'crashed');
    const { worker, taskQueue } = await createTestWorker(t, {
      baseURL: model.baseURL,
      agents: [defineAgent({ name: 'reader', instructions: 'x', tools: [], mcpServers: ['test'] })],
      mcpServers: { test: stdioServer({ MCP_LOG: s.log, MARKER: marker }) },
    });
    const outcome = await worker.runUntil(async () =>
      runOutcome(
        await startAgentRun(t.client, { agent: 'reader', message: 'call test__flaky {"page":7}' }, { taskQueue }),
      ),
    );
    expect(outcome).toMatchObject({ status: 'completed', content: 'results: page 7 of the flaky server' });
    expect(s.read()).toContain('flaky crashes on page 7');
    expect(s.read().match(/stdio server \d+ started/g)).toHaveLength(2);
  });

  it('a run survives a worker restart; the new worker lists the server itself, and replay needs no server', async () => {
    const s = scratch();
    const model = await toolCallingModel();
    const t = temporal();
    const agents = [
      defineAgent({ name: 'careful', instructions: 'x', tools: [], mcpServers: ['test'], approvalTools: [] }),
    ];
    const mcpServers = { test: stdioServer({ MCP_LOG: s.log }) };
    const taskQueue = `test-${randomUUID()}`;
    const first = await createTestWorker(t, { baseURL: model.baseURL, agents, mcpServers, taskQueue });
    const handle = await first.worker.runUntil(async () => {
      const h = await startAgentRun(
        t.client,
        { agent: 'careful', message: 'call test__echo {"text":"later"}', approvalTools: ['test__echo'] },
        { taskQueue },
      );
      expect(
        await eventually(async () => (await readStatus(t.client, h.workflowId)).state === 'awaiting_approval', 20_000),
      ).toBe(true);
      return h;
    });
    // The first worker is gone, and its server with it; a new one takes over.
    const second = await createTestWorker(t, { baseURL: model.baseURL, agents, mcpServers, taskQueue });
    const outcome = await second.worker.runUntil(async () => {
      const [pending] = (await readStatus(t.client, handle.workflowId)).pendingApprovals;
      await decideApproval(t.client, handle.workflowId, { callId: pending.callId, approve: true });
      return runOutcome(handle);
    });
    expect(outcome).toMatchObject({ status: 'completed', content: 'results: echo: later' });
    expect(s.read().match(/stdio server \d+ started/g)).toHaveLength(2);

    // Replay on a worker with no MCP servers at all: what was offered and returned is in history.
    const history = await handle.fetchHistory();
    await Worker.runReplayHistory(
      {
        workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! },
        plugins: [
          new AgentsPlugin({
            agents: [defineAgent({ name: 'careful', instructions: 'x', tools: [] })],
            model: modelAt(model.baseURL),
          }),
        ],
      },
      history,
      handle.workflowId,
    );
  });
});

describe('MCP tools over streamable HTTP', () => {
  it('calls tools with headers from the environment, and rides out a server restart mid-call', async () => {
    const s = scratch();
    const marker = join(s.dir, 'crashed');
    const server = await httpServer({ MCP_LOG: s.log, MCP_TOKEN: 'tok-123', MARKER: marker });
    try {
      const model = await toolCallingModel();
      const t = temporal();
      const { worker, taskQueue } = await createTestWorker(t, {
        baseURL: model.baseURL,
        mcpServers: { web: { url: server.url, headers: { Authorization: 'Bearer tok-123' } } },
      });
      await worker.runUntil(async () => {
        // No agent and no tool list: every tool of the worker, the MCP servers' included.
        const addHandle = await startAgentRun(t.client, { message: 'call web__add {"a":2,"b":3}' }, { taskQueue });
        expect(await runOutcome(addHandle)).toMatchObject({ status: 'completed', content: 'results: 5' });
        // The server's credentials stay on the worker.
        expect(JSON.stringify(await addHandle.fetchHistory())).not.toContain('tok-123');
        const flaky = await runOutcome(
          await startAgentRun(t.client, { message: 'call web__flaky {"page":2}' }, { taskQueue }),
        );
        expect(flaky).toMatchObject({ status: 'completed', content: 'results: page 2 of the flaky server' });
      });
      expect(s.read()).toContain('flaky crashes on page 2');
      expect(s.read().match(/http server \d+ listening/g)).toHaveLength(2);
    } finally {
      await server.stop();
    }
  });

  it('a server that refuses the credentials fails runs of agents that need it, saying which server and why', async () => {
    const s = scratch();
    const server = await httpServer({ MCP_LOG: s.log, MCP_TOKEN: 'right' });
    try {
      const model = await toolCallingModel();
      const t = temporal();
      const agents = [defineAgent({ name: 'locked-out', instructions: 'x', tools: [], mcpServers: ['web'] })];
      const { worker, taskQueue } = await createTestWorker(t, {
        baseURL: model.baseURL,
        agents,
        mcpServers: { web: { url: server.url, headers: { Authorization: 'Bearer wrong' } } },
      });
      const outcome = await worker.runUntil(async () =>
        runOutcome(
          await startAgentRun(t.client, { agent: 'locked-out', message: 'call web__add {"a":1,"b":1}' }, { taskQueue }),
        ),
      );
      expect(outcome).toMatchObject({
        status: 'failed',
        errorType: 'Mcp.Unavailable',
        error: expect.stringMatching(
          /^agent "locked-out" uses the MCP server "web": MCP server "web" could not be reached: .*401/,
        ),
      });
      expect(model.requests).toHaveLength(0);
    } finally {
      await server.stop();
    }
  });
});
