import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Worker } from '@temporalio/worker';
import { defineAgent } from '../../src/agents/define-agent';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { decideApproval, readStatus } from '../../src/client/workflow-controls';
import { freePort } from '../../src/connection/dev-server';
import { a2aAgent } from '../../src/tools/a2a-client/a2a-agent';
import { ToolRegistry } from '../../src/tools/registry';
import {
  startOpenAICompatibleServer,
  type ChatRequest,
  type OpenAICompatibleServer,
} from '../../src/testing/openai-compatible-server';
import { cleanEnv, ROOT, startTs, type Started } from '../helpers/processes';
import { pythonPeersProblem, pythonVenv } from '../helpers/python-venv';
import { call } from '../helpers/scripted-model';
import { transfer } from '../helpers/test-tools';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/**
 * Our doors against the official Python SDKs, from PyPI (a venv the test makes): the `a2a-sdk`
 * client against `durable-agents a2a`, an `a2a-sdk` server called through `a2aAgent`, the `mcp`
 * client against `mcp --http` (with the initialize handshake, and with the newest revision it
 * finds), and an `mcp` server as a worker's tool source, one of its tools asking a person mid-call.
 * Skipped with one line without Python 3.10+, never in CI (see helpers/python-venv.ts).
 */
const PACKAGES = ['a2a-sdk[http-server]==1.3.0', 'mcp==2.3.0', 'uvicorn>=0.30'];
const FIXTURES = join(ROOT, 'test', 'fixtures', 'python');

const echoer = defineAgent({ name: 'echoer', description: 'Echoes', instructions: 'Echo.', tools: [] });
const payer = defineAgent({ name: 'payer', description: 'Pays people', instructions: 'You pay.', tools: ['transfer'] });
const caller = defineAgent({
  name: 'caller',
  instructions: 'You call others.',
  tools: ['ask_python'],
  mcpServers: ['py', 'py26'],
});

/** The echoer echoes; the caller calls what its message names, then says what it got. */
async function model(req: ChatRequest) {
  const system = String(req.messages[0]?.content ?? '');
  const last = req.messages[req.messages.length - 1];
  const said = String(req.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
  if (system.includes('You pay'))
    return last.role === 'tool'
      ? { content: `paid: ${String(last.content)}` }
      : call(['transfer', { to: 'ada', amount: 2 }]);
  // A server's sampling request, as the run's model gets it.
  if (system.includes('You sample')) return { content: 'steady state endures' };
  if (!system.includes('You call others')) return { content: `echo: ${said}` };
  if (last.role === 'tool') return { content: `got: ${String(last.content)}` };
  if (said === 'ask python') return call(['ask_python', { message: 'hi from node' }]);
  if (said === 'add on py') return call(['py__py_add', { a: 2, b: 3 }]);
  if (said === 'add on py26') return call(['py26__py_add', { a: 4, b: 5 }]);
  if (said === 'ask on py26') return call(['py26__py_ask', {}]);
  if (said === 'sample on py') return call(['py__py_sample', {}]);
  if (said === 'sample on py26') return call(['py26__py_sample', {}]);
  return call(['py__py_ask', {}]);
}

let skip: string | undefined;
let python: string;
let model_: OpenAICompatibleServer;
let worker: Worker;
let running: Promise<void>;
let taskQueue: string;
let a2aPort: number;
let mcpPort: number;
let pyA2a: ChildProcess | undefined;
let pyModern: ChildProcess | undefined;
const servers: Started[] = [];

afterAll(async () => {
  for (const s of servers) s.kill('SIGKILL');
  await Promise.all(servers.map((s) => s.exited));
  pyA2a?.kill('SIGKILL');
  pyModern?.kill('SIGKILL');
  worker?.shutdown();
  await running;
  await model_?.close();
});
const temporal = useTestTemporal();

beforeAll(async () => {
  skip = await pythonPeersProblem();
  if (skip) return void process.stderr.write(`python-peers: skipped: ${skip}\n`);
  python = (await pythonVenv('python-peers', PACKAGES)).python;
  // The Python A2A agent our worker calls, and a Python MCP server that speaks 2026-07-28 only.
  const [pyPort, modernPort] = [await freePort(), await freePort()];
  pyA2a = await startPython([join(FIXTURES, 'a2a_server.py'), String(pyPort)]);
  pyModern = await startPython([join(FIXTURES, 'mcp_server.py'), 'modern', String(modernPort)]);
  const registry = new ToolRegistry();
  registry.register(transfer);
  registry.register(
    a2aAgent({ url: `http://127.0.0.1:${pyPort}/`, name: 'ask_python', description: 'Asks the Python agent' }),
  );
  model_ = await startOpenAICompatibleServer(model);
  const created = await createTestWorker(temporal(), {
    baseURL: model_.baseURL,
    registry,
    agents: [echoer, caller, payer],
    mcpServers: {
      py: { command: python, args: [join(FIXTURES, 'mcp_server.py')], timeout: '30s' },
      py26: { url: `http://127.0.0.1:${modernPort}/mcp`, timeout: '30s' },
    },
  });
  ({ worker, taskQueue } = created);
  running = worker.run();
  const env = cleanEnv({
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
    AGENT_TASK_QUEUE: taskQueue,
    AGENT_A2A_DEFAULT: 'echoer',
  });
  const [a2a, mcp] = await Promise.all([
    onFreePort((port) => startTs(['client.ts', 'a2a', '--port', String(port)], env, /Press Ctrl\+C/, 120_000)),
    onFreePort((port) =>
      startTs(['mcp.ts', '--http', '--port', String(port), '--agents', 'echoer,payer'], env, /Press Ctrl\+C/, 120_000),
    ),
  ]);
  servers.push(a2a.server, mcp.server);
  [a2aPort, mcpPort] = [a2a.port, mcp.port];
}, 600_000);

/**
 * Starts a server on a free port, on another one when a process of a concurrent test file took
 * that port between the asking and the listening.
 */
async function onFreePort(start: (port: number) => Promise<Started>): Promise<{ server: Started; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return { server: await start(port), port };
    } catch (err) {
      if (attempt >= 3 || !/EADDRINUSE/.test(String(err))) throw err;
    }
  }
}

/** Starts a Python peer server; resolves once it says "ready". */
async function startPython(args: string[]): Promise<ChildProcess> {
  const child = spawn(python, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const seen = (d: Buffer) => (out += d.toString()).includes('ready') && resolve();
    child.stdout!.on('data', seen);
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => reject(new Error(`${args[0]} exited with ${code}: ${out}`)));
  });
  return child;
}

/** Runs a Python peer script; its last stdout line, as JSON. */
function py(script: string, args: string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) =>
    execFile(python, [join(FIXTURES, script), ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${script} failed: ${err.message}\n${stdout}\n${stderr}`));
      resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>);
    }),
  );
}

it.each(['1.0', '0.3'])(
  "the Python a2a-sdk client (protocol %s) sends a message to our A2A server, at the root and at the agent's URL, and reads the task back",
  async (version) => {
    if (skip) return;
    for (const url of [`http://127.0.0.1:${a2aPort}/`, `http://127.0.0.1:${a2aPort}/a2a/echoer/`])
      expect(await py('a2a_client.py', [url, `hello over ${version}`, version])).toMatchObject({
        state: 'TASK_STATE_COMPLETED',
        answer: `echo: hello over ${version}`,
        cardName: 'echoer',
      });
  },
  120_000,
);

it('an agent of ours calls a Python a2a-sdk agent through a2aAgent', async () => {
  if (skip) return;
  const run = await startAgentRun(temporal().client, { agent: 'caller', message: 'ask python' }, { taskQueue });
  expect(await runOutcome(run)).toMatchObject({ status: 'completed', content: 'got: python heard: hi from node' });
}, 120_000);

it.each([
  { mode: 'legacy', revision: '2025-11-25' },
  { mode: 'auto', revision: '2026-07-28' },
  { mode: '2026-07-28', revision: '2026-07-28' },
])(
  'the Python mcp client (mode $mode) lists and calls agent tools on mcp --http, one asking an approval, on $revision',
  async ({ mode, revision }) => {
    if (skip) return;
    const result = await py('mcp_client.py', [
      `http://127.0.0.1:${mcpPort}/mcp`,
      mode,
      'echoer',
      JSON.stringify({ message: 'hello over mcp' }),
    ]);
    expect(result).toMatchObject({
      protocolVersion: revision,
      tools: expect.arrayContaining(['echoer']),
      isError: false,
    });
    expect(String(result.text)).toContain('echo: hello over mcp');
    // An approval reaches the client as its revision asks, and its answer decides it.
    const paid = await py('mcp_client.py', [`http://127.0.0.1:${mcpPort}/mcp`, mode, 'payer', '{"message":"pay ada"}']);
    expect(paid).toMatchObject({
      protocolVersion: revision,
      isError: false,
      asked: [expect.stringMatching(/^Approve transfer\(/)],
    });
    expect(String(paid.text)).toContain('paid: sent 2 to ada');
  },
  120_000,
);

it.each([
  { server: 'py', how: 'over stdio, both revisions', sum: 'python says 2 + 3 = 5', name: 'Ada' },
  { server: 'py26', how: 'over HTTP, 2026-07-28 only', sum: 'python says 4 + 5 = 9', name: 'Grace' },
])(
  "a worker uses a Python mcp server's tools ($how): one asks a person mid-call, one samples the run's model",
  async (c) => {
    if (skip) return;
    const t = temporal();
    const add = await startAgentRun(t.client, { agent: 'caller', message: `add on ${c.server}` }, { taskQueue });
    expect(await runOutcome(add)).toMatchObject({ status: 'completed', content: `got: ${c.sum}` });
    const ask = await startAgentRun(t.client, { agent: 'caller', message: `ask on ${c.server}` }, { taskQueue });
    let status = await readStatus(t.client, ask.workflowId);
    for (let i = 0; i < 150 && status.pendingApprovals.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 200));
      status = await readStatus(t.client, ask.workflowId);
    }
    // The server's question is a question in the run, answered as approvals are; the call is made
    // again with the answer (2026-07-28: as the input_required round's response).
    expect(status.pendingApprovals[0]).toMatchObject({ question: expect.stringMatching(/What is your name\?/) });
    await decideApproval(t.client, ask.workflowId, {
      callId: status.pendingApprovals[0].callId,
      approve: true,
      reason: JSON.stringify({ name: c.name }),
    });
    expect(await runOutcome(ask)).toMatchObject({ status: 'completed', content: `got: python greets ${c.name}` });
    // The server's sampling request is a call of the run's own model (2026-07-28: an input_required round).
    const sample = await startAgentRun(t.client, { agent: 'caller', message: `sample on ${c.server}` }, { taskQueue });
    expect(await runOutcome(sample)).toMatchObject({
      status: 'completed',
      content: "got: python's model said: steady state endures",
    });
  },
  120_000,
);
