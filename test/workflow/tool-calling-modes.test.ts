import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { sendMessage } from '../../src/client/conversations';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { answer, call, startModel, startScriptedModel, toolResults } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/** The same durable agent over the legacy `functions` API (and, below, ReAct text). */
const temporal = useTestTemporal();

const QUESTION = 'What is the square root of the sum of the numbers of letters in the words "hello" and "world"?';

describe('toolCalling: functions', () => {
  it('runs the hello/world calculator chain with functions/function_call, one call per reply', async () => {
    const model = await startScriptedModel([
      call(['stringLength', { s: 'hello' }]),
      call(['stringLength', { s: 'world' }]),
      (req) => call(['add', { a: Number(toolResults(req)[0]), b: Number(toolResults(req)[1]) }]),
      (req) => call(['sqrt', { x: Number(toolResults(req)[2]) }]),
      (req) => answer(`approximately ${Number(toolResults(req)[3]).toFixed(3)}`),
    ]);
    const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL });
    const outcome = await worker.runUntil(async () =>
      runOutcome(
        await startAgentRun(
          temporal().client,
          { message: QUESTION, toolCalling: 'functions', tools: ['stringLength', 'add', 'sqrt'] },
          { taskQueue },
        ),
      ),
    );
    expect(outcome).toMatchObject({ status: 'completed', content: 'approximately 3.162', iterations: 5 });
    expect(outcome.toolExecutions.map((e) => [e.name, e.result])).toEqual([
      ['stringLength', '5'],
      ['stringLength', '5'],
      ['add', '10'],
      ['sqrt', String(Math.sqrt(10))],
    ]);
    // The requests speak the legacy format: `functions`, `function_call`, `role: "function"` results.
    const last = model.requests[4];
    expect(last.tools).toBeUndefined();
    expect((last.functions as Array<{ name: string }>).map((f) => f.name)).toEqual(['stringLength', 'add', 'sqrt']);
    expect(last.functions).toContainEqual({
      name: 'add',
      description: 'Calculates the sum of two numbers',
      parameters: expect.objectContaining({ type: 'object', required: ['a', 'b'] }),
    });
    expect(last.messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'function',
      'assistant',
      'function',
      'assistant',
      'function',
      'assistant',
      'function',
    ]);
    expect(last.messages[1]).toMatchObject({
      role: 'assistant',
      content: null,
      function_call: { name: 'stringLength', arguments: '{"s":"hello"}' },
    });
    expect(last.messages[2]).toEqual({ role: 'function', name: 'stringLength', content: '5' });
    expect(last.messages.some((m) => 'tool_calls' in m || 'tool_call_id' in m)).toBe(false);
  });
});

/** The ReAct prompt after the question: the steps so far. */
const scratchpad = (req: ChatRequest) =>
  String(req.messages[req.messages.length - 1].content)
    .split('\nQuestion: ')
    .pop()!;

describe('toolCalling: react', () => {
  it("plans the trip from the Beijing weather (the documents' example) with a ReAct text prompt", async () => {
    const model = await startModel((req) => {
      const prompt = scratchpad(req);
      if (!prompt.includes('Observation:')) return answer('I should look at the weather first.'); // no Action: a parse error
      if (!prompt.includes('Observation: 30'))
        return answer(' I need the weather in Beijing.\nAction: search_weather\nAction Input: "Beijing"');
      return answer(
        ' I now know the final answer\nFinal Answer: Beijing is 30 degrees Celsius: plan indoor museums at noon and bring sunscreen.',
      );
    });
    const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL });
    const outcome = await worker.runUntil(async () =>
      runOutcome(
        await startAgentRun(
          temporal().client,
          { message: '根据北京的天气情况,制定一个出游计划', tools: ['search_weather'], toolCalling: 'react' },
          { taskQueue },
        ),
      ),
    );
    expect(outcome).toMatchObject({
      status: 'completed',
      iterations: 3,
      content: 'Beijing is 30 degrees Celsius: plan indoor museums at noon and bring sunscreen.',
    });
    // The parse error went back as an Observation (and counted), then the tool got the single input as its argument.
    expect(outcome.toolExecutions.map((e) => [e.name, e.arguments, e.result])).toEqual([
      ['_Exception', expect.anything(), expect.stringContaining("Invalid Format: Missing 'Action:' after 'Thought:'")],
      ['search_weather', { city: 'Beijing' }, '30'],
    ]);
    const first = model.requests[0];
    expect(first.tools).toBeUndefined();
    expect(first.stop).toEqual(['\nObservation']);
    const prompt = String(first.messages[0].content);
    expect(prompt).toContain('search_weather(city) - useful for when you need to search for weather');
    expect(prompt).toContain('Action: the action to take, should be one of [search_weather]');
    expect(prompt).toMatch(/Question: 根据北京的天气情况,制定一个出游计划\nThought:$/);
    const last = String(model.requests[2].messages[0].content);
    expect(last).toContain('I should look at the weather first.\nObservation: Invalid Format');
    expect(last).toMatch(/Action Input: "Beijing"\nObservation: 30\nThought: $/);
  });

  it('gives a tool with several parameters the Action Input as a JSON object', async () => {
    const model = await startModel((req) => {
      const prompt = scratchpad(req);
      if (!prompt.includes('Observation:'))
        return answer('Thought: add them\nAction: add\nAction Input: {"a": 2, "b": 3}');
      return answer('Final Answer: 5');
    });
    const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL });
    const outcome = await worker.runUntil(async () =>
      runOutcome(
        await startAgentRun(
          temporal().client,
          { message: 'add 2 and 3', tools: ['add'], toolCalling: 'react' },
          { taskQueue },
        ),
      ),
    );
    expect(outcome).toMatchObject({ status: 'completed', content: '5' });
    expect(outcome.toolExecutions[0]).toMatchObject({ name: 'add', arguments: { a: 2, b: 3 }, result: '5' });
    expect(String(model.requests[0].messages[0].content)).toContain(
      'add(JSON object with a, b) - Calculates the sum of two numbers',
    );
  });
});

describe('react mode keeps the shared run rules', () => {
  it('returns immediately after an immediate tool, without another model call', async () => {
    const model = await startModel(() => answer('Thought: add\nAction: add\nAction Input: {"a": 11, "b": 31}'));
    const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL });
    const outcome = await worker.runUntil(async () =>
      runOutcome(
        await startAgentRun(
          temporal().client,
          { message: 'add', tools: ['add'], immediateTools: ['add'], toolCalling: 'react' },
          { taskQueue },
        ),
      ),
    );
    expect(outcome).toMatchObject({
      status: 'immediate',
      iterations: 1,
      toolExecutions: [{ name: 'add', result: '42', immediate: true }],
    });
    expect(model.requests).toHaveLength(1);
  });

  it('stops at maxIterations when the model never produces a parseable step', async () => {
    const model = await startModel(() => answer('I am thinking...'));
    const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL });
    const outcome = await worker.runUntil(async () =>
      runOutcome(
        await startAgentRun(
          temporal().client,
          { message: 'x', tools: ['add'], toolCalling: 'react', maxIterations: 3 },
          { taskQueue },
        ),
      ),
    );
    expect(outcome).toMatchObject({ status: 'max_iterations', iterations: 3 });
    expect(model.requests).toHaveLength(3);
  });
});

describe('toolCalling in conversations', () => {
  it('keeps earlier turns as chat history around the ReAct prompt', async () => {
    const model = await startModel((req) =>
      answer(`Final Answer: answer ${req.messages.filter((m) => m.role === 'user').length}`),
    );
    const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL });
    const id = `react-${Date.now()}`;
    await worker.runUntil(async () => {
      const start = { taskQueue, options: { toolCalling: 'react' as const, tools: ['add'] } };
      expect(await sendMessage(temporal().client, id, { message: 'first question' }, start)).toMatchObject({
        content: 'answer 1',
      });
      expect(await sendMessage(temporal().client, id, { message: 'second question' }, start)).toMatchObject({
        content: 'answer 2',
      });
    });
    const second = model.requests[1];
    expect(second.messages.slice(0, 2)).toEqual([
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'answer 1' },
    ]);
    expect(String(second.messages[2].content)).toMatch(/Question: second question\nThought:$/);
  });
});
