import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineAgent } from '../../src/agents/define-agent';
import { calculatorAgent, weatherAgent } from '../../scripts/demo-agents/agents';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { readStatus, readTranscript } from '../../src/client/workflow-controls';
import { sendMessage } from '../../src/client/conversations';
import { listAgents } from '../../src/client/list-agents';
import { requireWorkerFor } from '../../src/client/task-queue-workers';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { chatModel } from '../../src/models/low-level';
import { executeToolCall } from '../../src/tools/tool-call';
import { add, exampleTools } from '../../scripts/demo-agents';
import { defineTool, ToolRegistry } from '../../src/tools';
import { answer, call, lastOf, startModel, toolResults } from '../helpers/scripted-model';
import { eventually } from '../helpers/processes';
import { createTestWorker, modelAt, useTestTemporal } from '../helpers/temporal';

/** Named agents, structured output and the low-level API, against the real server and a scripted model. */
const temporal = useTestTemporal();

/** The documents' MathGenius: `squareRoot` for the question, then the answer. */
function mathModel(reply: (req: ChatRequest) => string) {
  return startModel((req) =>
    req.messages.some((m) => m.role === 'tool') ? answer(reply(req)) : call(['squareRoot', { x: 475695037565 }]),
  );
}

async function run(
  agents: Parameters<typeof createTestWorker>[1]['agents'],
  baseURL: string,
  input: Parameters<typeof startAgentRun>[1],
) {
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, {
    baseURL,
    registry: new ToolRegistry(exampleTools),
    agents,
  });
  return worker.runUntil(async () => runOutcome(await startAgentRun(t.client, input, { taskQueue })));
}

describe('named agents', () => {
  it("runs with the agent's instructions, tools and model; the run's own settings win", async () => {
    const model = await mathModel(
      (req) => `The square root of 475695037565 is ${Number(toolResults(req)[0]).toFixed(6)}.`,
    );
    const agent = defineAgent({
      name: 'math-genius',
      instructions: 'You are MathGenius.',
      tools: [add, 'squareRoot'],
      model: 'genius-1',
      temperature: 0.3,
      maxIterations: 5,
    });
    const outcome = await run([agent], model.baseURL, {
      agent: 'math-genius',
      message: 'What is the square root of 475695037565?',
    });
    expect(outcome).toMatchObject({
      status: 'completed',
      content: 'The square root of 475695037565 is 689706.486532.',
      iterations: 2,
    });
    const [first] = model.requests;
    expect(first.messages[0]).toEqual({ role: 'system', content: 'You are MathGenius.' });
    expect(first.model).toBe('genius-1');
    expect(first.temperature).toBe(0.3);
    expect(first.tools?.map((t) => t.function.name)).toEqual(['add', 'squareRoot']);

    const overridden = await run([agent], model.baseURL, {
      agent: 'math-genius',
      message: 'What is the square root of 475695037565?',
      system: 'Be terse.',
      maxIterations: 1,
    });
    expect(overridden).toMatchObject({ status: 'max_iterations', iterations: 1 });
    expect(model.requests[2].messages[0]).toEqual({ role: 'system', content: 'Be terse.' });
  });

  it('fails a run naming an agent the worker does not have, saying which it has', async () => {
    const model = await startModel(() => answer('never'));
    const outcome = await run([calculatorAgent], model.baseURL, { agent: 'astrologer', message: 'hi' });
    expect(outcome).toMatchObject({ status: 'failed', errorType: 'Agent.UnknownAgent' });
    expect(outcome.error).toMatch(
      /^no agent named "astrologer" on task queue "test-[0-9a-f-]+" \(its workers serve: calculator\)$/,
    );
    expect(model.requests).toHaveLength(0);
  });

  it('holds a conversation with an agent, whose gated tools stay gated', async () => {
    const model = await startModel((req) => {
      const last = req.messages[req.messages.length - 1];
      return last.role === 'user' && lastOf(req, 'user').startsWith('add')
        ? call(['add', { a: 1, b: 2 }])
        : answer(`(${req.messages[0].content}) ${lastOf(req, 'user')}`);
    });
    const agent = defineAgent({ name: 'clerk', instructions: 'You are a clerk.', tools: [add], approvalTools: [add] });
    const t = temporal();
    const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL, agents: [agent] });
    const id = `agent-conv-${randomUUID()}`;
    await worker.runUntil(async () => {
      expect(
        await sendMessage(
          t.client,
          id,
          { message: 'hello' },
          { taskQueue, options: { agent: 'clerk', approvalTimeout: '1s' } },
        ),
      ).toMatchObject({ content: '(You are a clerk.) hello' });
      const gated = await sendMessage(t.client, id, { message: 'add them' }, { taskQueue });
      expect(gated.toolExecutions[0]).toMatchObject({ name: 'add', approval: 'rejected' });
      // Each turn names the agent's version: the hash of its definition as the worker resolved it.
      expect(gated.agentVersion).toMatch(/^av-[0-9a-f]{16}$/);
      const run = await runOutcome(await startAgentRun(t.client, { agent: 'clerk', message: 'hi' }, { taskQueue }));
      expect(run.agentVersion).toBe(gated.agentVersion);
      expect((await readStatus(t.client, id)).agentVersion).toBe(gated.agentVersion);
      expect((await readTranscript(t.client, id)).system).toBe('You are a clerk.');
      // Runs and conversations without a named agent have a version too: their instructions,
      // model, options and tools (with their schemas) as the worker resolved them.
      const plain = (system: string) =>
        startAgentRun(t.client, { message: 'hi', system, tools: ['add'] }, { taskQueue }).then(runOutcome);
      const [a, b, c] = [await plain('Be brief.'), await plain('Be brief.'), await plain('Be long.')];
      expect(a.agentVersion).toMatch(/^av-[0-9a-f]{16}$/);
      expect(a.agentVersion).not.toBe(gated.agentVersion);
      expect(b.agentVersion).toBe(a.agentVersion);
      expect(c.agentVersion).not.toBe(a.agentVersion);
      const other = `plain-conv-${randomUUID()}`;
      const turn = await sendMessage(
        t.client,
        other,
        { message: 'hello' },
        { taskQueue, options: { system: 'Be brief.', tools: ['add'] } },
      );
      expect(turn.agentVersion).toMatch(/^av-[0-9a-f]{16}$/);
      expect((await readStatus(t.client, other)).agentVersion).toBe(turn.agentVersion);
    });
  });

  it('lists the agents of the workers on a task queue', async () => {
    const t = temporal();
    const { worker, taskQueue } = await createTestWorker(t, {
      baseURL: 'http://127.0.0.1:1/v1',
      registry: new ToolRegistry(exampleTools),
      agents: [calculatorAgent, weatherAgent],
    });
    const agents = await worker.runUntil(listAgents(t.client, { taskQueue }));
    expect(agents).toEqual([
      // The model that answers: the worker's default here (modelAt: "scripted"), as the agents name none.
      {
        name: 'calculator',
        description: "Arithmetic with tools: the documents' calculator",
        tools: ['stringLength', 'add', 'sqrt', 'sum', 'squareRoot'],
        model: 'scripted',
        examples: expect.arrayContaining(['What is 123 + 456?']),
        structuredOutput: false,
      },
      {
        name: 'weather',
        description: expect.stringContaining('answers as JSON'),
        tools: ['search_weather'],
        model: 'scripted',
        examples: ['What is the weather in Beijing?', 'How warm is it in Paris?'],
        structuredOutput: true,
      },
    ]);
    // Listing leaves nothing in the default workflow list (the Web UI's): its workflow is in our division.
    const types = async (query: string) => {
      const found: string[] = [];
      for await (const w of t.client.workflow.list({ query })) found.push(w.type);
      return found;
    };
    const division = `TaskQueue = "${taskQueue}" AND TemporalNamespaceDivision = "durable-agents"`;
    expect(await eventually(async () => (await types(division)).length > 0, 10_000)).toBe(true);
    expect(await types(division)).toEqual(['listAgentsWorkflow']);
    expect(await types(`TaskQueue = "${taskQueue}"`)).toEqual([]);

    // No worker on the queue: said at once, naming the queue, instead of waiting for one.
    await expect(listAgents(t.client, { taskQueue: `nobody-${randomUUID()}` })).rejects.toThrow(
      /^no worker is polling task queue "nobody-[0-9a-f-]+" \(namespace "default"\)\. Start your worker/,
    );
    // A run on a queue no worker polls: asking for its status says so at once (a query would wait 30 s).
    const orphan = await startAgentRun(t.client, { message: 'anyone?' }, { taskQueue: `nobody-${randomUUID()}` });
    await expect(requireWorkerFor(t.client, orphan.workflowId)).rejects.toThrow(
      new RegExp(`^no worker is polling task queue "nobody-[0-9a-f-]+", which "${orphan.workflowId}" runs on`),
    );
    await orphan.terminate('test done');
  });
});

describe('structured output', () => {
  const weatherJson = (city: string, temperature: unknown) =>
    JSON.stringify({ city, temperature, temperatureUnit: 'CELSIUS' });

  it('asks with response_format json_schema (strict) and returns the parsed value as output', async () => {
    const model = await startModel((req) =>
      req.messages.some((m) => m.role === 'tool')
        ? answer(weatherJson('Beijing', Number(toolResults(req)[0])))
        : call(['search_weather', { city: 'Beijing' }]),
    );
    const outcome = await run([weatherAgent], model.baseURL, {
      agent: 'weather',
      message: 'What is the weather in Beijing?',
    });
    expect(outcome).toMatchObject({
      status: 'completed',
      output: { city: 'Beijing', temperature: 30, temperatureUnit: 'CELSIUS' },
      iterations: 2,
    });
    expect(model.requests[0].response_format).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'output',
        strict: true,
        schema: {
          type: 'object',
          properties: {
            city: { type: 'string' },
            temperature: { type: 'number' },
            temperatureUnit: { type: 'string', enum: ['CELSIUS', 'FAHRENHEIT'] },
          },
          required: ['city', 'temperature', 'temperatureUnit'],
          additionalProperties: false,
        },
      },
    });
  });

  it('sends an invalid answer back with the exact error, counting the iteration', async () => {
    const model = await startModel((req) => {
      if (!req.messages.some((m) => m.role === 'tool')) return call(['search_weather', { city: 'Beijing' }]);
      return answer(
        lastOf(req, 'user').startsWith('Your answer is not valid')
          ? weatherJson('Beijing', 30)
          : weatherJson('Beijing', '30 degrees'),
      );
    });
    const outcome = await run([weatherAgent], model.baseURL, {
      agent: 'weather',
      message: 'What is the weather in Beijing?',
    });
    expect(outcome).toMatchObject({ status: 'completed', output: { temperature: 30 }, iterations: 3 });
    expect(lastOf(model.requests[2], 'user')).toBe(
      'Your answer is not valid: the JSON does not match the schema: temperature: Invalid input: expected number, received string\nReply again with only the JSON value that matches the required schema, nothing else.',
    );
  });

  it('asks in the prompt instead when the endpoint refuses response_format, and remembers it', async () => {
    const model = await startModel((req) => {
      if (req.response_format)
        return {
          http: {
            status: 400,
            body: {
              error: {
                message: 'Unrecognized request argument supplied: response_format',
                type: 'invalid_request_error',
              },
            },
          },
        };
      return answer('{"answer": 689706.486532}');
    });
    const output = z.object({ answer: z.number() });
    const t = temporal();
    const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL });
    const ask = async () =>
      runOutcome(
        await startAgentRun(
          t.client,
          { message: 'What is the square root of 475695037565?', output, tools: [] },
          { taskQueue },
        ),
      );
    const [first, second] = await worker.runUntil(async () => [await ask(), await ask()]);
    expect(first).toMatchObject({ status: 'completed', output: { answer: 689706.486532 } });
    expect(second).toMatchObject({ status: 'completed', output: { answer: 689706.486532 } });
    const [refused, retried, later] = model.requests;
    expect(refused.response_format).toBeDefined();
    expect(retried.response_format).toBeUndefined();
    expect(retried.messages.at(-2)).toEqual({
      role: 'system',
      content: expect.stringMatching(/^Your final answer must be only a JSON value.*"answer":\{"type":"number"\}/s),
    });
    // The worker remembers: the next run asks in the prompt right away.
    expect(model.requests).toHaveLength(3);
    expect(later.response_format).toBeUndefined();
  });
});

describe('the low-level API', () => {
  it('calls the model once and runs a tool call by hand, with the same errors as the activities', async () => {
    const model = await startModel((req) =>
      req.tools?.length
        ? call(['add', { a: 2, b: 3 }])
        : { http: { status: 401, body: { error: { message: 'Incorrect API key provided' } } } },
    );
    const llm = chatModel(modelAt(model.baseURL));
    const registry = new ToolRegistry([
      add,
      defineTool({
        name: 'explode',
        description: 'throws',
        parameters: z.object({}),
        execute: () => Promise.reject(new Error('boom')),
      }),
    ]);
    const reply = await llm.generate([{ role: 'user', content: 'add 2 and 3' }], { tools: registry.specs(['add']) });
    expect(reply.toolCalls).toEqual([
      { id: expect.any(String), type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } },
    ]);
    expect(await executeToolCall(registry, reply.toolCalls[0])).toEqual({
      result: '5',
      value: 5,
      json: true,
      error: false,
    });
    expect(
      await executeToolCall(registry, {
        id: 'c2',
        type: 'function',
        function: { name: 'add', arguments: '{"a":"x"}' },
      }),
    ).toMatchObject({ error: true, result: expect.stringMatching(/^Error: invalid arguments for add: a: /) });
    expect(
      await executeToolCall(registry, { id: 'c3', type: 'function', function: { name: 'explode', arguments: '{}' } }),
    ).toEqual({ result: 'Error: explode failed: boom', error: true });
    await expect(llm.generate([{ role: 'user', content: 'hi' }])).rejects.toMatchObject({
      kind: 'auth',
      type: 'ModelCall.Auth',
      retryable: false,
    });
  });
});
