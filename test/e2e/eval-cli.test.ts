import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { cleanEnv, runTs, startTs } from '../helpers/processes';
import { answer, call, lastOf, startModel } from '../helpers/scripted-model';

/** `client.ts eval` next to worker.ts: real runs per case, scored; a judge; a comparison with another model. */
let env: NodeJS.ProcessEnv;
let worker: Awaited<ReturnType<typeof startTs>>;
let closeModel: () => Promise<void>;
const dir = mkdtempSync(join(tmpdir(), 'durable-agents-eval-'));

beforeAll(async () => {
  const model = await startModel((req) => {
    const user = lastOf(req, 'user');
    if (String(req.messages[0]?.content).startsWith('You grade'))
      return answer(JSON.stringify({ pass: /Paris/.test(user.split('The answer:')[1] ?? ''), reason: 'checked' }));
    if (req.messages.some((m) => m.role === 'tool')) return answer(`It is ${lastOf(req, 'tool')}.`);
    if (/2\+2/.test(user)) return call(['add', { a: 2, b: 2 }]);
    if (/France/.test(user)) return answer('Paris.');
    return answer(req.model === 'smarter' ? 'Blue.' : 'Green.');
  });
  closeModel = () => model.close();
  env = cleanEnv({
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
    AGENT_TASK_QUEUE: `e2e-eval-${randomUUID()}`,
    OPENAI_BASE_URL: model.baseURL,
    OPENAI_API_KEY: 'e2e',
    AGENT_MODEL: 'scripted',
  });
  worker = await startTs(['worker.ts'], env, /Press Ctrl\+C/);
});

afterAll(async () => {
  worker?.kill('SIGKILL');
  await closeModel?.();
  rmSync(dir, { recursive: true, force: true });
});

const dataset = [
  { input: 'What is the capital of France?', expected: { contains: 'paris' }, judge: 'names the capital' },
  { input: 'What is 2+2?', expected: { regex: '\\b4\\b', toolCalls: ['add'] } },
  { name: 'sky', input: 'What color is the sky?', expected: { contains: 'blue' } },
];

it('eval --min-pass 0.5 --json reports total 3, passed 2, and exits 0; the failing case says why', async () => {
  const file = join(dir, 'cases.jsonl');
  writeFileSync(file, dataset.map((c) => JSON.stringify(c)).join('\n'));
  const r = await runTs(['client.ts', 'eval', file, '--min-pass', '0.5', '--json'], env);
  expect(r.code).toBe(0);
  const lines = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(lines.at(-1)).toMatchObject({
    total: 3,
    passed: 2,
    failed: 1,
    passRate: 0.667,
    usage: { totalTokens: expect.any(Number) },
  });
  const [france, sum, sky] = lines;
  expect(france).toMatchObject({ name: 'line 1', pass: true, judge: { pass: true, reason: 'checked' } });
  expect(sum).toMatchObject({ pass: true, content: 'It is 4.' });
  expect(sky).toMatchObject({ name: 'sky', pass: false, reasons: ['the answer "Green." does not contain "blue"'] });
  // The runs are ordinary runs, tagged with the eval.
  const evalId = lines.at(-1).evalId as string;
  expect(sky.workflowId).toBe(`${evalId}-3`);
  const listed = await runTs(['client.ts', 'status', sky.workflowId, '--json'], env);
  expect(JSON.parse(listed.stdout)).toMatchObject({ state: 'completed' });

  // Under the default --min-pass 1 the same eval fails the command.
  const strict = await runTs(['client.ts', 'eval', file], env);
  expect(strict.code).toBe(1);
  expect(strict.stdout).toMatch(/^CASE +RESULT$/m);
  expect(strict.stdout).toMatch(/^sky +✗ the answer "Green\." does not contain "blue"$/m);
  expect(strict.stdout).toMatch(/^2\/3 passed \(67%\), \d+ tokens$/m);
});

it('eval --compare runs the cases with another model side by side', async () => {
  const file = join(dir, 'sky.jsonl');
  writeFileSync(file, JSON.stringify(dataset[2]));
  const r = await runTs(['client.ts', 'eval', file, '--compare', 'smarter', '--min-pass', '0'], env);
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^CASE +A: the defaults +B: model smarter$/m);
  expect(r.stdout).toMatch(/^sky +✗ the answer "Green\." does not contain "blue" +✓ Blue\.$/m);
  expect(r.stdout).toMatch(/^A \(the defaults\): 0\/1 passed/m);
  expect(r.stdout).toMatch(/^B \(model smarter\): 1\/1 passed/m);
  // Each case is said as it ends, before the table.
  expect(r.stderr).toMatch(/^✗ A sky \(1\/2, \S+-a-1\)$/m);
  expect(r.stderr).toMatch(/^✓ B sky \(2\/2, \S+-b-1\)$/m);
  // Both sides are tagged with the eval's id, as the command says: the UI lists them together.
  const evalId = /^Eval (\S+):/m.exec(r.stderr)![1];
  const connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  try {
    const { count } = await new Client({ connection }).workflow.count(
      `AgentEval = '${evalId}' AND WorkflowType = 'agentWorkflow'`,
    );
    expect(count).toBe(2);
  } finally {
    await connection.close();
  }
  const bad = await runTs(['client.ts', 'eval', join(dir, 'missing.jsonl')], env);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/cannot read .*missing\.jsonl: ENOENT/);
});

it('rerun re-runs a recorded run with another model and says where it diverged; eval --from-runs makes runs a dataset', async () => {
  const run = JSON.parse((await runTs(['client.ts', 'run', 'What color is the sky?', '--json'], env)).stdout);
  const r = await runTs(['client.ts', 'rerun', run.workflowId, '--model', 'smarter', '--json'], env);
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({
    status: 'completed',
    content: 'Blue.',
    rerunOf: run.workflowId,
    fromStep: 1,
    diverged: { step: 1, recorded: 'Green.', rerun: 'Blue.' },
  });
  const text = await runTs(['client.ts', 'rerun', run.workflowId, '--model', 'smarter'], env);
  expect(text.stdout).toMatch(/Diverged at model call 1:\n {2}recorded: Green\.\n {2}re-run: {3}Blue\./);
  const bad = await runTs(['client.ts', 'rerun', run.workflowId, '--from-step', '3'], env);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/--from-step must be between 1 and 1/);

  const saved = join(dir, 'from-runs.jsonl');
  const e = await runTs(
    [
      'client.ts',
      'eval',
      '--from-runs',
      `WorkflowId = '${run.workflowId}'`,
      '--save-dataset',
      saved,
      '--min-pass',
      '0',
      '--json',
    ],
    env,
  );
  expect(e.code).toBe(0);
  expect(JSON.parse(e.stdout.trim().split('\n').at(-1)!)).toMatchObject({ total: 1 });
  expect(JSON.parse(readFileSync(saved, 'utf8').trim())).toMatchObject({
    name: run.workflowId,
    input: { message: 'What color is the sky?' },
    judge: expect.stringContaining('Green.'),
  });
});
