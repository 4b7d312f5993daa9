import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { exampleAgents } from '../../scripts/demo-agents/agents';
import { freePort } from '../../src/connection/dev-server';
import { cleanEnv, ROOT, nodeArgs } from '../helpers/processes';
import { node24 } from '../helpers/node24';
import { answer, closeScriptedModels, startModel } from '../helpers/scripted-model';
import { connectTestTemporal, createTestWorker, type TestTemporal } from '../helpers/temporal';

/**
 * `mcp --http` measured by the official MCP conformance suite (@modelcontextprotocol/conformance,
 * run with a Node 24 as it needs), not only by our own tests.
 */
jest.setTimeout(180_000);
afterAll(closeScriptedModels);

const SUITE = join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

/** The scenarios that need the suite's own tools, resources and prompts, each with the reason. */
const EXPECTED = join(ROOT, 'test', 'fixtures', 'mcp-conformance-expected.yaml');

/** The scenarios for what the server declares: each must pass. */
const APPLICABLE = [
  'server-initialize',
  'ping',
  'logging-set-level',
  'completion-complete',
  'tools-list',
  'resources-list',
  'resources-subscribe',
  'resources-unsubscribe',
  'prompts-list',
  'dns-rebinding-protection',
  'server-sse-multiple-streams',
];

let t: TestTemporal;
let server: ChildProcess;
let url: string;
let stopWorker: () => Promise<void>;

beforeAll(async () => {
  node24(); // installed once, before the clock of the first test starts
  t = await connectTestTemporal();
  const model = await startModel(() => answer('hello'));
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL, agents: exampleAgents });
  const running = worker.run();
  stopWorker = async () => {
    worker.shutdown();
    await running;
  };
  const port = await freePort();
  url = `http://127.0.0.1:${port}/mcp`;
  // No tokens, on loopback: the case DNS rebinding is about.
  server = spawn(process.execPath, nodeArgs(['mcp.ts', '--http', '--port', String(port)]), {
    cwd: ROOT,
    env: cleanEnv({ TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!, AGENT_TASK_QUEUE: taskQueue }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    server.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (stderr.includes('Press Ctrl+C')) resolve();
    });
    server.once('exit', (code) => reject(new Error(`mcp exited with ${code}: ${stderr}`)));
  });
});

afterAll(async () => {
  server?.kill('SIGTERM');
  await stopWorker?.();
  await t?.close();
});

/**
 * Runs server scenarios of the suite against `mcp --http`; its exit code is 0 when every check
 * passed. (Not spawnSync: the worker in this process must go on answering meanwhile.)
 */
function conformance(...args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(node24(), [SUITE, 'server', '--url', url, ...args]);
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output })));
}

it('passes every server scenario of the suite that applies to what it declares (the rest need the suite’s own test tools, listed with the reason)', async () => {
  const { code, output } = await conformance('--suite', 'active', '--expected-failures', EXPECTED);
  // The suite fails on an unexpected failure and on a listed scenario that now passes.
  expect({
    code,
    unexpected: output.match(/Unexpected failures[\s\S]*/)?.[0],
    stale: output.match(/Stale[\s\S]*/)?.[0],
  }).toEqual({
    code: 0,
    unexpected: undefined,
    stale: undefined,
  });
  for (const scenario of APPLICABLE) expect(output).toContain(`✓ ${scenario}: `);
});

it('answers a request naming another host 4xx, and the same with its own host', async () => {
  const port = Number(new URL(url).port);
  const post = (host: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/mcp',
          headers: { host, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      );
      req.on('error', reject);
      req.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
        }),
      );
    });
  expect(await post('evil.example.com')).toBe(403);
  expect(await post(`127.0.0.1:${port}`)).toBe(200);
});

/** Client scenarios: our MCP client (the driver runs it as runs do) against the suite's servers. */
const CLIENT_SCENARIOS = [
  'initialize',
  'tools_call',
  'elicitation-sep1034-client-defaults',
  'sse-retry',
  // OAuth beyond the suite's auth set: machine clients (a secret, a signed JWT), and the drafts.
  'auth/client-credentials-basic',
  'auth/client-credentials-jwt',
  'auth/resource-mismatch',
  'auth/offline-access-scope',
  'auth/offline-access-not-supported',
];

const DRIVER = [process.execPath, ...nodeArgs([join(ROOT, 'test', 'fixtures', 'mcp-conformance-client.ts')])].join(' ');

/** Runs the suite's client side against our driver; resolves with its exit code and output. */
function clientConformance(...args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(node24(), [SUITE, 'client', '--command', DRIVER, ...args], { cwd: ROOT });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output })));
}

it.each(CLIENT_SCENARIOS)('our MCP client passes the suite’s client scenario %s', async (scenario) => {
  const { code, output } = await clientConformance('--scenario', scenario);
  expect({
    code,
    summary: /Passed: \d+\/\d+, (\d+) failed, (\d+) warnings/.exec(output)?.slice(1),
    output: code === 0 ? '' : output,
  }).toEqual({ code: 0, summary: ['0', '0'], output: '' });
});

it('our MCP client passes the suite’s OAuth scenarios (a login as `mcp login` makes it, then calls as a worker makes them), but for those listed with the reason', async () => {
  const { code, output } = await clientConformance('--suite', 'auth', '--expected-failures', EXPECTED);
  expect({
    code,
    unexpected: /Unexpected failures[\s\S]*/.exec(output)?.[0],
    stale: /Stale[\s\S]*/.exec(output)?.[0],
  }).toEqual({ code: 0, unexpected: undefined, stale: undefined });
  expect(output).toContain('✓ auth/metadata-default: ');
  expect(output).toContain('✓ auth/pre-registration: ');
});
