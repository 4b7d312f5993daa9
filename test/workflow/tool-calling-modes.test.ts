import { runOutcome, startAgentRun } from '../../src/runtime/run-agent';
import { answer, call, startScriptedModel, toolResults } from '../helpers/scripted-model';
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
      runOutcome(await startAgentRun(temporal().client, { message: QUESTION, toolCalling: 'functions', tools: ['stringLength', 'add', 'sqrt'] }, { taskQueue })),
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
    expect(last.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'function', 'assistant', 'function', 'assistant', 'function', 'assistant', 'function']);
    expect(last.messages[1]).toMatchObject({ role: 'assistant', content: null, function_call: { name: 'stringLength', arguments: '{"s":"hello"}' } });
    expect(last.messages[2]).toEqual({ role: 'function', name: 'stringLength', content: '5' });
    expect(last.messages.some((m) => 'tool_calls' in m || 'tool_call_id' in m)).toBe(false);
  });
});
