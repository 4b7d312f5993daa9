import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { openMemoryStore } from '../../src/memory-store/open-memory-store';
import { answer, call, startModel, toolResults } from '../helpers/scripted-model';
import { useTestTemporal } from '../helpers/temporal';
import { cleanEnv, startTs } from '../helpers/processes';
import { postgresProblem, startPostgres, type TestPostgres } from '../helpers/postgres-server';

/**
 * A worker SIGKILLed in the middle of a `remember` (the store has the fact; the activity has not
 * completed): the call is tried again on another worker, under the same idempotency key, and the
 * fact is stored exactly once, with the id the run reports. On both stores: the embedded one
 * also shows the dead worker's hold on its directory is taken over.
 */
jest.setTimeout(150_000);
const temporal = useTestTemporal();
const skip = postgresProblem();
if (skip) console.log(`memory-crash.test: the PostgreSQL half is skipped: ${skip}`);
let postgres: TestPostgres | undefined;
const dir = mkdtempSync(join(tmpdir(), 'durable-agents-memory-crash-'));
afterAll(async () => {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const cases: [string, () => Promise<{ MEMORY_DIR: string } | { MEMORY_URL: string }>][] = [
  ['embedded', async () => ({ MEMORY_DIR: join(dir, 'embedded') })],
  ...(skip
    ? []
    : ([
        [
          'PostgreSQL',
          async () => {
            postgres = await startPostgres();
            return { MEMORY_URL: postgres.url };
          },
        ],
      ] as [string, () => Promise<{ MEMORY_URL: string }>][])),
];

it.each(cases)(
  'on the %s store, a fact is stored exactly once when its worker dies mid-remember',
  async (_kind, where) => {
    const model = await startModel((req) =>
      toolResults(req).length
        ? answer(`kept: ${toolResults(req)[0]}`)
        : call(['remember', { text: 'Pays by invoice' }]),
    );
    const location = await where();
    const env = cleanEnv({
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
      TEST_WORKFLOW_BUNDLE: process.env.TEST_WORKFLOW_BUNDLE!,
      AGENT_TASK_QUEUE: `memory-crash-${randomUUID()}`,
      OPENAI_BASE_URL: model.baseURL,
      ...location,
    });
    const doomed = await startTs(['test/fixtures/memory-worker.ts'], { ...env, PAUSE_AFTER_REMEMBER: '1' }, /ready/);
    const handle = await startAgentRun(
      temporal().client,
      { message: 'I pay by invoice', user: 'carol', tools: ['remember'] },
      { taskQueue: env.AGENT_TASK_QUEUE! },
    );
    const deadline = Date.now() + 60_000;
    while (!/stored f_\w+/.test(doomed.output()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const storedId = /stored (f_\w+)/.exec(doomed.output())?.[1];
    expect(storedId).toBeDefined();
    doomed.kill('SIGKILL');
    await doomed.exited;

    const survivor = await startTs(['test/fixtures/memory-worker.ts'], env, /ready/);
    try {
      const outcome = await runOutcome(handle);
      expect(outcome.status).toBe('completed');
      // The retry found the fact the killed attempt stored: the run reports that one.
      expect(outcome.toolExecutions[0]).toMatchObject({ name: 'remember', error: false, workerLosses: 1 });
      expect(outcome.content).toContain(`"id":"${storedId}"`);
    } finally {
      survivor.kill('SIGINT');
      await survivor.exited;
    }
    const store = await openMemoryStore(
      'MEMORY_URL' in location ? { url: location.MEMORY_URL } : { dir: location.MEMORY_DIR },
    );
    try {
      const facts = await store.list({ user: 'carol' });
      expect(facts.map((f) => [f.id, f.text])).toEqual([[storedId, 'Pays by invoice']]);
    } finally {
      await store.close();
    }
  },
);
