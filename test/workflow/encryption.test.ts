import { randomBytes } from 'node:crypto';
import { Client } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { bundleWorkflowCode, type Worker } from '@temporalio/worker';
import { z } from 'zod';
import { encryptingDataConverter, parseEncryptionKeys } from '../../src/codec/encryption-codec';
import { decideApproval, readStatus, readTranscript } from '../../src/client/workflow-controls';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createAgentWorker } from '../../src/worker/create-agent-worker';
import { createHttpApi } from '../../src/http/http-api';
import { ClientError } from '../../src/client/client-error';
import { failingWorkflowTask } from '../../src/client/workflow-task-failure';
import { endConversation, sendMessage } from '../../src/client/conversations';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { defineTool } from '../../src/tools';
import { answer, call, lastOf, startModel } from '../helpers/scripted-model';
import { modelAt, useTestTemporal } from '../helpers/temporal';

/**
 * With AGENT_ENCRYPTION_KEYS, nothing a person or tool said is readable in the stored history:
 * the raw history bytes are searched for every secret the run handled.
 */
const temporal = useTestTemporal();

const keys = parseEncryptionKeys(`k2:${randomBytes(32).toString('base64')},k1:${randomBytes(32).toString('base64')}`);
const lookup = defineTool({
  name: 'lookup_secret',
  description: 'Looks a code name up',
  parameters: z.object({ name: z.string() }),
  execute: ({ name }) => `SECRET-RESULT-for-${name}`,
});

let bundle: string;
beforeAll(async () => {
  // Encrypting workers also encode failure messages, in workflow code too: a bundle with that converter.
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../src/workflows/bundle'),
    failureConverterPath: encryptingDataConverter(keys).failureConverterPath,
    logger: {
      log: () => undefined,
      trace: () => undefined,
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: () => undefined,
    },
  });
  bundle = code;
}, 90_000);

/** The workflow's history as stored: the protobuf bytes the server returns. */
async function rawHistory(client: Client, workflowId: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.getWorkflowExecutionHistory({
      namespace: 'default',
      execution: { workflowId },
      nextPageToken,
    });
    chunks.push(Buffer.from(proto.api.history.v1.History.encode(page.history!).finish()));
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return Buffer.concat(chunks);
}

async function encryptedWorker(taskQueue: string, baseURL: string): Promise<Worker> {
  const t = temporal();
  return createAgentWorker({
    connection: t.nativeConnection,
    taskQueue,
    model: modelAt(baseURL),
    registry: [lookup],
    encryptionKeys: keys,
    // Its ledgers would be encrypted: a fleet queue of its own (the other tests' are not).
    fleetTaskQueue: `${taskQueue}-fleet`,
    workflowBundle: { code: bundle },
    shutdownGraceTime: '1s',
  });
}

describe('payload encryption', () => {
  it('keeps messages, tool arguments, tool results, answers and approvals out of the stored history, and clients with the keys read them', async () => {
    const model = await startModel((req) => {
      const last = req.messages[req.messages.length - 1];
      if (last.role === 'tool') return { content: `SECRET-ANSWER: ${last.content}`, chunkDelayMs: 5 };
      return call(['lookup_secret', { name: `SECRET-ARG-${lastOf(req, 'user').slice(-5)}` }]);
    });
    const t = temporal();
    const client = new Client({ connection: t.client.connection, dataConverter: encryptingDataConverter(keys) });
    const taskQueue = `enc-${randomBytes(4).toString('hex')}`;
    const worker = await encryptedWorker(taskQueue, model.baseURL);
    const conversationId = `enc-conv-${randomBytes(4).toString('hex')}`;
    const { run, outcome } = await worker.runUntil(async () => {
      const run = await startAgentRun(
        client,
        { message: 'SECRET-MESSAGE please look up alpha', approvalTools: ['lookup_secret'] },
        { taskQueue },
      );
      for (;;) {
        const status = await client.workflow
          .getHandle(run.workflowId)
          .query<{ pendingApprovals: { callId: string }[] }>('status');
        if (status.pendingApprovals.length) {
          await decideApproval(client, run.workflowId, {
            callId: status.pendingApprovals[0].callId,
            approve: false,
            reason: 'SECRET-REASON not today',
          });
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      const outcome = await runOutcome(run);
      await sendMessage(
        client,
        conversationId,
        { message: 'SECRET-CONVERSATION about bravo' },
        { taskQueue, options: { tools: ['lookup_secret'] } },
      );
      await endConversation(client, conversationId);
      return { run, outcome };
    });
    // The client with the keys reads everything back.
    expect(outcome).toMatchObject({
      status: 'completed',
      content: expect.stringMatching(/^SECRET-ANSWER: .*SECRET-REASON not today/),
    });
    // The id tells nothing of the message either (ids are not encrypted).
    expect(run.workflowId).toMatch(/^agent-[0-9a-f]{12}$/);
    for (const id of [run.workflowId, conversationId]) {
      const bytes = await rawHistory(t.client, id);
      expect(bytes.length).toBeGreaterThan(1000);
      expect(bytes.toString('latin1')).not.toMatch(/SECRET|alpha|bravo/);
      expect(bytes.toString('latin1')).toContain('binary/encrypted');
    }
    // A client without the keys sees only ciphertext.
    const stranger = await t.client.workflow.getHandle(run.workflowId).fetchHistory();
    expect(JSON.stringify(stranger)).not.toMatch(/SECRET/);
  });

  it('never writes secrets to history, encrypted or not: the LLM API key, HTTP API tokens, MCP headers (see mcp-tools.test.ts)', async () => {
    const model = await startModel((req) =>
      req.messages[req.messages.length - 1].role === 'tool' ? answer('done') : call(['lookup_secret', { name: 'x' }]),
    );
    const t = temporal();
    const taskQueue = `secrets-${randomBytes(4).toString('hex')}`;
    const apiKey = 'sk-test-APIKEY-0123456789';
    const token = 'http-token-TOKEN-0123456789';
    const worker = await createAgentWorker({
      connection: t.nativeConnection,
      taskQueue,
      model: { ...modelAt(model.baseURL), apiKey },
      registry: [lookup],
      workflowBundle: { code: bundle },
      shutdownGraceTime: '1s',
    });
    const api = createHttpApi({ client: t.client, taskQueue, access: { tokens: [token] } });
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
    try {
      const { port } = api.address() as { port: number };
      const body = await worker.runUntil(async () => {
        const res = await fetch(`http://127.0.0.1:${port}/runs`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
          body: JSON.stringify({ message: 'look it up' }),
        });
        return (await res.json()) as { workflowId: string; content: string };
      });
      expect(body.content).toBe('done');
      // The key did reach the LLM endpoint, so it was in use.
      expect(model.requests.length).toBeGreaterThan(0);
      const text = (await rawHistory(t.client, body.workflowId)).toString('latin1');
      expect(text).toContain('look it up');
      expect(text).not.toContain('APIKEY');
      expect(text).not.toContain('TOKEN-0123456789');
    } finally {
      api.closeAllConnections();
      api.close();
    }
  });

  it('refuses a run a client without the keys started: its tasks fail, readably, naming the setting, and nothing runs; allowPlaintext lets it run', async () => {
    const model = await startModel(() => answer('SHOULD-NOT-RUN'));
    const t = temporal();
    const taskQueue = `strict-${randomBytes(4).toString('hex')}`;
    const worker = await encryptedWorker(taskQueue, model.baseURL);
    const handle = await startAgentRun(t.client, { message: 'plaintext from a client without keys' }, { taskQueue });
    const failure = await worker.runUntil(async () => {
      for (;;) {
        const failed = (await handle.fetchHistory()).events!.find((e) => e.workflowTaskFailedEventAttributes)
          ?.workflowTaskFailedEventAttributes?.failure;
        if (failed) return failed;
        await new Promise((r) => setTimeout(r, 200));
      }
    });
    // Readable by anyone, the client without keys included: not an encoded failure.
    expect(failure.message).toMatch(
      /^a payload is not encrypted, and this worker requires encryption \(AGENT_ENCRYPTION_KEYS is set\).*AGENT_ENCRYPTION_ALLOW_PLAINTEXT=1/,
    );
    expect(failure.encodedAttributes).toBeFalsy();
    expect(model.requests).toHaveLength(0);

    // The waiting client is told why instead of waiting in silence.
    expect(await failingWorkflowTask(t.client, handle.workflowId)).toBe(failure.message);
    await handle.terminate('test done');

    // During a migration the workers take both; what they write is encrypted all the same.
    const lenient = await createAgentWorker({
      connection: t.nativeConnection,
      taskQueue,
      model: modelAt(model.baseURL),
      registry: [lookup],
      encryptionKeys: keys,
      allowPlaintext: true,
      fleetTaskQueue: `${taskQueue}-fleet`,
      workflowBundle: { code: bundle },
      shutdownGraceTime: '1s',
    });
    const migrating = await startAgentRun(t.client, { message: 'plaintext, during a migration' }, { taskQueue });
    const withKeys = new Client({ connection: t.client.connection, dataConverter: encryptingDataConverter(keys) });
    const outcome = await lenient.runUntil(runOutcome(withKeys.workflow.getHandle(migrating.workflowId)));
    expect(outcome).toMatchObject({ status: 'completed', content: 'SHOULD-NOT-RUN' });
  });

  it('a worker with other keys writes nothing its peers cannot read into an open conversation, and the sender gets a sentence', async () => {
    const model = await startModel((req) => answer(`you said: ${lastOf(req, 'user')}`));
    const t = temporal();
    const client = new Client({ connection: t.client.connection, dataConverter: encryptingDataConverter(keys) });
    const taskQueue = `wrongkey-${randomBytes(4).toString('hex')}`;
    const id = `wrongkey-conv-${randomBytes(4).toString('hex')}`;
    const good = await encryptedWorker(taskQueue, model.baseURL);
    await good.runUntil(sendMessage(client, id, { message: 'first' }, { taskQueue }));
    // A worker deployed with the wrong keys takes the next message.
    const wrongKeys = parseEncryptionKeys(`k9:${randomBytes(32).toString('base64')}`);
    const wrong = await createAgentWorker({
      connection: t.nativeConnection,
      taskQueue,
      model: modelAt(model.baseURL),
      registry: [lookup],
      encryptionKeys: wrongKeys,
      fleetTaskQueue: `${taskQueue}-fleet`,
      workflowBundle: { code: bundle },
      shutdownGraceTime: '1s',
    });
    const refused = await wrong.runUntil(
      sendMessage(client, id, { message: 'second' }, { taskQueue }, { budgetMs: 1_000 }).catch((err: Error) => err),
    );
    // Not lost: queued durably (a Signal), to be taken once a worker can run the conversation.
    expect(refused).toBeInstanceOf(ClientError);
    expect((refused as ClientError).errorType).toBe('Client.Queued');
    expect((refused as Error).message).toMatch(
      new RegExp(
        `^"${id}" cannot answer now: its workers fail its workflow tasks \\(a payload is encrypted with key "k2", which is not among the configured keys \\(k9\\).*The message is queued`,
      ),
    );
    // Nothing under the wrong key in the history: no payload the right workers cannot decrypt.
    const stored = (await rawHistory(t.client, id)).toString('latin1');
    expect(stored).toMatch(/encryption-key-id[\s\S]{1,3}k2/); // the right key, as a control
    expect(stored).not.toMatch(/encryption-key-id[\s\S]{1,3}k9/);
    // The right workers carry on with the conversation.
    const { again, transcript } = await (
      await encryptedWorker(taskQueue, model.baseURL)
    ).runUntil(async () => {
      // Its failed workflow task is retried on the right workers first; then messages go through.
      while (await failingWorkflowTask(client, id)) await new Promise((r) => setTimeout(r, 200));
      const again = await sendMessage(client, id, { message: 'third' }, { taskQueue });
      return { again, transcript: await readTranscript(client, id) };
    });
    expect(again).toMatchObject({ status: 'completed', content: 'you said: third' });
    // The queued message was answered first, in its place.
    expect(transcript.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'first',
      'second',
      'third',
    ]);
  });

  it('a client without the keys, and a run whose tasks fail, get sentences (HTTP 409), never a raw message or a 500', async () => {
    const model = await startModel(() => answer('SECRET-ANSWER'));
    const t = temporal();
    const withKeys = new Client({ connection: t.client.connection, dataConverter: encryptingDataConverter(keys) });
    const taskQueue = `keyless-${randomBytes(4).toString('hex')}`;
    const worker = await encryptedWorker(taskQueue, model.baseURL);
    const api = createHttpApi({ client: t.client, taskQueue });
    api.listen(0, '127.0.0.1');
    await once(api, 'listening');
    const base = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    try {
      await worker.runUntil(async () => {
        // An encrypted run, finished, asked about by a client (and an API) without the keys.
        const done = await startAgentRun(withKeys, { message: 'SECRET-MESSAGE' }, { taskQueue });
        await runOutcome(done);
        const keyless = await readStatus(t.client, done.workflowId).catch((err: Error) => err);
        expect(keyless).toBeInstanceOf(ClientError);
        expect(keyless).toMatchObject({
          errorType: 'Client.Undecodable',
          message: expect.stringMatching(
            new RegExp(
              `^"${done.workflowId}" is encrypted \\(key k2\\), and this client has no keys: set AGENT_ENCRYPTION_KEYS to the workers' keys`,
            ),
          ),
        });
        // Every read over HTTP answers the same sentence (409), the live events too (they waited for ever).
        for (const path of [`/runs/${done.workflowId}`, `/runs/${done.workflowId}/events`]) {
          const viaHttp = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(20_000) });
          expect([path, viaHttp.status]).toEqual([path, 409]);
          expect(await viaHttp.json()).toMatchObject({
            errorType: 'Client.Undecodable',
            error: expect.stringMatching(/is encrypted \(key k2\), and this client has no keys/),
          });
        }

        // An open conversation, read by query: the workers refuse the keyless query's plaintext
        // argument; that is the same sentence too, on every read.
        const conv = `enc-conv-${randomBytes(4).toString('hex')}`;
        await sendMessage(withKeys, conv, { message: 'SECRET-MESSAGE' }, { taskQueue });
        for (const path of [`/conversations/${conv}`, `/conversations/${conv}/events`, `/api/chat/${conv}/messages`]) {
          const open = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(20_000) });
          expect([path, open.status]).toEqual([path, 409]);
          expect(await open.json()).toMatchObject({ errorType: 'Client.Undecodable' });
        }
        await endConversation(withKeys, conv);

        // A run whose tasks the workers refuse (a keyless client started it): why, and what is known.
        const stuck = await startAgentRun(t.client, { message: 'plaintext' }, { taskQueue });
        while (!(await failingWorkflowTask(t.client, stuck.workflowId))) await new Promise((r) => setTimeout(r, 200));
        const status = await readStatus(t.client, stuck.workflowId).catch((err: Error) => err);
        expect(status).toBeInstanceOf(ClientError);
        expect(status).toMatchObject({
          errorType: 'Client.WorkerFailing',
          message: expect.stringMatching(
            new RegExp(
              `^"${stuck.workflowId}" cannot answer now: its workers fail its workflow tasks \\(a payload is not encrypted, and this worker requires encryption`,
            ),
          ),
        });
        const stuckHttp = await fetch(`${base}/runs/${stuck.workflowId}`);
        expect(stuckHttp.status).toBe(409);
        const body = await stuckHttp.json();
        expect(body).toMatchObject({ errorType: 'Client.WorkerFailing', lastKnown: { status: 'RUNNING' } });
        expect(body.error).toMatch(/cannot answer now/);
        await stuck.terminate('test done');
      });
    } finally {
      api.close();
    }
  });

  it('(control) without keys the same search finds the content, so the test above can fail', async () => {
    const model = await startModel((req) =>
      req.messages[req.messages.length - 1].role === 'tool'
        ? answer('SECRET-ANSWER')
        : call(['lookup_secret', { name: 'SECRET-ARG' }]),
    );
    const t = temporal();
    const taskQueue = `plain-${randomBytes(4).toString('hex')}`;
    const worker = await createAgentWorker({
      connection: t.nativeConnection,
      taskQueue,
      model: modelAt(model.baseURL),
      registry: [lookup],
      workflowBundle: { code: bundle },
      shutdownGraceTime: '1s',
    });
    const run = await worker.runUntil(async () => {
      const handle = await startAgentRun(t.client, { message: 'SECRET-MESSAGE' }, { taskQueue });
      await runOutcome(handle);
      return handle;
    });
    const text = (await rawHistory(t.client, run.workflowId)).toString('latin1');
    for (const secret of ['SECRET-MESSAGE', 'SECRET-ARG', 'SECRET-RESULT-for-SECRET-ARG', 'SECRET-ANSWER'])
      expect(text).toContain(secret);
  });
});
