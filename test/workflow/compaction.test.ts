import { sendMessage } from '../../src/client/conversations';
import { readTranscript } from '../../src/client/workflow-controls';
import { streamEvents } from '../../src/client/event-stream';
import { transcriptQuery } from '../../src/contracts/definitions';
import type { AgentEvent } from '../../src/core/events/agent-events';
import type { ChatRequest } from '../../src/testing/chat-request';
import { defineAgent } from '../../src/agents/define-agent';
import { answer, call, startModel } from '../helpers/scripted-model';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { testRegistry } from '../helpers/test-tools';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/**
 * The 30-turn conversation of about 2,800 characters a message that used to break prompt caching:
 * with `maxPromptTokens: 4000` no request passes the budget, older messages are summarised (an
 * activity of its own), and most requests begin with the previous request's messages.
 */
const temporal = useTestTemporal();

const isSummaryRequest = (req: ChatRequest) =>
  req.messages.length === 1 && String(req.messages[0].content).startsWith('Summarise the conversation below');
/** What the scripted server counts as a request's prompt tokens (see openai-compatible-server.ts). */
const promptTokens = (req: ChatRequest) => Math.ceil(JSON.stringify(req.messages).length / 4);

it('keeps a 30-turn conversation under maxPromptTokens by summaries, with stable prefixes in between', async () => {
  const model = await startModel((req) =>
    isSummaryRequest(req)
      ? answer(
          `The user has sent ${String(req.messages[0].content).match(/user: /g)?.length ?? 0} long messages about topic A.`,
        )
      : answer(`Noted, ${'and understood '.repeat(20)}`),
  );
  const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL });
  const id = `compaction-${Date.now()}`;
  const events: AgentEvent[] = [];
  await worker.runUntil(async () => {
    const start = { taskQueue, options: { system: 'You are a patient note taker.', maxPromptTokens: 4000 } };
    const first = await sendMessage(temporal().client, id, { message: 'Message 1: hello' }, start);
    expect(first.status).toBe('completed');
    // Every event from here on, live (a conversation keeps only its last turns' events).
    const stop = new AbortController();
    const listening = (async () => {
      for await (const e of streamEvents(temporal().client, id, { after: -1, signal: stop.signal })) events.push(e);
    })();
    for (let turn = 2; turn <= 30; turn++) {
      const message = `Message ${turn}: ${'lorem ipsum dolor sit amet '.repeat(104)}`; // about 2,800 characters
      const result = await sendMessage(temporal().client, id, { message }, start);
      expect(result.status).toBe('completed');
    }
    // Read until the last turn's end has come.
    for (let i = 0; !events.some((e) => e.type === 'turn_completed' && e.turn === 30); i++) {
      expect(i).toBeLessThan(300);
      await new Promise((r) => setTimeout(r, 100));
    }
    stop.abort();
    await listening;
    // The transcript keeps every message; the summaries are in it, marked.
    const transcript = await readTranscript(temporal().client, id);
    expect(transcript.messages.filter((m) => m.role === 'user')).toHaveLength(30);
    expect(transcript.messages.some((m) => m.role === 'system' && m.summary)).toBe(true);
    // Clients read messages without the workers' bookkeeping...
    expect(transcript.messages.some((m) => m.tokens !== undefined)).toBe(false);
    // ...but each message sent was counted once by the model-call activity's tokenizer, and the
    // workflow keeps the counts with it.
    const kept = await temporal().client.workflow.getHandle(id).query(transcriptQuery);
    const counted = kept.messages.filter((m) => m.tokens !== undefined);
    expect(counted.length).toBeGreaterThan(50);
    const long = kept.messages.find((m) => m.role === 'user' && m.content.startsWith('Message 2:'));
    expect(long?.tokens).toBeGreaterThan(300);
  });
  // The counts are bookkeeping: no request carried them to the provider.
  expect(model.requests.every((r) => r.messages.every((m) => !('tokens' in m)))).toBe(true);
  const turns = model.requests.filter((r) => !isSummaryRequest(r));
  const summaries = model.requests.filter(isSummaryRequest);
  expect(turns).toHaveLength(30);
  expect(summaries.length).toBeGreaterThanOrEqual(1);
  // No request passes the budget, as the provider counts it.
  expect(Math.max(...turns.map(promptTokens))).toBeLessThanOrEqual(4000);
  // Most requests begin with the previous request's messages, byte for byte.
  let stable = 0;
  for (let i = 1; i < turns.length; i++) {
    const previous = JSON.stringify(turns[i - 1].messages);
    if (JSON.stringify(turns[i].messages.slice(0, turns[i - 1].messages.length)) === previous) stable++;
  }
  expect(stable / (turns.length - 1)).toBeGreaterThanOrEqual(0.75);
  // After a compaction the model sees the system message, then the summary.
  const after = turns.find((r) => String(r.messages[1]?.content).startsWith('Summary of the earlier conversation'));
  expect(after?.messages[0]).toMatchObject({ role: 'system', content: 'You are a patient note taker.' });
  const compactions = events.filter((e) => e.type === 'compaction');
  expect(compactions).toHaveLength(summaries.length);
  expect(compactions[0]).toMatchObject({ from: 1, tokensBefore: expect.any(Number), tokensAfter: expect.any(Number) });
});

describe.each([
  ['anthropic', 'anthropic:claude-test'],
  ['openai-responses', 'openai-responses:gpt-test'],
] as const)('compaction through the %s adapter', (provider, modelName) => {
  it('summarises with the same model, and the next request reads the summary after the instructions', async () => {
    const model = await startModel((req) =>
      isSummaryRequest(req) ? answer('The user sent three long notes.') : answer('Noted.'),
    );
    const { worker, taskQueue } = await createTestWorker(temporal(), {
      baseURL: model.baseURL,
      model: { model: modelName, anthropic: { apiKey: 'test-key', baseURL: model.baseURL.replace(/\/v1$/, '') } },
    });
    const id = `compaction-${provider}-${Date.now()}`;
    await worker.runUntil(async () => {
      const start = { taskQueue, options: { system: 'Take notes.', maxPromptTokens: 1500 } };
      for (let turn = 1; turn <= 4; turn++)
        await sendMessage(temporal().client, id, { message: `Note ${turn}: ${'lorem ipsum '.repeat(150)}` }, start);
    });
    const summaries = model.requests.filter(isSummaryRequest);
    expect(summaries.length).toBeGreaterThanOrEqual(1);
    expect(summaries.every((r) => r.wire === model.requests[0].wire)).toBe(true);
    const after = model.requests.filter((r) => !isSummaryRequest(r)).at(-1)!;
    // Both APIs take system text apart from the messages: the instructions, then the summary.
    expect(after.messages[0]).toMatchObject({ role: 'system' });
    expect(String(after.messages[0].content)).toMatch(/^Take notes\.[\s\S]*Summary of the earlier conversation/);
  });
});

it('asks Claude for a summary without the agent’s extended thinking (its max_tokens would be under the thinking budget)', async () => {
  const model = await startModel((req) => (isSummaryRequest(req) ? answer('Notes were taken.') : answer('Noted.')));
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: model.baseURL,
    model: {
      model: 'anthropic:claude-test',
      anthropic: { apiKey: 'test-key', baseURL: model.baseURL.replace(/\/v1$/, '') },
    },
    agents: [
      defineAgent({ name: 'thinker', instructions: 'Take notes.', tools: [], thinking: { budgetTokens: 2048 } }),
    ],
  });
  const id = `compaction-thinking-${Date.now()}`;
  await worker.runUntil(async () => {
    const start = { taskQueue, options: { agent: 'thinker', maxPromptTokens: 1500 } };
    for (let turn = 1; turn <= 4; turn++)
      await sendMessage(temporal().client, id, { message: `Note ${turn}: ${'lorem ipsum '.repeat(150)}` }, start);
  });
  const summary = model.requests.find(isSummaryRequest)!;
  expect(summary.raw).toMatchObject({ max_tokens: 1500 });
  expect(summary.raw).not.toHaveProperty('thinking');
  expect(model.requests.find((r) => !isSummaryRequest(r))!.raw).toHaveProperty('thinking');
});

it('drops the oldest messages when no summary can be written (an empty reply, twice), and the run goes on', async () => {
  // Blobs until the note of dropped messages shows (or ten); every summary comes back empty.
  const model = await startModel((req) => {
    if (isSummaryRequest(req)) return answer('');
    const read = req.messages.filter((m) => m.role === 'tool').length;
    const dropped = req.messages.some((m) => String(m.content).includes('could be written'));
    return dropped || read >= 10 ? answer(`done (${read} results seen)`) : call(['blob', { n: 6000 }]);
  });
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: model.baseURL,
    registry: testRegistry(),
  });
  const { outcome, events } = await worker.runUntil(async () => {
    const handle = await startAgentRun(
      temporal().client,
      { message: 'Read three blobs.', system: 'You read blobs.', tools: ['blob'], maxPromptTokens: 1000 },
      { taskQueue },
    );
    const outcome = await runOutcome(handle);
    const events: AgentEvent[] = [];
    for await (const e of streamEvents(temporal().client, handle.workflowId)) events.push(e);
    return { outcome, events };
  });
  expect(outcome.status).toBe('completed');
  const compaction = events.find((e) => e.type === 'compaction');
  expect(compaction).toMatchObject({
    summaryFailed: expect.stringMatching(/wrote an empty summary/),
  });
  // The summary was asked twice (one retry), not eight times.
  expect(model.requests.filter(isSummaryRequest)).toHaveLength(2);
  // The next request reads the note in the summary's place, and not the messages dropped.
  const after = model.requests.filter((r) => !isSummaryRequest(r)).at(-1)!;
  expect(after.messages.map((m) => m.role)).toEqual(expect.arrayContaining(['system']));
  expect(after.messages.some((m) => /dropped here: no summary of them could be written/.test(String(m.content)))).toBe(
    true,
  );
});
