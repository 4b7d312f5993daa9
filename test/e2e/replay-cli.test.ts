import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevServer, type DevServer } from '../../src/connection/dev-server';
import { cleanEnv, ROOT, runTs, startTs } from '../helpers/processes';
import { answer, call, startModel } from '../helpers/scripted-model';

/**
 * `replay` as a deploy gate, through client.ts: histories of real runs fetched from a server (one
 * of its own, so nothing another test recorded there is replayed) and JSON histories from a folder.
 */
let server: DevServer;
let dir: string;
beforeAll(async () => {
  server = await startDevServer({}, process.env);
  dir = mkdtempSync(join(tmpdir(), 'durable-agents-replay-'));
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it('replay --since 1h replays the runs of a server and exits 0', async () => {
  const model = await startModel((req) =>
    req.messages.some((m) => m.role === 'tool') ? answer('done') : call(['add', { a: 1, b: 2 }]),
  );
  const env = cleanEnv({
    TEMPORAL_ADDRESS: server.address,
    AGENT_TASK_QUEUE: `replay-${randomUUID()}`,
    OPENAI_BASE_URL: model.baseURL,
    OPENAI_API_KEY: 'e2e',
    AGENT_MODEL: 'scripted',
  });
  const worker = await startTs(['worker.ts'], env, /Press Ctrl\+C/);
  try {
    for (const n of [1, 2]) expect((await runTs(['client.ts', 'run', `add ${n}`, '--json'], env)).code).toBe(0);
    expect((await runTs(['client.ts', 'send', 'replay-conv', 'hello', '--json'], env)).code).toBe(0);
  } finally {
    worker.kill('SIGKILL');
  }
  const r = await runTs(['client.ts', 'replay', '--since', '1h', '--json'], env);
  expect(r.code).toBe(0);
  const report = JSON.parse(r.stdout);
  expect(report.replayed).toBeGreaterThanOrEqual(3);
  expect(report.failed).toEqual([]);
  const text = await runTs(['client.ts', 'replay', '--since', '1h'], env);
  expect(text.stdout).toMatch(/^✓ replay-conv \(conversationWorkflow\)$/m);
  expect(text.stdout).toMatch(/Replayed \d+ histories: all replay with this code/);
  // A query the server refuses says why, as bad usage.
  const bad = await runTs(['client.ts', 'replay', '--query', "NoSuchAttribute = 'x'"], env);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/--query: Temporal refused the query: .*NoSuchAttribute/);
});

it('replay --histories exits 1 and names the file whose recorded activity type changed', async () => {
  const recorded = join(ROOT, 'test', 'histories', 'calculator-chain.json');
  // Named by workflow id, as `temporal workflow show -w <id> --output json > <id>.json` saves them.
  copyFileSync(recorded, join(dir, 'agent-replay-calculator-chain.json'));
  const changed = JSON.parse(readFileSync(recorded, 'utf8'));
  const scheduled = changed.events.find((e: Record<string, any>) => e.activityTaskScheduledEventAttributes);
  scheduled.activityTaskScheduledEventAttributes.activityType.name = 'callSomethingElse';
  const changedFile = join(dir, 'agent-changed.json');
  writeFileSync(changedFile, JSON.stringify(changed));
  const r = await runTs(['client.ts', 'replay', '--histories', dir, '--json'], cleanEnv());
  expect(r.code).toBe(1);
  const report = JSON.parse(r.stdout);
  expect(report.replayed).toBe(2);
  expect(report.failed).toEqual([
    {
      workflowId: 'agent-changed',
      runId: expect.any(String),
      workflowType: 'agentWorkflow',
      file: changedFile,
      error: expect.stringMatching(/[Nn]ondetermin/),
    },
  ]);
  const text = await runTs(['client.ts', 'replay', '--histories', dir], cleanEnv());
  expect(text.code).toBe(1);
  expect(text.stdout).toContain(`✗ ${changedFile} (agentWorkflow): `);
  expect(text.stdout).toMatch(/Replayed 2 histories: 1 failed/);
  // Another workflow's history is left out, not counted as broken by this code.
  const foreign = JSON.parse(readFileSync(recorded, 'utf8'));
  foreign.events[0].workflowExecutionStartedEventAttributes.workflowType.name = 'billingWorkflow';
  writeFileSync(join(dir, 'billing-1.json'), JSON.stringify(foreign));
  const mixed = await runTs(['client.ts', 'replay', '--histories', dir, '--json'], cleanEnv());
  expect(JSON.parse(mixed.stdout)).toMatchObject({
    replayed: 2,
    skipped: [{ workflowId: 'billing-1', workflowType: 'billingWorkflow' }],
  });
  writeFileSync(join(dir, 'empty.json'), JSON.stringify({ events: [] }));
  const empty = await runTs(['client.ts', 'replay', '--histories', dir], cleanEnv());
  expect(empty.code).toBe(2);
  expect(empty.stderr).toMatch(/empty\.json is not a whole workflow history/);
  const missing = await runTs(['client.ts', 'replay', '--histories', join(dir, 'nope')], cleanEnv());
  expect(missing.code).toBe(2);
  expect(missing.stderr).toMatch(/--histories: cannot read .*nope: ENOENT/);
});
