import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { sendMessage } from '../../src/client/conversations';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import type { ChatRequest } from '../../src/testing/chat-request';
import { answer, call, lastOf, startModel, toolResults } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';
import { postgresProblem, startPostgres, type TestPostgres } from '../helpers/postgres-server';

/**
 * Memory across conversations in real runs, on both stores: what one conversation of a user
 * remembers, a new conversation of the same user recalls; another user's, or the same user's
 * in another tenant, does not.
 */
jest.setTimeout(120_000);
const temporal = useTestTemporal();

const skip = postgresProblem();
if (skip) console.log(`memory.test: the PostgreSQL half is skipped: ${skip}`);
let postgres: TestPostgres | undefined;
const dir = mkdtempSync(join(tmpdir(), 'durable-agents-memory-'));
afterAll(async () => {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The user's model: "remember: X" is kept with remember; a question is looked up with recall, and answered with what came back. */
function memoryModel(req: ChatRequest) {
  const results = toolResults(req);
  if (results.length) return answer(`tool said: ${results[results.length - 1]}`);
  const said = lastOf(req, 'user');
  const keep = /^remember: (.+)$/.exec(said);
  if (keep) return call(['remember', { text: keep[1] }]);
  return call(['recall', { query: said }]);
}

const stores: [string, () => Promise<{ dir: string } | { url: string }>][] = [
  ['embedded', async () => ({ dir: join(dir, 'embedded') })],
  ...(skip
    ? []
    : ([
        [
          'PostgreSQL',
          async () => {
            postgres = await startPostgres();
            return { url: postgres.url };
          },
        ],
      ] as [string, () => Promise<{ dir: string } | { url: string }>][])),
];

describe.each(stores)('on the %s store', (kind, location) => {
  // Tenants of this case's own: a tenant's budget ledger is a workflow on the task queue of the
  // worker that first met it, and the other case's worker is gone.
  const acme = `acme-${kind}`;
  const globex = `globex-${kind}`;
  it("recalls in a new conversation what the user's last one remembered, and never for another user or tenant", async () => {
    const model = await startModel(memoryModel);
    const { worker, taskQueue } = await createTestWorker(temporal(), {
      baseURL: model.baseURL,
      memory: await location(),
    });
    const client = temporal().client;
    const tools = ['remember', 'recall'];
    const say = (user: string, tenant: string, message: string) =>
      sendMessage(client, `mem-${randomUUID()}`, { message }, { taskQueue, options: { user, tenant, tools } });
    await worker.runUntil(async () => {
      const kept = await say('alice', acme, 'remember: Prefers aisle seats on long flights');
      expect(kept.status).toBe('completed');
      expect(kept.content).toMatch(/"remembered":\{"id":"f_\w+","text":"Prefers aisle seats on long flights"/);

      const later = await say('alice', acme, 'Which seat do I like?');
      expect(later.content).toContain('Prefers aisle seats on long flights');
      const otherUser = await say('bob', acme, 'Which seat do I like?');
      expect(otherUser.content).toBe('tool said: {"facts":[]}');
      const otherTenant = await say('alice', globex, 'Which seat do I like?');
      expect(otherTenant.content).toBe('tool said: {"facts":[]}');

      // A one-shot run of the same user finds it too.
      const run = await runOutcome(
        await startAgentRun(client, { message: 'seat?', user: 'alice', tenant: acme, tools }, { taskQueue }),
      );
      expect(run.content).toContain('Prefers aisle seats on long flights');
    });
  });
});

it('a run without a user is told, as a tool error it can act on, that memory is per user', async () => {
  const model = await startModel(memoryModel);
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: model.baseURL,
    memory: { dir: join(dir, 'no-user') },
  });
  const outcome = await worker.runUntil(async () =>
    runOutcome(await startAgentRun(temporal().client, { message: 'remember: x', tools: ['remember'] }, { taskQueue })),
  );
  expect(outcome.status).toBe('completed');
  expect(outcome.content).toMatch(/memory is kept per user and this run has none.*--user/);
});
