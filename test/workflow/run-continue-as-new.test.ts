import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { AgentEvent } from '../../src/core/events/agent-events';
import { connectClient, type ClientConnection } from '../../src/connection/client-connection';
import { startDevServer, type DevServer } from '../../src/connection/dev-server';
import { streamEvents } from '../../src/client/event-stream';
import { decideApproval, readStatus, readTranscript } from '../../src/client/workflow-controls';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { createAgentWorker } from '../../src/worker/create-agent-worker';
import { defineAgent } from '../../src/agents/define-agent';
import { installRuntimeLogging } from '../../src/telemetry/logging';
import { answer, call, closeScriptedModels, startModel } from '../helpers/scripted-model';
import { modelAt } from '../helpers/temporal';
import { testRegistry } from '../helpers/test-tools';
import { carryVersion } from '../../src/core/state/carry-versions';

/** Reads until `check` holds (or fails after `ms`). */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`not yet: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * A one-shot run of many steps continues as new when Temporal suggests it (a dev server of our
 * own suggests it after 150 history events, as a default server does after about 4,000), and its
 * clients see one run: its result with every tool output, its transcript, its status, one event
 * stream, and an approval asked after the run continued.
 */
let server: DevServer;
let connection: ClientConnection;
let native: NativeConnection;

beforeAll(async () => {
  installRuntimeLogging('ERROR');
  server = await startDevServer(
    {
      logFile: join(tmpdir(), `run-can-${randomUUID()}.log`),
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 150 },
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

const STEPS = 60;
const APPROVAL_AT = 45;

it('continues as new between steps; the result, transcript, status, events and approvals read as one run', async () => {
  // Step n adds n and 1; at APPROVAL_AT it asks for a transfer, which needs approval; then it answers.
  const model = await startModel((req) => {
    const n = req.messages.filter((m) => m.role === 'tool').length;
    if (n === APPROVAL_AT - 1) return call(['transfer', { to: 'ops', amount: n }]);
    if (n < STEPS) return call(['add', { a: n, b: 1 }]);
    return answer(`done after ${n} tools`);
  });
  const client = new Client({ connection: connection.connection });
  const taskQueue = `run-can-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: native,
    taskQueue,
    registry: testRegistry(),
    model: modelAt(model.baseURL),
    workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! },
    shutdownGraceTime: '1s',
  });
  await worker.runUntil(async () => {
    const handle = await startAgentRun(
      client,
      { message: 'Add up.', system: 'Be exact.', tools: ['add', 'transfer'], maxIterations: STEPS + 5, tenant: 'acme' },
      { taskQueue },
    );
    const seen: AgentEvent[] = [];
    const stop = new AbortController();
    const reading = (async () => {
      for await (const e of streamEvents(client, handle.workflowId, { signal: stop.signal })) {
        seen.push(e);
        if (e.type === 'turn_completed') break;
      }
    })();

    // The transfer is asked for after the run continued as new; it is approved by the run's id.
    const asked = await eventually(
      () => readStatus(client, handle.workflowId),
      (s) => (s as { pendingApprovals?: unknown[] }).pendingApprovals?.length === 1,
      60_000,
    );
    const runsSoFar = await client.workflow.count(`WorkflowId = '${handle.workflowId}'`);
    expect(runsSoFar.count).toBeGreaterThan(1);
    // The tenant crossed continue-as-new: its search attribute, its fairness key, its status.
    const latest = await client.workflow.getHandle(handle.workflowId).describe();
    expect(latest.searchAttributes.AgentTenant).toEqual(['acme']);
    expect(latest.priority).toMatchObject({ fairnessKey: 'acme' });
    expect(asked).toMatchObject({ tenant: 'acme' });
    // The carried state names its version (core/state/carry-versions.ts): the next build reads it by that.
    const started = (await client.workflow.getHandle(handle.workflowId).fetchHistory()).events?.[0];
    const input = JSON.parse(
      Buffer.from(started!.workflowExecutionStartedEventAttributes!.input!.payloads![0].data!).toString(),
    );
    expect(input).toMatchObject({ carryVersion: carryVersion('run'), carry: { previousRunId: expect.any(String) } });
    // Counted over every run: the system message, the user's, 44 calls and outputs, the transfer's call.
    expect(asked).toMatchObject({ messageCount: 2 + 2 * (APPROVAL_AT - 1) + 1, toolExecutionCount: APPROVAL_AT - 1 });
    const pending = (asked as { pendingApprovals: Array<{ callId: string }> }).pendingApprovals[0];
    await decideApproval(client, handle.workflowId, { callId: pending.callId, approve: true });

    const outcome = await runOutcome(handle);
    expect(outcome).toMatchObject({ status: 'completed', content: `done after ${STEPS} tools`, iterations: STEPS + 1 });
    // Every tool output, from every run's history.
    expect(outcome.toolExecutions).toHaveLength(STEPS);
    expect(outcome.toolExecutions.map((e) => e.result)).toEqual(
      Array.from({ length: STEPS }, (_, n) => (n === APPROVAL_AT - 1 ? `sent ${n} to ops` : String(n + 1))),
    );
    expect(outcome.usage.totalTokens).toBeGreaterThan(0);

    // The transcript: the user's message, every call and output in order, the answer.
    const transcript = await readTranscript(client, handle.workflowId);
    expect(transcript.system).toBe('Be exact.');
    expect(transcript.messages).toHaveLength(2 + 2 * STEPS);
    expect(transcript.messages[0]).toMatchObject({ role: 'user', content: 'Add up.' });
    const outputs = transcript.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(outputs).toEqual(outcome.toolExecutions.map((e) => e.result));
    expect(transcript.messages.at(-1)).toMatchObject({ role: 'assistant', content: `done after ${STEPS} tools` });
    expect(await readStatus(client, handle.workflowId)).toMatchObject({
      state: 'completed',
      iteration: STEPS + 1,
      toolExecutionCount: STEPS,
    });

    // One stream: every tool call once, offsets in order, one end.
    await reading;
    stop.abort();
    expect(seen.filter((e) => e.type === 'tool_call_finished').map((e) => (e as { result: string }).result)).toEqual(
      outcome.toolExecutions.map((e) => e.result),
    );
    expect(seen.filter((e) => e.type === 'approval_decided')).toHaveLength(1);
    const offsets = seen.map((e) => e.offset);
    expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
    expect(new Set(offsets).size).toBe(offsets.length);
    expect(seen.filter((e) => e.type === 'turn_completed')).toHaveLength(1);

    // Each run's history stays short.
    const runs: Array<{ runId: string }> = [];
    for await (const r of client.workflow.list({ query: `WorkflowId = '${handle.workflowId}'` })) runs.push(r);
    expect(runs.length).toBeGreaterThanOrEqual(3);
    for (const r of runs) {
      const history = await client.workflow.getHandle(handle.workflowId, r.runId).fetchHistory();
      expect(history.events!.length).toBeLessThan(400);
    }
  });
});

it("keeps its agent's memory across continue-as-new: every model call reads the recalled block after the message, and the run ends with an extraction", async () => {
  const steps = 25;
  const extractions: string[] = [];
  const recalled: boolean[] = [];
  const model = await startModel((req) => {
    if (String(req.messages[0]?.content ?? '').startsWith('You keep the long-term memory')) {
      extractions.push(String(req.messages[1].content));
      return answer('{"add":[{"text":"Counts in steps of one"}],"update":[],"retire":[]}');
    }
    const user = req.messages.findIndex((m) => m.role === 'user');
    if (req.messages[user].content === 'Hello') return answer('Hi.');
    // The recalled block follows the user's message, in every call of the run.
    recalled.push(String(req.messages[user + 1]?.content ?? '').startsWith('<memory>'));
    const n = req.messages.filter((m) => m.role === 'tool').length;
    return n < steps ? call(['add', { a: n, b: 1 }]) : answer(`done after ${n} tools`);
  });
  const counter = defineAgent({
    name: 'counter',
    instructions: 'Be exact.',
    tools: ['add'],
    memory: { recall: true, extract: true },
  });
  const dir = mkdtempSync(join(tmpdir(), 'run-can-memory-'));
  const client = new Client({ connection: connection.connection });
  const taskQueue = `run-can-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: native,
    taskQueue,
    registry: testRegistry(),
    agents: [counter],
    model: modelAt(model.baseURL),
    workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! },
    shutdownGraceTime: '1s',
    memory: { dir },
  });
  try {
    await worker.runUntil(async () => {
      // A first, short run: its extraction keeps the fact the long one recalls.
      const ask = (message: string) =>
        startAgentRun(client, { message, agent: 'counter', user: 'carl', maxIterations: steps + 5 }, { taskQueue });
      expect(await runOutcome(await ask('Hello'))).toMatchObject({ status: 'completed' });
      expect(extractions).toHaveLength(1);
      const handle = await ask('Add up in steps of one.');
      const outcome = await runOutcome(handle);
      expect(outcome).toMatchObject({ status: 'completed', content: `done after ${steps} tools` });
      expect((await client.workflow.count(`WorkflowId = '${handle.workflowId}'`)).count).toBeGreaterThan(1);
      expect(recalled).toHaveLength(steps + 1);
      expect(recalled.every(Boolean)).toBe(true);
      // Extraction after the last run, with the agent's memory it carried.
      expect(extractions).toHaveLength(2);
      expect(extractions[1]).toContain('User: Add up in steps of one.');
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
