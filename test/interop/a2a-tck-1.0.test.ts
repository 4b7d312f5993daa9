import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/connection/dev-server';
import { startOpenAICompatibleServer, type OpenAICompatibleServer } from '../../src/testing/openai-compatible-server';
import { tckModel } from '../fixtures/a2a-tck-agent';
import { cleanEnv, ROOT, startTs, type Started } from '../helpers/processes';
import { pythonPeersProblem, pythonVenv } from '../helpers/python-venv';
import { useTestTemporal } from '../helpers/temporal';
import { checkConformanceTable } from '../helpers/conformance-table';

/**
 * A2A 1.0's own conformance kit (a2aproject/a2a-tck, branch 1.0-dev: an unmodified copy at
 * `../shared/a2a-tck-1.0`, see its ORIGIN.md) against `durable-agents a2a --module
 * test/fixtures/a2a-tck-agent.ts`, as the kit is meant to be run: the server's root URL, whose
 * card names the bindings the kit tests (JSON-RPC and HTTP+JSON). Every level runs (MUST, SHOULD,
 * MAY); every test passes or is listed, with the reason, in test/fixtures/a2a-tck-1.0-expected.json.
 * A listed test that passes fails the check, so the list only shrinks. A skip for a missing
 * prerequisite (the kit skips a test when the task it needs is not in the state it needs) is a
 * failure here: only skips for what the card does not declare are allowed.
 */
const KIT = process.env.A2A_TCK_1_DIR ?? join(ROOT, '..', 'shared', 'a2a-tck-1.0');
/** The kit's dependencies (its pyproject.toml's), from PyPI, and the JSON report this test reads. */
const KIT_PACKAGES = [
  'pytest>=8.0',
  'pytest-asyncio>=0.23',
  'httpx>=0.27',
  'grpcio>=1.60',
  'protobuf>=4.25',
  'googleapis-common-protos>=1.62',
  'jsonschema>=4.21',
  'pytest-html>=4.1',
  'gherkin-official>=29.0',
  'Jinja2>=3.1',
  'pytest-json-report>=1.5.0',
];
/** The bindings the card declares, each run by its own kit process, side by side. */
const BINDINGS = ['jsonrpc', 'http_json', 'grpc'] as const;

const expected = JSON.parse(
  readFileSync(join(ROOT, 'test', 'fixtures', 'a2a-tck-1.0-expected.json'), 'utf8'),
) as Record<string, string>;

let skip: string | undefined;
let model: OpenAICompatibleServer | undefined;
let server: Started | undefined;
let kit: string;
let python: string;
let url: string;
const taskQueue = `a2a-tck-1-${randomUUID()}`;
// Assigned below the cleanup hook, which must be declared first (its hook runs first, connected).
// eslint-disable-next-line prefer-const
let temporal: ReturnType<typeof useTestTemporal>;

afterAll(async () => {
  server?.kill('SIGTERM');
  await server?.exited;
  await model?.close();
  // Tasks the kit left waiting for input end here, not linger on the suite's shared server.
  if (!skip) {
    const client = temporal().client;
    const ending: Promise<unknown>[] = [];
    for await (const w of client.workflow.list({ query: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'` }))
      ending.push(
        client.workflow
          .getHandle(w.workflowId, w.runId)
          .terminate('the A2A TCK run is over')
          .catch(() => 0),
      );
    await Promise.all(ending);
  }
  if (kit) rmSync(join(kit, '..'), { recursive: true, force: true });
});
// After the cleanup above, whose hook must run while the connection is open.
temporal = useTestTemporal();

beforeAll(async () => {
  skip = await pythonPeersProblem(() =>
    existsSync(join(KIT, 'run_tck.py')) ? undefined : `no A2A 1.0 TCK at ${KIT} (see test/interop/a2a-tck-1.0.test.ts)`,
  );
  if (skip) return void process.stderr.write(`a2a-tck-1.0: skipped: ${skip}\n`);
  // A copy, so the kit's folder stays as it was (the kit writes its reports beside its tests).
  kit = join(mkdtempSync(join(tmpdir(), 'a2a-tck-1.0-')), 'kit');
  cpSync(KIT, kit, { recursive: true });
  const [venv] = await Promise.all([
    pythonVenv('a2a-tck-1.0', KIT_PACKAGES),
    (async () => {
      model = await startOpenAICompatibleServer(tckModel);
      const port = await freePort();
      let grpcPort = await freePort();
      while (grpcPort === port) grpcPort = await freePort();
      url = `http://localhost:${port}`;
      server = await startTs(
        ['client.ts', 'a2a', '--port', String(port), '--module', join(ROOT, 'test', 'fixtures', 'a2a-tck-agent.ts')],
        cleanEnv({
          TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
          AGENT_TASK_QUEUE: taskQueue,
          OPENAI_BASE_URL: model.baseURL,
          OPENAI_API_KEY: 'tck',
          AGENT_MODEL: 'scripted',
          AGENT_A2A_GRPC_PORT: String(grpcPort),
        }),
        /Press Ctrl\+C/,
        120_000,
      );
    })(),
  ]);
  python = venv.python;
}, 600_000);

interface PytestReport {
  tests: {
    nodeid: string;
    outcome: string;
    keywords?: string[];
    call?: { longrepr?: string };
    setup?: { longrepr?: string };
  }[];
}

/** Runs the kit on one binding, every level; its pytest report. */
function runKit(binding: string): Promise<PytestReport> {
  const report = join(kit, '..', `report-${binding}.json`);
  const args = [
    '-m',
    'pytest',
    'tests/compatibility/',
    `--sut-host=${url}`,
    `--transport=${binding}`,
    '--tb=line',
    '-q',
    '-rs',
    '-p',
    'no:cacheprovider',
    `--compatibility-report=${join(kit, '..', `compatibility-${binding}`)}`,
    '--json-report',
    `--json-report-file=${report}`,
  ];
  return new Promise((resolve, reject) =>
    execFile(
      python,
      args,
      {
        cwd: kit,
        timeout: 400_000,
        maxBuffer: 64 * 1024 * 1024,
        env: { ...cleanEnv(), PYTHONDONTWRITEBYTECODE: '1', PYTHONPATH: kit },
      },
      (err, stdout, stderr) => {
        if (!existsSync(report))
          return reject(new Error(`the kit did not run on ${binding}: ${err?.message}\n${stdout}\n${stderr}`));
        resolve(JSON.parse(readFileSync(report, 'utf8')) as PytestReport);
      },
    ),
  );
}

/** One test of the kit, as this run saw it. */
interface KitTest {
  binding: string;
  nodeid: string;
  level?: 'must' | 'should' | 'may';
  outcome: 'passed' | 'failed' | 'listed' | 'skipped';
}

/** The table of docs/a2a.md: per binding and level, the tests passed, failed, listed and skipped. */
function conformanceRows(tests: KitTest[]): string[][] {
  const rows: string[][] = [];
  for (const binding of BINDINGS)
    for (const level of ['must', 'should', 'may'] as const) {
      const mine = tests.filter((t) => t.binding === binding && t.level === level);
      const count = (o: KitTest['outcome']) => String(mine.filter((t) => t.outcome === o).length);
      rows.push([
        `A2A TCK 1.0 (1.0-dev, 357c4a8)`,
        level.toUpperCase(),
        ({ jsonrpc: 'JSON-RPC', http_json: 'HTTP+JSON', grpc: 'gRPC' } as const)[binding],
        count('passed'),
        count('failed'),
        count('listed'),
        count('skipped'),
      ]);
    }
  return rows;
}

/**
 * Why the kit skipped a test: another binding's run has it (each run tests one binding), the card
 * (what it does not declare: a required extension, an extended card without authentication; a
 * negative test of a capability it has; a level with no requirement), or a prerequisite it could
 * not make (a task in the state the test needs), which fails here.
 */
function skipKind(why: string, binding: string): 'other-binding' | 'card' | 'prerequisite' {
  const transport = /Transport '(\w+)' not configured|(JSON-RPC|HTTP\+JSON|gRPC) transport not configured/.exec(why);
  if (transport) return 'other-binding';
  // The JSON data-model tests read the JSON bindings' responses: gRPC's are protocol buffers.
  if (binding === 'grpc' && /No successful send_message responses/.test(why)) return 'other-binding';
  if (/Agent supports (streaming|push notifications)|does not declare|No requirements at this level/.test(why))
    return 'card';
  return 'prerequisite';
}

it('passes every test of the A2A 1.0 TCK, at every level, on every binding the card declares', async () => {
  if (skip) return;
  const reports = await Promise.all(BINDINGS.map(async (b) => [b, await runKit(b)] as const));
  const failed: string[] = [];
  const skippedForWant: string[] = [];
  const passedButListed: string[] = [];
  const tests: KitTest[] = [];
  for (const [binding, report] of reports)
    for (const t of report.tests) {
      const id = `${binding}: ${t.nodeid}`;
      const why = (t.call ?? t.setup)?.longrepr ?? '';
      const level = (['must', 'should', 'may'] as const).find((l) => t.keywords?.includes(l));
      const listed = expected[t.nodeid];
      let outcome: KitTest['outcome'] =
        t.outcome === 'passed' ? 'passed' : t.outcome === 'skipped' ? 'skipped' : 'failed';
      if (outcome === 'failed' && listed) outcome = 'listed';
      const skipped = outcome === 'skipped' ? skipKind(why, binding) : undefined;
      // The other binding's tests count in its own run.
      if (skipped === 'other-binding') continue;
      tests.push({ binding, nodeid: t.nodeid, level, outcome });
      if (outcome === 'failed') failed.push(`${id}\n    ${why}`.slice(0, 1500));
      else if (skipped === 'prerequisite') skippedForWant.push(`${id}: ${why}`.slice(0, 500));
      else if (outcome === 'passed' && listed) passedButListed.push(t.nodeid);
    }
  const rows = conformanceRows(tests);
  process.stderr.write(`a2a-tck-1.0: ${JSON.stringify(rows)}\n`);
  expect(failed).toEqual([]);
  expect(skippedForWant).toEqual([]);
  expect(passedButListed).toEqual([]);
  // The MUST tests ran on both bindings (a card that declared neither would pass an empty run).
  for (const binding of BINDINGS)
    expect(
      tests.filter((t) => t.binding === binding && t.level === 'must' && t.outcome === 'passed').length,
    ).toBeGreaterThan(60);
  // docs/a2a.md's table says what this run measured (UPDATE_CONFORMANCE=1 writes it).
  checkConformanceTable(
    'docs/a2a.md',
    'test/interop/a2a-tck-1.0.test.ts',
    ['kit', 'level', 'binding', 'passed', 'failed', 'listed', 'skipped (by the card)'],
    rows,
  );
}, 900_000);
