import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { Client } from '@temporalio/client';
import { connectClient } from '../../src/connection/client-connection';
import { freePort, startDevServer, type DevServer } from '../../src/connection/dev-server';
import { cleanEnv, eventually, runTs, startInteractive, startTs } from '../helpers/processes';
import { answer, closeScriptedModels, lastOf, startModel } from '../helpers/scripted-model';
import { startHttpApi } from '../helpers/http-api';

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
  it('fails no run and ends no waiting client: the model-call budget does not count the outage, and the client notices the return at once; a message whose caller gave up is not sent, and a resent one is answered once', async () => {
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
    const connection = await connectClient({ address: server.address });
    const client = new Client({ connection: connection.connection });
    const api = await startHttpApi({ client, taskQueue: env.AGENT_TASK_QUEUE! });
    const post = (path: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) =>
      fetch(`${api.base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
        signal,
      });
    const gaveUp = [`gave-up-${randomUUID()}`, `gave-up-${randomUUID()}`];
    try {
      // The outage (30 s) is longer than the model-call budget (10 s), as a 5-minute outage is
      // longer than the default 5m: that budget once ran out while the server was down.
      const run = startInteractive(['client.ts', 'run', 'slow hello', '--json', '--model-timeout', '10s'], env);
      expect(await eventually(() => llm.requests.length > 0)).toBe(true);
      // The file is written through a write-ahead log (DEV_SERVER_SQLITE_PRAGMAS), and the run survives the restart below.
      expect(existsSync(`${dbFilename}-wal`)).toBe(true);
      await server.stop();
      // Callers that give up during the outage: their messages must not be sent once it is over.
      const leaving = [
        post(
          '/api/chat',
          { id: gaveUp[0], messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'anyone?' }] }] },
          {},
          AbortSignal.timeout(3_000),
        ),
        post(`/conversations/${gaveUp[1]}/messages`, { message: 'anyone?' }, {}, AbortSignal.timeout(3_000)),
      ];
      for (const gone of leaving) await expect(gone).rejects.toThrow();
      // Longer than the SDK's own gRPC retries (about 20 s), which used to end the client here.
      await new Promise((r) => setTimeout(r, 30_000));
      server = await startDevServer({ port, dbFilename }, process.env);
      // grpc-js backed off for up to 2 minutes between reconnects; now a few seconds (see the bench for timings).
      await run.waitFor(/Temporal is reachable again\./, 60_000);
      const finished = await run.exited;
      expect(finished.stderr).toMatch(/Temporal is unreachable \(.*\); still waiting, for up to 10 min\./);
      expect(finished.code).toBe(0);
      expect(JSON.parse(finished.stdout)).toMatchObject({ status: 'completed', content: 'you said: slow hello' });

      // Nothing was sent for the callers that left: their conversations never started.
      for (const id of gaveUp) expect((await fetch(`${api.base}/conversations/${id}`)).status).toBe(404);
      // A client that resends (same Idempotency-Key, same UI message id) gets the first answer, once.
      const key = { 'idempotency-key': `key-${randomUUID()}` };
      const id = `resent-${randomUUID()}`;
      const answers = [];
      for (let i = 0; i < 2; i++)
        answers.push(await (await post(`/conversations/${id}/messages`, { message: 'once' }, key)).json());
      expect(answers[1]).toEqual(answers[0]);
      expect(answers[0]).toMatchObject({ turn: 1, content: 'you said: once' });
      const runs = [];
      for (let i = 0; i < 2; i++) runs.push(await (await post('/runs', { message: 'just once' }, key)).json());
      expect(runs[1]).toEqual(runs[0]);
      expect(runs[0]).toMatchObject({ status: 'completed', content: 'you said: just once' });
      expect(
        llm.requests.filter((r) => lastOf(r, 'user') === 'once' || lastOf(r, 'user') === 'just once'),
      ).toHaveLength(2);
    } finally {
      api.close();
      await connection.close();
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
      // Long enough for two attempts (a second apart) on a busy machine, where the command's own start takes seconds.
      const r = await runTs(['client.ts', 'run', 'hello', '--wait', '12s', '--json'], env);
      expect(r.code).toBe(3);
      const out = JSON.parse(r.stdout);
      expect(out).toMatchObject({ status: 'running', errorType: 'Client.StillRunning' });
      // The attempts as the command polls them (Temporal's describe): on a loaded machine the first
      // retry can start before the first poll, so it shows each attempt it sees, at least two.
      const shown = [
        ...r.stderr.matchAll(
          /model call 1 failed: could not reach the model server at (\S+) \(connection refused\); check OPENAI_BASE_URL and that the server is running \(attempt (\d)\/8, retrying (?:in \d+ s|now)\)/g,
        ),
      ];
      expect(new Set(shown.map((m) => m[1]))).toEqual(new Set([deadURL]));
      const attempts = shown.map((m) => Number(m[2]));
      expect(new Set(attempts).size).toBeGreaterThanOrEqual(2);
      expect(attempts).toEqual([...attempts].sort());
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

describe('a conversation whose only worker was killed', () => {
  it('answers reads with what Temporal knows (503, never a 500), keeps a message durably and answers it when a worker returns', async () => {
    const llm = await slowModel(0);
    const taskQueue = `dead-${randomUUID()}`;
    const env = cleanEnv({
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
      AGENT_TASK_QUEUE: taskQueue,
      OPENAI_BASE_URL: llm.baseURL,
      OPENAI_API_KEY: 'e2e',
    });
    const connection = await connectClient({ address: process.env.TEST_TEMPORAL_ADDRESS! });
    const client = new Client({ connection: connection.connection });
    const api = await startHttpApi({ client, taskQueue });
    let worker = await startTs(['worker.ts'], env, /Press Ctrl\+C/);
    const id = `dead-${randomUUID()}`;
    const json = { 'content-type': 'application/json' };
    try {
      const hello = await fetch(`${api.base}/conversations/${id}/messages`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ message: 'hello' }),
      });
      expect(hello.status).toBe(200);
      worker.kill('SIGKILL');
      await worker.exited;

      // At once, all together: reads say no worker answers (with what Temporal knows); the
      // message is kept, its stream waiting for the turn.
      const chat = new AbortController();
      const thread = `${id}-ag-ui`;
      const [status, messages, resume, sent, agUi] = await Promise.all([
        fetch(`${api.base}/conversations/${id}`),
        fetch(`${api.base}/api/chat/${id}/messages`),
        fetch(`${api.base}/api/chat/${id}/stream`),
        fetch(`${api.base}/api/chat`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({
            id,
            messages: [{ id: 'u2', role: 'user', parts: [{ type: 'text', text: 'are you there?' }] }],
          }),
          signal: chat.signal,
        }),
        // AG-UI too: a thread's run whose message no worker accepts waits for its turn, the message queued.
        fetch(`${api.base}/ag-ui`, {
          method: 'POST',
          headers: { ...json, accept: 'text/event-stream' },
          body: JSON.stringify({
            threadId: thread,
            runId: 'r1',
            messages: [{ id: 'a1', role: 'user', content: 'ag-ui here' }],
            tools: [],
            context: [],
            state: {},
            forwardedProps: {},
          }),
        }),
      ]);
      for (const read of [status, messages, resume]) {
        const body = await read.json();
        expect(read.status).toBe(503);
        expect(body).toMatchObject({
          errorType: 'Client.NoWorker',
          error: expect.stringContaining(`no worker answered for "${id}" (task queue "${taskQueue}")`),
          lastKnown: { status: 'RUNNING' },
        });
      }
      expect(sent.status).toBe(200);
      expect(agUi.status).toBe(200);
      const queued = await fetch(`${api.base}/conversations/${id}/messages`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ message: 'and this one?' }),
      });
      expect(queued.status).toBe(202);
      expect(await queued.json()).toMatchObject({ status: 'queued', errorType: 'Client.Queued' });

      // A worker comes back: both messages are answered, once each, and the waiting stream gets its turn.
      worker = await startTs(['worker.ts'], env, /Press Ctrl\+C/);
      const streamed = await sent.text();
      expect(streamed).toContain('you said: are you there?');
      const run = await agUi.text();
      expect(run).toContain('you said: ag-ui here');
      expect(run).toContain('RUN_FINISHED');
      expect(
        await eventually(async () => {
          const read = await fetch(`${api.base}/conversations/${id}`);
          const body = await read.json();
          return read.status === 200 && body.turns === 3;
        }, 60_000),
      ).toBe(true);
      const { messages: transcript } = await (await fetch(`${api.base}/conversations/${id}`)).json();
      expect(
        transcript.filter((m: { role: string }) => m.role === 'user').map((m: { content: string }) => m.content),
      ).toEqual(['hello', 'are you there?', 'and this one?']);
    } finally {
      api.close();
      worker.kill('SIGKILL');
      await worker.exited;
      await connection.close();
    }
  }, 180_000);
});
