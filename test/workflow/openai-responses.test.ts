import { z } from 'zod';
import { sendMessage } from '../../src/client/conversations';
import { streamEvents } from '../../src/client/event-stream';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { answer, call, startScriptedModel, toolResults } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/**
 * Reasoning models through OpenAI's Responses API, statelessly: the real `openai` SDK against the
 * scripted server's `/v1/responses`, in real workflows. Every request says `store: false`, asks
 * for encrypted reasoning, and carries the reasoning items it got back next to the function calls
 * and their outputs; none points at a stored response.
 */
const temporal = useTestTemporal();

type Raw = {
  model: string;
  store?: boolean;
  include?: string[];
  previous_response_id?: string;
  instructions?: string;
  input: Array<Record<string, unknown>>;
  reasoning?: { effort?: string };
  text?: { format?: { type: string; name: string; schema: unknown } };
  temperature?: number;
  stream?: boolean;
};

async function reasoningWorker(baseURL: string) {
  return createTestWorker(temporal(), { baseURL, model: { model: 'openai-responses:gpt-test' } });
}

it('runs a tool-calling agent statelessly: encrypted reasoning goes back with the function call and its output', async () => {
  const model = await startScriptedModel([
    {
      ...call(['add', { a: 20, b: 22 }, 'call_1']),
      reasoning: [{ text: 'Add them.', signature: 'gAAAAencrypted-reasoning-1' }],
      usage: { reasoningTokens: 64 },
    },
    (req) => ({ ...answer(`It is ${toolResults(req)[0]}.`), usage: { cachedPromptTokens: 32 } }),
  ]);
  const { worker, taskQueue } = await reasoningWorker(model.baseURL);
  const outcome = await worker.runUntil(async () =>
    runOutcome(
      await startAgentRun(
        temporal().client,
        { message: 'What is 20 + 22?', system: 'Use the tools.', tools: ['add'] },
        { taskQueue },
      ),
    ),
  );
  expect(outcome).toMatchObject({ status: 'completed', content: 'It is 42.', iterations: 2 });
  expect(outcome.usage).toMatchObject({ reasoningTokens: 64, cachedPromptTokens: 32 });

  const [first, second] = model.requests.map((r) => r.raw as Raw);
  for (const raw of [first, second]) {
    expect(raw).toMatchObject({ model: 'gpt-test', store: false, include: ['reasoning.encrypted_content'] });
    expect(raw.previous_response_id).toBeUndefined();
    expect(raw.temperature).toBeUndefined(); // reasoning models refuse sampling settings
  }
  expect(first.instructions).toBe('Use the tools.');
  expect(first.stream).toBe(true);
  expect(second.input).toEqual([
    { role: 'user', content: 'What is 20 + 22?' },
    {
      type: 'reasoning',
      id: expect.stringMatching(/^rs_/),
      summary: [{ type: 'summary_text', text: 'Add them.' }],
      encrypted_content: 'gAAAAencrypted-reasoning-1',
    },
    { type: 'function_call', call_id: 'call_1', name: 'add', arguments: '{"a":20,"b":22}' },
    { type: 'function_call_output', call_id: 'call_1', output: '42' },
  ]);
});

it('answers a conversation turn, and asks a run for structured output with text.format', async () => {
  const model = await startScriptedModel([
    { ...answer('Hello!'), reasoning: [{ text: '', signature: 'enc-turn-1' }] },
    answer('{"greeting":"Hello again"}'),
  ]);
  const { worker, taskQueue } = await reasoningWorker(model.baseURL);
  const second = await worker.runUntil(async () => {
    await sendMessage(temporal().client, 'responses-chat-1', { message: 'Hi' }, { taskQueue, options: { tools: [] } });
    return runOutcome(
      await startAgentRun(
        temporal().client,
        { message: 'Greet me as JSON', tools: [], output: z.object({ greeting: z.string() }) },
        { taskQueue },
      ),
    );
  });
  expect(second).toMatchObject({ status: 'completed', output: { greeting: 'Hello again' } });
  const raw = model.requests[1].raw as Raw;
  expect(raw.text?.format).toMatchObject({
    type: 'json_schema',
    name: 'output',
    schema: expect.objectContaining({ type: 'object' }),
  });
});

it('continues a conversation from the reasoning it kept, not from state stored at OpenAI', async () => {
  const model = await startScriptedModel([
    { ...answer('First.'), reasoning: [{ text: 'one', signature: 'enc-1' }] },
    answer('Second.'),
  ]);
  const { worker, taskQueue } = await reasoningWorker(model.baseURL);
  await worker.runUntil(async () => {
    for (const message of ['one', 'two'])
      await sendMessage(temporal().client, 'responses-chat-2', { message }, { taskQueue, options: { tools: [] } });
  });
  const raw = model.requests[1].raw as Raw;
  expect(raw.previous_response_id).toBeUndefined();
  expect(raw.input).toEqual([
    { role: 'user', content: 'one' },
    {
      type: 'reasoning',
      id: expect.any(String),
      summary: [{ type: 'summary_text', text: 'one' }],
      encrypted_content: 'enc-1',
    },
    { role: 'assistant', content: 'First.' },
    { role: 'user', content: 'two' },
  ]);
});

it('streams the text to subscribers as it is written', async () => {
  const text = Array.from({ length: 12 }, (_, i) => `word${i}`).join(' ');
  const model = await startScriptedModel([{ ...answer(text), chunkDelayMs: 40 }]);
  const { worker, taskQueue } = await reasoningWorker(model.baseURL);
  const deltas = await worker.runUntil(async () => {
    const handle = await startAgentRun(temporal().client, { message: 'Talk', tools: [] }, { taskQueue });
    await runOutcome(handle);
    const seen: string[] = [];
    for await (const e of streamEvents(temporal().client, handle.workflowId, { after: -1 }))
      if (e.type === 'text_delta') seen.push(e.delta);
    return seen;
  });
  expect(deltas.length).toBeGreaterThan(1);
  expect(deltas.join('')).toBe(text);
});
