import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { cleanEnv, eventually, runTs, startTs, type Started } from '../helpers/processes';
import { answer, call, startModel, toolResults } from '../helpers/scripted-model';
import { connectTestTemporal, type TestTemporal } from '../helpers/temporal';
import { itInSandbox } from '../helpers/sandbox';

/**
 * A workspace survives its worker: worker processes (`worker.ts`) with workspace directories of
 * their own (two machines, as far as the run can tell) and one blob store. The first is SIGKILLed
 * while a `bash` command of the run is under way; the second restores the last committed state
 * and runs the command again, so the file holds its line once and no earlier change is lost. The
 * CLI then reads the work back (`workspace <id> cat|ls|diff|export`), with no worker running.
 */
/** The kill test runs its command in bubblewrap; the AI SDK one needs none. */
const withSandbox = itInSandbox('workspace-cli.test');
let t: TestTemporal;
beforeAll(async () => {
  t = await connectTestTemporal();
});
afterAll(async () => {
  await t?.close();
});

withSandbox(
  'a worker killed mid-command: the run completes on another, the file holds the line once, the CLI shows it',
  async () => {
    const model = await startModel((req) => {
      const done = req.messages.filter((m) => m.role === 'tool').length;
      const steps: Array<[string, unknown]> = [
        ['write_file', { path: 'a.txt', content: 'one\n' }],
        ['bash', { command: 'echo two >> a.txt' }],
        ['bash', { command: 'touch started; sleep 4; echo three >> a.txt' }],
        ['read_file', { path: 'a.txt' }],
      ];
      return done < steps.length ? call(steps[done]) : answer(toolResults(req).at(-1)!);
    });
    const taskQueue = `workspace-${randomUUID()}`;
    const blobDir = mkdtempSync(join(tmpdir(), 'ws-e2e-blobs-'));
    const env = cleanEnv({
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
      TEMPORAL_NAMESPACE: 'default',
      AGENT_TASK_QUEUE: taskQueue,
      OPENAI_BASE_URL: model.baseURL,
      OPENAI_API_KEY: 'e2e',
      AGENT_MODEL: 'scripted',
      AGENT_BLOB_DIR: blobDir,
    });
    const dirA = mkdtempSync(join(tmpdir(), 'ws-e2e-a-'));
    const dirB = mkdtempSync(join(tmpdir(), 'ws-e2e-b-'));
    const workers: Started[] = [];
    try {
      workers.push(await startTs(['worker.ts'], { ...env, AGENT_WORKSPACE_DIR: dirA }, /Press Ctrl\+C/));
      const handle = await startAgentRun(
        t.client,
        { message: 'build it', tools: ['write_file', 'bash', 'read_file'] },
        { taskQueue, workflowId: `ws-e2e-${randomUUID()}` },
      );
      // The third call's command is under way on worker A: it has touched its marker.
      const started = () => readdirSync(dirA).some((d) => existsSync(join(dirA, d, 'started')));
      expect(await eventually(started, 60_000)).toBe(true);
      workers[0].kill('SIGKILL');
      workers.push(await startTs(['worker.ts'], { ...env, AGENT_WORKSPACE_DIR: dirB }, /Press Ctrl\+C/));

      const outcome = await runOutcome(handle);
      expect(outcome.status).toBe('completed');
      expect(outcome.content).toBe('1\tone\n2\ttwo\n3\tthree');
      const killed = outcome.toolExecutions[2];
      expect(killed.attempts).toBe(2);
      expect(killed.workerLosses).toBe(1);
      expect(killed.workspace).toMatchObject({ added: ['started'], changed: ['a.txt'] });
      workers[1].kill('SIGKILL');
      await workers[1].exited;

      // No worker runs now: the CLI reads the histories and the store.
      const cat = await runTs(['client.ts', 'workspace', handle.workflowId, 'cat', 'a.txt'], env);
      expect(cat.code).toBe(0);
      expect(cat.stdout).toBe('one\ntwo\nthree\n');
      const diff = await runTs(['client.ts', 'workspace', handle.workflowId, 'diff', '--from-step', '3'], env);
      expect(diff.stdout).toContain('+three');
      expect(diff.stdout).not.toContain('+two');
      const before = await runTs(['client.ts', 'workspace', handle.workflowId, 'cat', 'a.txt', '--step', '3'], env);
      expect(before.stdout).toBe('one\ntwo\n');

      // Deleting the run deletes its workspace states with it: 3 states (manifests) and 4 contents (a.txt thrice, the empty marker).
      const deleted = await runTs(['client.ts', 'delete', handle.workflowId], env);
      expect(deleted.stdout).toMatch(
        new RegExp(
          `^Deleted the run ${handle.workflowId}: its history, \\d+ stored payloads? and 7 workspace blobs\\.\\n$`,
        ),
      );
      expect(readdirSync(join(blobDir, 'scopes'))).toEqual([]);
    } finally {
      for (const w of workers) w.kill('SIGKILL');
      await model.close();
    }
  },
);

it('runs commands in an AI SDK sandbox session (just-bash) instead, with the same durability', async () => {
  const model = await startModel((req) => {
    const done = req.messages.filter((m) => m.role === 'tool').length;
    const steps: Array<[string, unknown]> = [
      ['write_file', { path: 'a.txt', content: 'one\n' }],
      ['bash', { command: 'echo two >> a.txt && mkdir -p out && cp a.txt out/b.txt' }],
      ['read_file', { path: 'out/b.txt' }],
    ];
    return done < steps.length ? call(steps[done]) : answer(toolResults(req).at(-1)!);
  });
  const taskQueue = `workspace-ai-sdk-${randomUUID()}`;
  const env = cleanEnv({
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
    TEST_WORKFLOW_BUNDLE: process.env.TEST_WORKFLOW_BUNDLE!,
    AGENT_TASK_QUEUE: taskQueue,
    OPENAI_BASE_URL: model.baseURL,
    AGENT_BLOB_DIR: mkdtempSync(join(tmpdir(), 'ws-e2e-blobs-')),
  });
  const worker = await startTs(['test/fixtures/ai-sdk-sandbox-worker.ts'], env, /ready/);
  try {
    const handle = await startAgentRun(
      t.client,
      { message: 'go', tools: ['write_file', 'bash', 'read_file'] },
      { taskQueue, workflowId: `ws-ai-sdk-${randomUUID()}` },
    );
    const outcome = await runOutcome(handle);
    expect(outcome.toolExecutions.map((e) => e.result)).toEqual([
      'wrote 4 bytes to a.txt',
      'exit code 0\n(no output)',
      '1\tone\n2\ttwo',
    ]);
    expect(outcome.toolExecutions[1].workspace).toMatchObject({ added: ['out/b.txt'], changed: ['a.txt'] });
    expect(worker.output().match(/sessions \d+/g)).toEqual(['sessions 1']);
    const cat = await runTs(['client.ts', 'workspace', handle.workflowId, 'cat', 'out/b.txt'], env);
    expect(cat.stdout).toBe('one\ntwo\n');
  } finally {
    worker.kill('SIGKILL');
    await model.close();
  }
});
