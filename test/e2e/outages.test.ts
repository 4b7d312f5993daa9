import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { connectClient } from '../../src/connection/client-connection';
import { freePort, startDevServer, type DevServer } from '../../src/connection/dev-server';
import { cleanEnv, eventually, runTs, startInteractive, startTs } from '../helpers/processes';
import { answer, closeScriptedModels, lastOf, startModel } from '../helpers/scripted-model';

/** Faults while runs are in flight: the Temporal server goes away, the LLM is down, a worker dies. */

afterEach(closeScriptedModels);

/** Answers "slow ..." after `slowMs`, everything else at once. */
function slowModel(slowMs: number) {
  return startModel(async (req) => {
    // unref: a reply still pending when the test ends must not keep jest waiting for it.
    if (lastOf(req, 'user').startsWith('slow')) await new Promise((r) => setTimeout(r, slowMs).unref());
    return answer(`you said: ${lastOf(req, 'user')}`);
  });
}

describe('a Temporal server outage', () => {
  it('fails no run and ends no waiting client: the model-call budget does not count the outage, and the client notices the return at once', async () => {
    const port = await freePort();
    const dbFilename = `/tmp/durable-agents-outage-${randomUUID()}.db`;
    let server: DevServer = await startDevServer({ port, dbFilename }, process.env);
    const llm = await slowModel(6_000);
    const env = cleanEnv({
      TEMPORAL_ADDRESS: server.address,
      AGENT_TASK_QUEUE: `outage-${randomUUID()}`,
      OPENAI_BASE_URL: llm.baseURL,
      OPENAI_API_KEY: 'e2e',
    });
    const worker = await startTs(['worker.ts'], env, /Press Ctrl\+C/);
    try {
      // The outage (30 s) is longer than the model-call budget (10 s), as a 5-minute outage is
      // longer than the default 5m: that budget once ran out while the server was down.
      const run = startInteractive(['client.ts', 'run', 'slow hello', '--json', '--model-timeout', '10s'], env);
      expect(await eventually(() => llm.requests.length > 0)).toBe(true);
      await server.stop();
      // Longer than the SDK's own gRPC retries (about 20 s), which used to end the client here.
      await new Promise((r) => setTimeout(r, 30_000));
      server = await startDevServer({ port, dbFilename }, process.env);
      // grpc-js backed off for up to 2 minutes between reconnects; now a few seconds (see the bench for timings).
      await run.waitFor(/Temporal is reachable again\./, 60_000);
      const finished = await run.exited;
      expect(finished.stderr).toMatch(/Temporal is unreachable \(.*\); still waiting, for up to 10 min\./);
      expect(finished.code).toBe(0);
      expect(JSON.parse(finished.stdout)).toMatchObject({ status: 'completed', content: 'you said: slow hello' });
    } finally {
      worker.kill('SIGKILL');
      await worker.exited;
      await server.stop();
    }
  });
});

describe('while the LLM is down', () => {
  it('run shows each failed attempt and stops waiting when --wait runs out (exit 3), leaving the run going', async () => {
    const deadURL = `http://127.0.0.1:${await freePort()}/v1`;
    const env = cleanEnv({
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
      AGENT_TASK_QUEUE: `down-${randomUUID()}`,
      OPENAI_BASE_URL: deadURL,
      OPENAI_API_KEY: 'e2e',
    });
    const worker = await startTs(['worker.ts'], env, /Press Ctrl\+C/);
    try {
      const r = await runTs(['client.ts', 'run', 'hello', '--wait', '6s', '--json'], env);
      expect(r.code).toBe(3);
      const out = JSON.parse(r.stdout);
      expect(out).toMatchObject({ status: 'running', errorType: 'Client.StillRunning' });
      expect(r.stderr).toContain(
        `model call 1 failed: could not reach the model server at ${deadURL} (connection refused); check OPENAI_BASE_URL and that the server is running (attempt 1/8, retrying`,
      );
      expect(r.stderr).toMatch(/\(attempt 2\/8, retrying in \d+ s\)/);
      const connection = await connectClient({ address: process.env.TEST_TEMPORAL_ADDRESS! });
      await new Client({ connection: connection.connection }).workflow.getHandle(out.workflowId).terminate('test done');
      await connection.close();
    } finally {
      worker.kill('SIGKILL');
      await worker.exited;
    }
  });
});

describe('a worker that dies mid-call', () => {
  it('has its model call retried by another worker after the heartbeat timeout, not the 5-minute call limit', async () => {
    const llm = await slowModel(60_000);
    const env = cleanEnv({
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
      AGENT_TASK_QUEUE: `crash-${randomUUID()}`,
      OPENAI_BASE_URL: llm.baseURL,
      OPENAI_API_KEY: 'e2e',
    });
    const first = await startTs(['worker.ts'], env, /Press Ctrl\+C/);
    const run = startInteractive(['client.ts', 'run', 'slow question', '--json', '--max-time', '2m'], env);
    expect(await eventually(() => llm.requests.length === 1)).toBe(true);
    const second = await startTs(['worker.ts'], env, /Press Ctrl\+C/);
    try {
      first.kill('SIGKILL');
      await first.exited;
      // About 9 s: the 8 s heartbeat timeout, the 1 s retry interval, the dead worker's 3 s sticky
      // queue (the bench has the timings). Without heartbeats it would wait out the 5-minute call.
      expect(await eventually(() => llm.requests.length === 2, 45_000)).toBe(true);
    } finally {
      run.interrupt();
      await run.exited;
      second.kill('SIGKILL');
      await second.exited;
    }
  });
});
