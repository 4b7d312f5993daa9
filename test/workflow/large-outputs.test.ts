import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { Client } from '@temporalio/client';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { encryptingDataConverter } from '../../src/codec/encryption-codec';
import { connectClient } from '../../src/connection/client-connection';
import { BlobNotFoundError } from '../../src/storage/blob-store';
import { blobStoreFromEnv } from '../../src/storage/blob-store-from-env';
import { payloadStorageFromEnv } from '../../src/storage/payload-storage';
import { removeStoredPayloads } from '../../src/storage/payload-removal';
import type { ChatRequest } from '../../src/testing/chat-request';
import { defineTool } from '../../src/tools/define-tool';
import { ToolRegistry } from '../../src/tools/registry';
import { answer, call, startModel } from '../helpers/scripted-model';
import { startS3Server } from '../helpers/s3-server';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/**
 * A tool output of 4 MB, twice Temporal's payload limit: it goes to the payload store (Temporal's
 * External Storage), the model sees a bounded view and pages on with read_tool_output, clients
 * read all of it, and the history stays small. With files and with S3 (a real S3-compatible server).
 */
const temporal = useTestTemporal();

const LINES = 64 * 1024;
/** 4 MiB of numbered lines: `line 000042 ...` (64 characters each, the newline included). */
const DOCUMENT = Array.from({ length: LINES }, (_, i) => `line ${String(i).padStart(6, '0')} ${'.'.repeat(51)}\n`).join(
  '',
);

const readDocument = defineTool({
  name: 'read_document',
  description: 'Reads the whole document',
  parameters: z.object({}),
  execute: async () => DOCUMENT,
});

/** Calls the document, checks the view it got, reads a page of the middle, then answers with what it read. */
function pagingModel(seen: string[]) {
  return startModel((req: ChatRequest) => {
    const results = req.messages.filter((m) => m.role === 'tool');
    if (results.length === 0) return call(['read_document', {}, 'call_doc']);
    if (results.length === 1) {
      seen.push(String(results[0].content));
      return call(['read_tool_output', { call_id: 'call_doc', offset: 64 * 30_000, length: 64 }]);
    }
    return answer(`The middle says: ${String(results[1].content).split('\n')[1]}`);
  });
}

/** The size of every file under `dir`. */
function filesUnder(dir: string): Array<{ path: string; bytes: number }> {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => ({ path: join(e.parentPath, e.name), bytes: statSync(join(e.parentPath, e.name)).size }));
}

async function runAndCheck(client: Client, taskQueue: string, seen: string[]) {
  const outcome = await runOutcome(
    await startAgentRun(
      client,
      { message: 'Read the document.', tools: ['read_document', 'read_tool_output'], maxToolResultTokens: 8000 },
      { taskQueue },
    ),
  );
  expect(outcome).toMatchObject({ status: 'completed', content: `The middle says: line 030000 ${'.'.repeat(51)}` });
  // The model saw a bounded view with the way on; the client has all 4 MB.
  expect(seen[0].length).toBeLessThan(33_000);
  expect(seen[0]).toMatch(/^line 000000/);
  expect(seen[0]).toMatch(/characters left out: the whole output is 4,194,304 characters \(4\.0 MB\)/);
  expect(seen[0]).toMatch(/Call read_tool_output with \{"call_id": "call_doc", "offset": 22400/);
  expect(outcome.toolExecutions[0].result).toBe(DOCUMENT);
  expect(outcome.toolExecutions[1].result).toMatch(/^\[characters 1920000 to 1920064 of 4194304/);
  const history = await client.workflow.getHandle(outcome.workflowId).fetchHistory();
  expect(Buffer.byteLength(JSON.stringify(history))).toBeLessThan(1_500_000);
  return outcome;
}

it('stores a 4 MB tool output in files: the model pages through a view, the client reads it all, the history stays small', async () => {
  const seen: string[] = [];
  const model = await pagingModel(seen);
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: model.baseURL,
    registry: new ToolRegistry([readDocument]),
  });
  await worker.runUntil(runAndCheck(temporal().client, taskQueue, seen));
  const stored = filesUnder(process.env.AGENT_PAYLOAD_STORE!);
  expect(stored.some((f) => f.bytes > 4_000_000)).toBe(true);
});

it('stores it in S3, encrypted before it is stored; images go to the same bucket', async () => {
  const s3 = await startS3Server();
  try {
    const storage = payloadStorageFromEnv(s3.env)!.storage;
    const keys = [{ id: 'k1', key: Buffer.alloc(32, 7) }];
    const seen: string[] = [];
    const model = await pagingModel(seen);
    const { worker, taskQueue } = await createTestWorker(temporal(), {
      baseURL: model.baseURL,
      registry: new ToolRegistry([readDocument]),
      payloadStorage: storage,
      encryptionKeys: keys,
    });
    const connection = await connectClient({ address: process.env.TEST_TEMPORAL_ADDRESS! });
    try {
      const client = new Client({
        connection: connection.connection,
        dataConverter: { ...encryptingDataConverter(keys), externalStorage: storage },
      });
      await worker.runUntil(runAndCheck(client, taskQueue, seen));
    } finally {
      await connection.close();
    }
    const objects = filesUnder(s3.directory).filter((f) => f.path.endsWith('_S3rver_object'));
    const big = objects.find((f) => f.bytes > 4_000_000);
    expect(big?.path).toContain(join('payloads', 'agents', 'v0'));
    expect(readFileSync(big!.path).includes('line 030000')).toBe(false);
    // Images go to the same bucket, by their hash.
    const blobs = blobStoreFromEnv(s3.env);
    const ref = await blobs.put(Buffer.from('an image'));
    expect(Buffer.from(await blobs.get(ref)).toString()).toBe('an image');
    expect(blobs.location).toBe('s3://payloads/agents/blobs');
    await expect(blobs.get(`sha256:${'0'.repeat(64)}`)).rejects.toThrow(BlobNotFoundError);
    // A run's workspace states: a scope of their own under blobs/scopes/, deleted whole.
    const scope = 'a'.repeat(64);
    const scoped = blobs.scope!(scope);
    const inScope = await scoped.put(Buffer.from('a file of the run'));
    await scoped.put(Buffer.from('another'));
    expect(scoped.location).toBe(`s3://payloads/agents/blobs/scopes/${scope}`);
    expect(Buffer.from(await scoped.get(inScope)).toString()).toBe('a file of the run');
    await expect(blobs.get(inScope)).rejects.toThrow(BlobNotFoundError);
    expect(await blobs.removeScope!(scope)).toBe(2);
    await expect(scoped.get(inScope)).rejects.toThrow(BlobNotFoundError);
    expect(Buffer.from(await blobs.get(ref)).toString()).toBe('an image');
    // A purge (memory delete --purge) removes a payload by its claim, which names its bucket and key.
    const [driver] = storage.drivers;
    const payload = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"to forget"') };
    const [claim] = await driver.store({} as Parameters<typeof driver.store>[0], [payload]);
    expect(await removeStoredPayloads(storage, [{ driverName: driver.name, claimData: claim.claimData }])).toEqual({
      removed: 1,
      kept: 0,
    });
    await expect(driver.retrieve({} as Parameters<typeof driver.retrieve>[0], [claim])).rejects.toThrow();
  } finally {
    await s3.close();
  }
});

it("reads tool outputs back when a tool call's arguments went to the payload store (a model writing 67 KB)", async () => {
  const text = 'A paragraph of the report. '.repeat(2500);
  const saveReport = defineTool({
    name: 'save_report',
    description: 'Saves a report',
    parameters: z.object({ text: z.string() }),
    execute: async ({ text: saved }) => `saved ${saved.length} characters`,
    // An activity, not a local one: its input is what the history stores.
    local: false,
  });
  const model = await startModel((req: ChatRequest) =>
    req.messages.some((m) => m.role === 'tool') ? answer('Saved.') : call(['save_report', { text }]),
  );
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: model.baseURL,
    registry: new ToolRegistry([saveReport]),
  });
  const client = temporal().client;
  const outcome = await worker.runUntil(async () =>
    runOutcome(
      await startAgentRun(
        client,
        { message: 'Save it.', tools: ['save_report'], maxPromptTokens: 100_000 },
        { taskQueue },
      ),
    ),
  );
  expect(outcome).toMatchObject({ status: 'completed', content: 'Saved.' });
  expect(outcome.toolExecutions[0]).toMatchObject({ name: 'save_report', result: `saved ${text.length} characters` });
});
