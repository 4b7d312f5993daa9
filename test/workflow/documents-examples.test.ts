import type { Client } from '@temporalio/client';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { answer, call, startScriptedModel, toolResults, type ScriptedModel } from '../helpers/scripted-model';
import { useTestTemporal, createTestWorker, runAgent } from '../helpers/temporal';

/** The examples from the documents, run as durable workflows with a scripted model over HTTP. */
const temporal = useTestTemporal();
let model: ScriptedModel;

const QUESTION = 'What is the square root of the sum of the numbers of letters in the words "hello" and "world"?';

/** Events of one workflow, for checks on what the Temporal UI shows. */
async function history(client: Client, workflowId: string) {
  return (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
}

describe('documents examples', () => {
  it('answers the hello/world calculator question through stringLength, add and sqrt', async () => {
    model = await startScriptedModel([
      call(['stringLength', { s: 'hello' }], ['stringLength', { s: 'world' }]),
      (req) => call(['add', { a: Number(toolResults(req)[0]), b: Number(toolResults(req)[1]) }]),
      (req) => call(['sqrt', { x: Number(toolResults(req)[2]) }]),
      (req) =>
        answer(
          `The square root of the sum of the numbers of letters in the words "hello" and "world" is approximately ${Number(toolResults(req)[3]).toFixed(3)}.`,
        ),
    ]);
    const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL });
    const outcome = await worker.runUntil(async () =>
      runOutcome(await startAgentRun(temporal().client, { message: QUESTION }, { taskQueue })),
    );

    expect(outcome.status).toBe('completed');
    expect(outcome.content).toContain('approximately 3.162');
    expect(outcome.iterations).toBe(4);
    expect(outcome.toolExecutions.map((e) => [e.name, e.arguments, e.result])).toEqual([
      ['stringLength', { s: 'hello' }, '5'],
      ['stringLength', { s: 'world' }, '5'],
      ['add', { a: 5, b: 5 }, '10'],
      ['sqrt', { x: 10 }, String(Math.sqrt(10))],
    ]);
    expect(outcome.toolExecutions[3].value).toBeCloseTo(3.1623, 4);
    expect(outcome.usage.totalTokens).toBeGreaterThan(0);
    expect(outcome.usage.totalTokens).toBe(outcome.usage.promptTokens + outcome.usage.completionTokens);

    // The real openai client sent tools with zod-made schemas, temperature 0, and the conversation.
    const [first, , , last] = model.requests;
    expect(first.temperature).toBe(0);
    expect(first.model).toBe('scripted');
    expect(first.tools?.map((x) => x.function.name).sort()).toEqual([
      'add',
      'search_weather',
      'sqrt',
      'squareRoot',
      'stringLength',
      'sum',
    ]);
    expect(first.messages).toEqual([{ role: 'user', content: QUESTION }]);
    expect(last.messages).toHaveLength(8);
    const assistant = last.messages[1];
    expect(last.messages.slice(2, 4).map((m) => m.tool_call_id)).toEqual(assistant.tool_calls!.map((c) => c.id));

    // What the Temporal UI shows: the message as workflow summary, one summary per activity.
    const handle = temporal().client.workflow.getHandle(outcome.workflowId);
    expect(outcome.workflowId).toMatch(/^agent-what-is-the-square-root-[0-9a-f]{6}$/);
    expect(await (await handle.describe()).staticSummary()).toBe(QUESTION);
    const summaries = (await history(temporal().client, outcome.workflowId))
      .filter((e) => e.activityTaskScheduledEventAttributes)
      .map((e) => JSON.parse(Buffer.from(e.userMetadata!.summary!.data!).toString()));
    expect(summaries).toEqual([
      'model call 1',
      'stringLength(s="hello")',
      'stringLength(s="world")',
      'model call 2',
      'add(a=5, b=5)',
      'model call 3',
      'sqrt(x=10)',
      'model call 4',
    ]);
  });

  it('computes squareRoot(475695037565) with the LangChain4j math tools', async () => {
    model = await startScriptedModel([
      call(['squareRoot', { x: 475695037565 }]),
      (req) => answer(`The square root of 475695037565 is ${Number(toolResults(req)[0]).toFixed(6)}.`),
    ]);
    const outcome = await runAgent(
      temporal(),
      { message: 'What is the square root of 475695037565?', tools: ['sum', 'squareRoot'] },
      { baseURL: model.baseURL },
    );
    expect(outcome).toMatchObject({
      status: 'completed',
      content: 'The square root of 475695037565 is 689706.486532.',
      iterations: 2,
    });
    expect(model.requests[0].tools?.map((x) => x.function.name)).toEqual(['sum', 'squareRoot']);
  });

  it('plans a trip from the Beijing weather (search_weather returns 30)', async () => {
    model = await startScriptedModel([
      call(['search_weather', { city: 'Beijing' }]),
      (req) =>
        answer(
          `Based on the weather in Beijing (${toolResults(req)[0]} degrees Celsius), plan for hot weather and bring strong sunscreen.`,
        ),
    ]);
    const outcome = await runAgent(
      temporal(),
      { message: '根据北京的天气情况,制定一个出游计划', tools: ['search_weather'] },
      { baseURL: model.baseURL },
    );
    expect(outcome.status).toBe('completed');
    expect(outcome.toolExecutions).toEqual([
      {
        id: expect.any(String),
        name: 'search_weather',
        arguments: { city: 'Beijing' },
        result: '30',
        value: 30,
        error: false,
        immediate: false,
      },
    ]);
    expect(outcome.content).toContain('30 degrees');
  });
});
