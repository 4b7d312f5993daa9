import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@temporalio/client';
import { connectClient, type ClientConnection } from '../../src/connection/client-connection';
import { NativeConnection } from '@temporalio/worker';
import { addUsage, noUsage } from '../../src/core/messages/usage';
import type { AgentEvent } from '../../src/core/events/agent-events';
import { streamEvents } from '../../src/client/event-stream';
import { createAgentWorker } from '../../src/worker/create-agent-worker';
import { readTranscript } from '../../src/client/workflow-controls';
import { conversationStatus, sendMessage } from '../../src/client/conversations';
import { forkConversation, listBranches, switchBranch } from '../../src/client/branches';
import { startDevServer, type DevServer } from '../../src/connection/dev-server';
import { installRuntimeLogging } from '../../src/telemetry/logging';
import { answer, call, closeScriptedModels, lastOf, startModel } from '../helpers/scripted-model';
import { modelAt } from '../helpers/temporal';
import { testRegistry } from '../helpers/test-tools';
import { defineAgent } from '../../src/agents/define-agent';
import { add } from '../../scripts/demo-agents';

/**
 * Continue-as-new is Temporal's call (`continueAsNewSuggested`); a dev server of our own with a
 * tiny history threshold makes it suggest one every few turns.
 */
let server: DevServer;
let connection: ClientConnection;
let native: NativeConnection;

beforeAll(async () => {
  installRuntimeLogging('ERROR');
  server = await startDevServer(
    {
      logFile: join(tmpdir(), `can-${randomUUID()}.log`),
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 30 },
    },
    process.env,
  );
  connection = await connectClient({ address: server.address });
  native = await NativeConnection.connect({ address: server.address });
});
afterAll(async () => {
  await connection?.close();
  await native?.close();
  await server?.stop();
});
afterEach(closeScriptedModels);

it('continues as new at turn boundaries with memory, counters and usage intact, under the same id', async () => {
  // Every third message asks for a tool, so tool groups cross run boundaries too.
  const model = await startModel((req) => {
    const last = req.messages[req.messages.length - 1];
    const n = Number(lastOf(req, 'user').replace('turn ', ''));
    if (last.role === 'user' && n % 3 === 0) return call(['add', { a: n, b: 1 }]);
    return answer(last.role === 'tool' ? `sum ${last.content}` : `ok ${n}`);
  });
  const client = new Client({ connection: connection.connection });
  const taskQueue = `can-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: native,
    taskQueue,
    registry: testRegistry(),
    model: modelAt(model.baseURL),
    workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! },
    shutdownGraceTime: '1s',
  });
  const id = `conv-${randomUUID()}`;
  const turns = 12;
  await worker.runUntil(async () => {
    let usage = noUsage();
    // A subscriber from the first event on, reading while the conversation continues as new.
    const seen: AgentEvent[] = [];
    const stop = new AbortController();
    let reading: Promise<void> | undefined;
    for (let n = 1; n <= turns; n++) {
      const result = await sendMessage(
        client,
        id,
        { message: `turn ${n}` },
        { taskQueue, options: { system: 'sys', memoryWindow: 4 } },
      );
      expect(result).toMatchObject({ status: 'completed', turn: n, content: n % 3 === 0 ? `sum ${n + 1}` : `ok ${n}` });
      usage = addUsage(usage, result.usage);
      reading ??= (async () => {
        for await (const e of streamEvents(client, id, { after: -1, signal: stop.signal })) seen.push(e);
      })();
    }
    const finished = () => seen[seen.length - 1]?.type === 'turn_completed' && seen[seen.length - 1]?.turn === turns;
    for (let i = 0; i < 100 && !finished(); i++) await new Promise((r) => setTimeout(r, 100));
    stop.abort();
    await reading;
    expect(seen.map((e) => e.offset)).toEqual(seen.map((_, i) => i));
    expect(seen.filter((e) => e.type === 'turn_completed').map((e) => e.turn)).toEqual(
      Array.from({ length: turns }, (_, i) => i + 1),
    );
    // A late subscriber from the beginning reads the same events from the latest run (carried across runs).
    const again: AgentEvent[] = [];
    for await (const e of streamEvents(client, id, {
      after: -1,
      until: (e) => e.type === 'turn_completed' && e.turn === turns,
    }))
      again.push(e);
    expect(again).toEqual(seen);
    const status = await conversationStatus(client, id);
    expect(status.runs).toBeGreaterThan(2);
    expect(status).toMatchObject({
      state: 'idle',
      turns,
      usage,
      messageCount: turns * 2 + 4 * 2,
      toolExecutionCount: 4,
    });
    const description = await client.workflow.getHandle(id).describe();
    expect(description.runId).not.toBe(description.raw.workflowExecutionInfo?.firstRunId);

    // The whole transcript, read back across runs, in order.
    const transcript = await readTranscript(client, id);
    expect(transcript.system).toBe('sys');
    const users = transcript.messages.filter((m) => m.role === 'user').map((m) => m.content);
    expect(users).toEqual(Array.from({ length: turns }, (_, i) => `turn ${i + 1}`));
    expect(transcript.messages).toHaveLength(turns * 2 + 4 * 2);

    // The memory window survived: the last request still shows the previous turn.
    const lastRequest = model.requests[model.requests.length - 1];
    expect(lastRequest.messages[0]).toEqual({ role: 'system', content: 'sys' });
    expect(lastRequest.messages.map((m) => m.content)).toContain(`ok ${turns - 1}`);
  });
});

it('a handoff survives continue-as-new: later runs are the new agent, by instructions, tools and status', async () => {
  const billing = defineAgent({ name: 'billing', instructions: 'You are billing.', tools: [add] });
  const triage = defineAgent({ name: 'triage', instructions: 'You triage.', tools: [], handoffs: [billing] });
  const model = await startModel((req) => {
    const system = String(req.messages[0]?.content);
    if (system === 'You triage.') return call(['transfer_to_billing', {}]);
    return answer(`billing: ${lastOf(req, 'user')}`);
  });
  const client = new Client({ connection: connection.connection });
  const taskQueue = `can-handoff-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: native,
    taskQueue,
    agents: [triage],
    model: modelAt(model.baseURL),
    workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! },
    shutdownGraceTime: '1s',
  });
  const id = `conv-handoff-${randomUUID()}`;
  await worker.runUntil(async () => {
    await sendMessage(client, id, { message: 'invoice' }, { taskQueue, options: { agent: 'triage' } });
    for (let n = 2; (await conversationStatus(client, id)).runs < 3; n++) {
      expect(await sendMessage(client, id, { message: `turn ${n}` }, { taskQueue })).toMatchObject({
        content: `billing: turn ${n}`,
      });
      expect(n).toBeLessThan(40);
    }
    expect(await conversationStatus(client, id)).toMatchObject({ agent: 'billing' });
    const last = model.requests[model.requests.length - 1];
    expect(last.messages[0]).toEqual({ role: 'system', content: 'You are billing.' });
    expect(last.tools?.map((t) => t.function.name)).toEqual(['add']);
  });
});

it('branches across continue-as-new: one kept by an earlier run is read there, and a fork into a new conversation reads what came before from the source', async () => {
  const model = await startModel((req) => answer(`ok ${lastOf(req, 'user')}`));
  const client = new Client({ connection: connection.connection });
  const taskQueue = `can-branch-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: native,
    taskQueue,
    registry: testRegistry(),
    model: modelAt(model.baseURL),
    workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! },
    shutdownGraceTime: '1s',
  });
  const id = `conv-branch-${randomUUID()}`;
  const start = { taskQueue, options: { memoryWindow: 4 } };
  const contents = (messages: Array<{ content: unknown }>) => messages.map((m) => m.content);
  await worker.runUntil(async () => {
    for (const message of ['m1', 'm2', 'm3']) await sendMessage(client, id, { message }, start);
    expect(await forkConversation(client, id, { atMessage: 4, message: 'M3' }, start)).toMatchObject({ branch: 'b1' });
    const forkedIn = (await conversationStatus(client, id)).runs;
    let n = 0;
    while ((await conversationStatus(client, id)).runs === forkedIn) {
      await sendMessage(client, id, { message: `n${++n}` }, start);
      expect(n).toBeLessThan(30);
    }
    const sent = ['m1', 'm2', 'M3', ...Array.from({ length: n }, (_, i) => `n${i + 1}`)];
    const current = sent.flatMap((m) => [m, `ok ${m}`]);
    expect(contents((await readTranscript(client, id)).messages)).toEqual(current);
    // `main` was replaced in the first run: read from there.
    expect(contents((await readTranscript(client, id, { branch: 'main' })).messages)).toEqual(
      ['m1', 'm2', 'm3'].flatMap((m) => [m, `ok ${m}`]),
    );
    const branches = await listBranches(client, id);
    expect(branches.map((b) => [b.id, b.current, Boolean(b.heldBy)])).toEqual([
      ['b1', true, false],
      ['main', false, true],
    ]);
    await expect(switchBranch(client, id, 'main')).rejects.toThrow('kept by an earlier run of this conversation');
    // A fork into a new conversation at the newest message: what this run no longer holds, it reads from the source.
    const at = current.length - 2;
    const other = `${id}-fork`;
    await forkConversation(client, id, { atMessage: at, into: other, message: 'again' }, { taskQueue });
    expect(contents((await readTranscript(client, other)).messages)).toEqual([
      ...current.slice(0, at),
      'again',
      'ok again',
    ]);
  });
});
