import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from '@temporalio/worker';
import { defineAgent } from '../../src/agents/define-agent';
import { freePort } from '../../src/connection/dev-server';
import {
  startOpenAICompatibleServer,
  type ChatRequest,
  type OpenAICompatibleServer,
} from '../../src/testing/openai-compatible-server';
import { cleanEnv, ROOT, startTs, type Started } from '../helpers/processes';
import { pythonPeersProblem, pythonVenv } from '../helpers/python-venv';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';
import { testRegistry } from '../helpers/test-tools';

/**
 * A2A's own conformance kit (a2aproject/a2a-tck, an unmodified copy at `../shared/a2a-tck`, see
 * its ORIGIN.md) against `durable-agents a2a`, as the kit is meant to be run: the server's root
 * URL, no proxy, no extra headers. Its mandatory categories run (see CATEGORIES); every test passes or is listed, with the
 * reason it does not apply, in test/fixtures/a2a-tck-expected.json. A listed test that passes
 * fails the check, so the list only shrinks.
 */
const TCK = process.env.A2A_TCK_DIR ?? join(ROOT, '..', 'shared', 'a2a-tck');
/** The kit's requirements (its pyproject.toml's dependencies), from PyPI. */
const TCK_PACKAGES = [
  'pytest>=7.0.0',
  'pytest-asyncio>=0.20.0',
  'pytest-json-report>=1.5.0',
  'httpx>=0.24.0',
  'requests>=2.31.0',
  'responses>=0.23.0',
  'deepdiff>=6.7.1',
  'jsonschema>=4.20.0',
  'packaging>=21.0',
  'PyYAML>=5.0.0',
  'python-dotenv>=1.0.0',
  'grpcio>=1.62.0',
  'grpcio-tools>=1.62.0',
  'grpcio-status>=1.62.0',
  'proto-plus>=1.22.3',
  'protobuf>=4.25.0',
  'googleapis-common-protos>=1.63.0',
  'pyOpenSSL>=23.0.0',
  'aiohttp>=3.9.0',
];

/**
 * The kit's mandatory categories, as its run_tck.py selects them (in parts, run side by side):
 * what a client of protocol 0.3 relies on (its methods, card, task lifecycle, errors, transports).
 * Its optional categories (capabilities, transport equivalence, quality, features) are no longer
 * run: protocol 1.0's kit (a2a-tck-1.0.test.ts) tests the same behaviour at every level on every
 * binding, and the 0.3 wire itself is the SDK's translation of the same handlers.
 */
const MANDATORY = 'mandatory or mandatory_protocol or mandatory_jsonrpc';
const LIST_TASKS = 'tests/mandatory/protocol/test_tasks_list_method.py';
const CATEGORIES: { name: string; paths: string[]; markers?: string; ignore?: string }[] = [
  { name: 'mandatory (ListTasks)', paths: [LIST_TASKS], markers: MANDATORY },
  { name: 'mandatory (protocol)', paths: ['tests/mandatory/protocol/'], markers: MANDATORY, ignore: LIST_TASKS },
  {
    name: 'mandatory (the rest)',
    paths: ['authentication', 'jsonrpc', 'quality', 'security', 'transport'].map((d) => `tests/mandatory/${d}/`),
    markers: MANDATORY,
  },
];

const expected = JSON.parse(readFileSync(join(ROOT, 'test', 'fixtures', 'a2a-tck-expected.json'), 'utf8')) as Record<
  string,
  string
>;

/**
 * The agent the kit talks to, with the behaviour the kit expects of its reference agent: a task
 * stays working for a while (the kit lists, cancels, continues and resubscribes to working tasks),
 * and a blocking send answers with it working (the server's AGENT_A2A_MAX_BLOCKING_WAIT).
 */
const tck = defineAgent({
  name: 'tck',
  description: 'The agent the A2A conformance kit talks to',
  instructions: 'Answer.',
  tools: [],
});
async function tckModel(req: ChatRequest) {
  const text = String(req.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
  await new Promise((r) => setTimeout(r, WORK_MS));
  return { content: `Hello World! You said: ${text}` };
}

/** How long the agent works on a message. */
const WORK_MS = 10_000;

let skip: string | undefined;
let model: OpenAICompatibleServer | undefined;
let worker: Worker | undefined;
let running: Promise<void> | undefined;
let server: Started | undefined;
let port: number;
let python: string;
let taskQueue: string | undefined;

afterAll(async () => {
  server?.kill('SIGKILL');
  await server?.exited;
  // The kit leaves its tasks working (it never waits for most): their conversations and records
  // end here, not linger on the suite's shared server without a worker.
  if (taskQueue) {
    const client = temporal().client;
    const ending: Promise<unknown>[] = [];
    for await (const w of client.workflow.list({ query: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'` }))
      ending.push(
        client.workflow
          .getHandle(w.workflowId, w.runId)
          .terminate('the A2A TCK run is over')
          .catch(() => undefined),
      );
    await Promise.all(ending);
  }
  worker?.shutdown();
  await running;
  await model?.close();
});
const temporal = useTestTemporal();

beforeAll(async () => {
  skip = await pythonPeersProblem(() =>
    existsSync(join(TCK, 'run_tck.py')) ? undefined : `no A2A TCK at ${TCK} (see test/interop/a2a-tck.test.ts)`,
  );
  if (skip) return void process.stderr.write(`a2a-tck: skipped: ${skip}\n`);
  python = (await pythonVenv('a2a-tck', TCK_PACKAGES)).python;
  model = await startOpenAICompatibleServer(tckModel);
  const created = await createTestWorker(temporal(), {
    baseURL: model.baseURL,
    registry: testRegistry(),
    agents: [tck],
  });
  worker = created.worker;
  taskQueue = created.taskQueue;
  running = worker.run();
  port = await freePort();
  const env = cleanEnv({
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
    AGENT_TASK_QUEUE: created.taskQueue,
    AGENT_A2A_MAX_BLOCKING_WAIT: '1s',
  });
  server = await startTs(['client.ts', 'a2a', '--port', String(port)], env, /Press Ctrl\+C/, 120_000);
}, 600_000);

interface PytestReport {
  tests: {
    nodeid: string;
    outcome: string;
    call?: { longrepr?: string; duration?: number };
    setup?: { longrepr?: string; duration?: number };
  }[];
}

/** Runs one category of the kit; its report. The kit's folder is left as it was (no caches, no reports). */
function runCategory(c: (typeof CATEGORIES)[number]): Promise<PytestReport> {
  const report = join(mkdtempSync(join(tmpdir(), 'a2a-tck-')), 'report.json');
  const args = [
    '-m',
    'pytest',
    ...c.paths,
    ...(c.ignore ? [`--ignore=${c.ignore}`] : []),
    `--sut-url=http://localhost:${port}`,
    '--test-scope=all',
    '--tb=line',
    '-q',
    '-p',
    'no:cacheprovider',
    '--json-report',
    `--json-report-file=${report}`,
    ...(c.markers ? ['-m', c.markers] : []),
  ];
  return new Promise((resolve, reject) =>
    execFile(
      python,
      args,
      {
        cwd: TCK,
        timeout: 300_000,
        maxBuffer: 64 * 1024 * 1024,
        env: { ...cleanEnv(), PYTHONDONTWRITEBYTECODE: '1' },
      },
      (err, stdout, stderr) => {
        if (!existsSync(report))
          return reject(new Error(`the TCK's ${c.name} tests did not run: ${err?.message}\n${stdout}\n${stderr}`));
        resolve(JSON.parse(readFileSync(report, 'utf8')) as PytestReport);
      },
    ),
  );
}

it('passes every mandatory test of the A2A 0.3 TCK that applies, with the server found at its root and no extra headers', async () => {
  if (skip) return;
  const failed: string[] = [];
  const passedButListed: string[] = [];
  const counts: Record<string, number> = {};
  const durations: [string, number][] = [];
  // Side by side (the kit's tests mostly wait on the server).
  const check = (c: (typeof CATEGORIES)[number], report: PytestReport) => {
    for (const t of report.tests) {
      counts[t.outcome] = (counts[t.outcome] ?? 0) + 1;
      durations.push([t.nodeid, (t.call?.duration ?? 0) + (t.setup?.duration ?? 0)]);
      const listed = expected[t.nodeid];
      if (t.outcome === 'failed' || t.outcome === 'error') {
        if (!listed) failed.push(`${c.name}: ${t.nodeid}\n    ${(t.call ?? t.setup)?.longrepr ?? ''}`.slice(0, 1500));
      } else if (t.outcome === 'passed' && listed) passedButListed.push(t.nodeid);
    }
  };
  const timed = async (c: (typeof CATEGORIES)[number]) => {
    const started = Date.now();
    check(c, await runCategory(c));
    if (process.env.A2A_TCK_DURATIONS) process.stderr.write(`  ${c.name}: ${(Date.now() - started) / 1000} s\n`);
  };
  const [listTasks, protocol, rest] = CATEGORIES;
  await Promise.all([timed(listTasks), timed(protocol).then(() => timed(rest))]);
  process.stderr.write(`a2a-tck: ${JSON.stringify(counts)}\n`);
  if (process.env.A2A_TCK_DURATIONS)
    for (const [id, s] of durations.sort((a, b) => b[1] - a[1]).slice(0, 20))
      process.stderr.write(`  ${s.toFixed(1)} s ${id}\n`);
  expect(failed).toEqual([]);
  // A listed test that passes now: take it off the list.
  expect(passedButListed).toEqual([]);
}, 1_200_000);
