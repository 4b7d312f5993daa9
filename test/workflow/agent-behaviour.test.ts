import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { answer, call, startScriptedModel, toolResults, type ScriptedModel } from '../helpers/scripted-model';
import { useTestTemporal, createTestWorker, runAgent } from '../helpers/temporal';
import { aborted, failAttempts, seenContexts, testRegistry } from '../helpers/test-tools';
import { statusQuery, messagesQuery } from '../../src/contracts/definitions';

const temporal = useTestTemporal();
let model: ScriptedModel;

const registry = testRegistry();
const run = (input: Parameters<typeof runAgent>[1]) =>
  runAgent(temporal(), input, { baseURL: model.baseURL, registry });

describe('parallel tool calls', () => {
  it('schedules all calls of one reply together and returns results in call order', async () => {
    model = await startScriptedModel([
      call(
        ['stringLength', { s: 'a' }, 'id-a'],
        ['stringLength', { s: 'bbb' }, 'id-b'],
        ['add', { a: 2, b: 3 }, 'id-c'],
      ),
      (req) => answer(toolResults(req).join(',')),
    ]);
    const outcome = await run({ message: 'three at once' });
    expect(outcome.content).toBe('1,3,5');
    const second = model.requests[1].messages;
    expect(second.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(['id-a', 'id-b', 'id-c']);

    // All three ActivityTaskScheduled events precede any completion: they ran concurrently.
    const events = (await temporal().client.workflow.getHandle(outcome.workflowId).fetchHistory()).events!;
    const kinds = events
      .map((e) => (e.activityTaskScheduledEventAttributes ? 'S' : e.activityTaskCompletedEventAttributes ? 'C' : ''))
      .join('');
    expect(kinds).toBe('SC' + 'SSSCCC' + 'SC');
  });
});

describe('immediate return', () => {
  it('ends right after the tools when every call is immediate (per-run immediateTools)', async () => {
    model = await startScriptedModel([call(['add', { a: 11, b: 31 }])], { fallback: answer('should not be asked') });
    const outcome = await run({ message: 'What is the value of 11 + 31?', tools: ['add'], immediateTools: ['add'] });
    expect(outcome).toMatchObject({ status: 'immediate', content: null, iterations: 1 });
    expect(outcome.toolExecutions).toEqual([
      {
        id: expect.any(String),
        name: 'add',
        arguments: { a: 11, b: 31 },
        result: '42',
        value: 42,
        error: false,
        immediate: true,
      },
    ]);
    expect(model.requests).toHaveLength(1);
  });

  it('honours tools declared immediate, and void results read "Success"', async () => {
    model = await startScriptedModel([call(['notify', { to: 'ops' }], ['notify', { to: 'dev' }])]);
    const outcome = await run({ message: 'tell both', tools: ['notify'] });
    expect(outcome.status).toBe('immediate');
    expect(outcome.toolExecutions.map((e) => [e.result, e.immediate])).toEqual([
      ['Success', true],
      ['Success', true],
    ]);
  });

  it('goes back to the LLM when immediate and ordinary tools are mixed', async () => {
    model = await startScriptedModel([
      call(['notify', { to: 'ops' }], ['add', { a: 1, b: 1 }]),
      answer('sent, and 1+1=2'),
    ]);
    const outcome = await run({ message: 'mixed' });
    expect(outcome).toMatchObject({ status: 'completed', content: 'sent, and 1+1=2', iterations: 2 });
    expect(toolResults(model.requests[1])).toEqual(['Success', '2']);
  });
});

describe('limits', () => {
  const alwaysCallsAdd = () => call(['add', { a: 1, b: 1 }]);

  it('stops at maxIterations with status max_iterations', async () => {
    model = await startScriptedModel([], { fallback: alwaysCallsAdd });
    const outcome = await run({ message: 'loop', maxIterations: 3 });
    expect(outcome).toMatchObject({
      status: 'max_iterations',
      content: 'Agent stopped due to iteration limit or time limit.',
      iterations: 3,
    });
    expect(model.requests).toHaveLength(3);
    expect(outcome.toolExecutions).toHaveLength(3);
  });

  it('with onLimit "generate" asks once more without tools', async () => {
    model = await startScriptedModel([alwaysCallsAdd(), alwaysCallsAdd(), answer('my best answer')]);
    const outcome = await run({ message: 'loop', maxIterations: 2, onLimit: 'generate' });
    expect(outcome).toMatchObject({ status: 'max_iterations', content: 'my best answer', iterations: 3 });
    expect(model.requests[2].tools).toBeUndefined();
    expect(model.requests[1].tools).toBeDefined();
  });

  it('ends with time_limit when maxExecutionTime runs out, cancelling the running tool', async () => {
    model = await startScriptedModel([call(['slow', { key: 'time-limit' }])]);
    const outcome = await run({ message: 'wait', maxExecutionTime: '2s' });
    expect(outcome).toMatchObject({
      status: 'time_limit',
      content: 'Agent stopped due to iteration limit or time limit.',
      iterations: 1,
    });
    await waitFor(() => aborted['time-limit'] === true);
  });

  it('keeps the time limit across worker restarts (durable timer)', async () => {
    model = await startScriptedModel([call(['slow', { key: 'restart' }])]);
    const first = await createTestWorker(temporal(), { baseURL: model.baseURL, registry });
    const handle = await startAgentRun(
      temporal().client,
      { message: 'wait', maxExecutionTime: '3s' },
      { taskQueue: first.taskQueue },
    );
    await first.worker.runUntil(waitFor(async () => (await handle.query(statusQuery)).phase === 'tools'));
    // No worker runs while the timer expires: the server records it fired, with no worker there.
    await waitFor(async () => ((await handle.fetchHistory()).events ?? []).some((e) => e.timerFiredEventAttributes));
    const second = await createTestWorker(temporal(), { baseURL: model.baseURL, registry, taskQueue: first.taskQueue });
    const outcome = await second.worker.runUntil(runOutcome(handle));
    expect(outcome.status).toBe('time_limit');
  });
});

describe('tool errors go back to the LLM', () => {
  it('an unknown tool, a tool the run was not given, bad JSON and a schema violation', async () => {
    model = await startScriptedModel([
      call(['multiply', { a: 2, b: 3 }], ['sqrt', { x: 4 }], ['add', '{"a": 5, "b":'], ['add', { a: 'five', b: 5 }]),
      answer('recovered'),
    ]);
    const outcome = await run({ message: 'errors', tools: ['add', 'stringLength'] });
    expect(outcome).toMatchObject({ status: 'completed', content: 'recovered' });
    const [unknown, notGiven, badJson, badArgs] = toolResults(model.requests[1]);
    expect(unknown).toBe('Error: there is no tool named "multiply". Available tools: add, stringLength.');
    expect(notGiven).toBe('Error: there is no tool named "sqrt". Available tools: add, stringLength.');
    expect(badJson).toMatch(/^Error: add: the arguments are not valid JSON/);
    expect(badArgs).toMatch(/^Error: invalid arguments for add: a: .*expected number/);
    expect(outcome.toolExecutions.every((e) => e.error)).toBe(true);
  });

  it('a tool that throws after its retries, and the run is not immediate-returned', async () => {
    model = await startScriptedModel([call(['flaky', { key: 'retries' }]), answer('the tool is broken')]);
    const outcome = await run({ message: 'try', tools: ['flaky'], immediateTools: ['flaky'] });
    expect(outcome).toMatchObject({ status: 'completed', content: 'the tool is broken' });
    expect(outcome.toolExecutions[0]).toMatchObject({
      error: true,
      immediate: true,
      result: 'Error: flaky failed: the flux capacitor is offline',
    });
    expect(failAttempts['retries']).toBe(2);
    // Its second attempt was announced to the workflow as it started, with why (a tool_retried event).
    const history = await temporal().client.workflow.getHandle(outcome.workflowId).fetchHistory();
    const retried = history
      .events!.map((e) => e.workflowExecutionSignaledEventAttributes)
      .filter((a) => a?.signalName === 'toolRetried')
      .map((a) => JSON.parse(Buffer.from(a!.input!.payloads![0].data!).toString()));
    expect(retried).toEqual([expect.objectContaining({ name: 'flaky', attempt: 2, reason: 'tool failed' })]);
  });

  it('gives tools a context with a stable idempotency key', async () => {
    model = await startScriptedModel([call(['blob', { n: 1 }, 'ctx-1'], ['blob', { n: 2 }, 'ctx-2']), answer('ok')]);
    const outcome = await run({ message: 'ctx', tools: ['blob'] });
    const mine = seenContexts.filter((c) => c.workflowId === outcome.workflowId);
    expect(mine.map((c) => c.toolCallId).sort()).toEqual(['ctx-1', 'ctx-2']);
    expect(new Set(mine.map((c) => c.idempotencyKey)).size).toBe(2);
    expect(mine[0].idempotencyKey.startsWith(`${outcome.workflowId}/`)).toBe(true);
  });
});

describe('queries', () => {
  it('report status with pending tool calls, and the transcript', async () => {
    model = await startScriptedModel([call(['slow', { key: 'query' }, 'q-1'])]);
    const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL, registry });
    const handle = await startAgentRun(
      temporal().client,
      { message: 'hold on', maxExecutionTime: '20s' },
      { taskQueue },
    );
    await worker.runUntil(async () => {
      await waitFor(async () => (await handle.query(statusQuery)).phase === 'tools');
      const status = await handle.query(statusQuery);
      expect(status).toMatchObject({
        status: 'running',
        iteration: 1,
        maxIterations: 15,
        pendingToolCalls: [{ id: 'q-1', name: 'slow', arguments: { key: 'query' } }],
      });
      const transcript = await handle.query(messagesQuery);
      expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant']);
      await handle.terminate('test done');
    });
  });
});

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}
