import { readFileSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import type { AgentEvent } from '../../src/core/events/agent-events';
import type { LivePiece } from '../../src/core/events/live-text-merge';
import { isTurnEnd, streamEvents } from '../../src/client/event-stream';
import { startAgentRun } from '../../src/client/run-agent';
import { call, startModel, startScriptedModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';
import { testRegistry } from '../helpers/test-tools';

const temporal = useTestTemporal();

const ANSWER = 'The sum is 42, and that is the answer to everything you asked about today.';

/** Reads events until the run's turn ends, noting when each arrived. */
async function collect(
  client: Client,
  workflowId: string,
  after?: number,
): Promise<Array<AgentEvent & { receivedAt: number }>> {
  const out: Array<AgentEvent & { receivedAt: number }> = [];
  for await (const e of streamEvents(client, workflowId, { after, until: (e) => isTurnEnd(e) }))
    out.push({ ...e, receivedAt: Date.now() });
  return out;
}

function deltasOf(events: AgentEvent[], call: number): string[] {
  // The text after the call's last model_retry is its answer.
  const retry = events.map((e) => e.type === 'model_retry' && e.call === call).lastIndexOf(true);
  return events.slice(retry + 1).flatMap((e) => (e.type === 'text_delta' && e.call === call ? [e.delta] : []));
}

async function signalCount(client: Client, workflowId: string): Promise<number> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return history.events!.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'agentText').length;
}

it('streams a run: tool calls as they start and finish, the answer in pieces while it is written, in order, each once', async () => {
  const t = temporal();
  const pieces = ANSWER.match(/\S+\s*/g)!;
  const model = await startScriptedModel([
    call(['add', { a: 40, b: 2 }]),
    { content: ANSWER, chunks: pieces, chunkDelayMs: 40 },
  ]);
  // Batches 100 ms apart whether or not a live path reaches the reader (this one reads the
  // durable log only): 15 pieces 40 ms apart make about 6 Signals, not one a piece.
  const { worker, taskQueue } = await createTestWorker(t, {
    baseURL: model.baseURL,
    registry: testRegistry(),
    streaming: { batchIntervalMs: 100 },
  });
  await worker.runUntil(async () => {
    const handle = await startAgentRun(t.client, { message: 'add 40 and 2', tools: ['add'] }, { taskQueue });
    const [events, result] = await Promise.all([collect(t.client, handle.workflowId, -1), handle.result()]);
    expect(events.map((e) => e.offset)).toEqual(events.map((_, i) => i));
    const types = events
      .map((e) => e.type)
      .filter((type, i, all) => type !== 'text_delta' || all[i - 1] !== 'text_delta');
    expect(types).toEqual([
      'turn_started',
      'model_call_started',
      'tool_call_started',
      'tool_call_finished',
      'model_call_started',
      'text_delta',
      'turn_completed',
    ]);
    expect(events[2]).toMatchObject({ type: 'tool_call_started', name: 'add', arguments: { a: 40, b: 2 } });
    expect(events[3]).toMatchObject({ type: 'tool_call_finished', name: 'add', result: '42', error: false });
    const text = events.filter((e) => e.type === 'text_delta');
    // Streamed: several pieces, the first seen well before the answer was complete.
    expect(text.length).toBeGreaterThan(2);
    expect(deltasOf(events, 2).join('')).toBe(ANSWER);
    expect(result.content).toBe(ANSWER);
    const end = events[events.length - 1];
    expect(end).toMatchObject({ type: 'turn_completed', result: { status: 'completed', content: ANSWER } });
    expect(end.receivedAt - text[0].receivedAt).toBeGreaterThan(300);
    // Batched: fewer signals than pieces.
    const signals = await signalCount(t.client, handle.workflowId);
    expect(signals).toBeGreaterThan(0);
    expect(signals).toBeLessThan(pieces.length / 2);

    // A subscriber that reconnects with the last offset it saw gets exactly the rest.
    const again = await collect(t.client, handle.workflowId, 4);
    expect(again.map((e) => e.offset)).toEqual(events.slice(5).map((e) => e.offset));
    expect(again.map(({ receivedAt: _, ...e }) => e)).toEqual(events.slice(5).map(({ receivedAt: _, ...e }) => e));
  });
});

it('a reader that follows the history gets each text batch from its Signal, at its position, before the workflow applies it', async () => {
  const t = temporal();
  const pieces = ANSWER.match(/\S+\s*/g)!;
  const model = await startScriptedModel([{ content: ANSWER, chunks: pieces, chunkDelayMs: 40 }]);
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL, registry: testRegistry() });
  await worker.runUntil(async () => {
    const handle = await startAgentRun(t.client, { message: 'say it' }, { taskQueue });
    const signalled: Array<LivePiece & { receivedAt: number }> = [];
    const events: Array<AgentEvent & { receivedAt: number }> = [];
    const stream = streamEvents(t.client, handle.workflowId, {
      after: -1,
      until: (e) => isTurnEnd(e),
      onText: (piece) => signalled.push({ ...piece, receivedAt: Date.now() }),
    });
    for await (const e of stream) events.push({ ...e, receivedAt: Date.now() });
    await handle.result();
    // Every batch but the last (the call's reply carries it), in order, where the answer has it.
    expect(signalled.length).toBeGreaterThan(1);
    let at = 0;
    for (const piece of signalled) {
      expect(piece).toMatchObject({ call: 1, attempt: 1, at });
      expect(ANSWER.slice(piece.at, piece.at + piece.text.length)).toBe(piece.text);
      at += piece.text.length;
    }
    expect(at).toBeLessThan(ANSWER.length);
    // Sooner than the log: the event log shows the first batch's text no earlier than its Signal came.
    const shown = (upTo: number) =>
      events.find(
        (e) => e.type === 'text_delta' && deltasOf(events.slice(0, events.indexOf(e) + 1), 1).join('').length >= upTo,
      )!;
    const first = signalled[0];
    expect(shown(first.at + first.text.length).receivedAt).toBeGreaterThanOrEqual(first.receivedAt);
  });
});

it('without streaming (a server that cannot, or stream: false) the text comes in one piece and no signal is sent', async () => {
  const t = temporal();
  const answers = [{ content: ANSWER, noStreaming: true }, { content: 'second' }];
  const model = await startModel(() => answers.shift()!);
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL });
  await worker.runUntil(async () => {
    const first = await startAgentRun(t.client, { message: 'hi', tools: [] }, { taskQueue });
    expect((await first.result()).content).toBe(ANSWER);
    const events = await collect(t.client, first.workflowId, -1);
    expect(deltasOf(events, 1)).toEqual([ANSWER]);
    expect(await signalCount(t.client, first.workflowId)).toBe(0);
    expect(model.requests[0].stream).toBe(true);

    const second = await startAgentRun(t.client, { message: 'hi', tools: [], stream: false }, { taskQueue });
    await second.result();
    expect(model.requests[1].stream).toBeUndefined();
    expect(deltasOf(await collect(t.client, second.workflowId, -1), 1)).toEqual(['second']);
  });
});

it('a server that refuses streaming requests (400 naming stream) is asked again without, and from then on', async () => {
  const t = temporal();
  const model = await startModel((request) =>
    request.stream
      ? {
          http: {
            status: 400,
            body: { error: { message: 'stream is not supported by this server', type: 'invalid_request_error' } },
          },
        }
      : { content: ANSWER },
  );
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL });
  await worker.runUntil(async () => {
    for (let i = 0; i < 2; i++) {
      const handle = await startAgentRun(t.client, { message: 'hi', tools: [] }, { taskQueue });
      expect((await handle.result()).content).toBe(ANSWER);
      expect(deltasOf(await collect(t.client, handle.workflowId, -1), 1)).toEqual([ANSWER]);
    }
    expect(model.requests.map((r) => r.stream === true)).toEqual([true, false, false]);
  });
});

it('ReAct runs stream only the Final Answer', async () => {
  const t = temporal();
  const model = await startModel((request) =>
    JSON.stringify(request.messages).includes('Observation: 3')
      ? { content: 'Thought: I know it now.\nFinal Answer: It is 3, as computed.\n', chunkDelayMs: 30 }
      : { content: 'Thought: I add.\nAction: add\nAction Input: {"a": 1, "b": 2}' },
  );
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL, registry: testRegistry() });
  await worker.runUntil(async () => {
    const handle = await startAgentRun(
      t.client,
      { message: 'add 1 and 2', tools: ['add'], toolCalling: 'react' },
      { taskQueue },
    );
    const [events, result] = await Promise.all([collect(t.client, handle.workflowId, -1), handle.result()]);
    expect(result.content).toBe('It is 3, as computed.');
    expect(deltasOf(events, 1)).toEqual([]);
    expect(deltasOf(events, 2).join('')).toBe('It is 3, as computed.');
    expect(events.some((e) => e.type === 'model_retry')).toBe(false);
  });
});

it('functions mode: the legacy function_call is assembled from the stream, and the answer streams', async () => {
  const t = temporal();
  const model = await startModel((request) =>
    request.messages.some((m) => m.role === 'function')
      ? { content: ANSWER, chunkDelayMs: 20 }
      : { toolCalls: [{ name: 'add', arguments: { a: 40, b: 2 } }] },
  );
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL, registry: testRegistry() });
  await worker.runUntil(async () => {
    const handle = await startAgentRun(
      t.client,
      { message: 'add 40 and 2', tools: ['add'], toolCalling: 'functions' },
      { taskQueue },
    );
    const [events, result] = await Promise.all([collect(t.client, handle.workflowId, -1), handle.result()]);
    expect(model.requests[0].stream).toBe(true);
    expect(events.find((e) => e.type === 'tool_call_finished')).toMatchObject({ name: 'add', result: '42' });
    expect(deltasOf(events, 2).join('')).toBe(ANSWER);
    expect(deltasOf(events, 2).length).toBeGreaterThan(1);
    expect(result.content).toBe(ANSWER);
  });
});

it('the workflow bundle holds one copy of @temporalio/workflow', () => {
  const code = readFileSync(process.env.TEST_WORKFLOW_BUNDLE!, 'utf8');
  const needle = 'node_modules/@temporalio/workflow/lib/workflow.js ***!';
  const copies = new Set<string>();
  // Webpack heads each module with `!*** <path> ***!`; a plain search (a regex scan of the bundle is slow).
  for (let at = code.indexOf(needle); at >= 0; at = code.indexOf(needle, at + needle.length)) {
    copies.add(code.slice(code.lastIndexOf('!*** ', at) + 5, at + needle.length));
  }
  expect(copies.size).toBe(1);
});
