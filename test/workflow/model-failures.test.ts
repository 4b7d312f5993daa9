import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { ClientError } from '../../src/client/client-error';
import { AGENT_WORKFLOW_TYPE } from '../../src/contracts/definitions';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { freePort } from '../../src/connection/dev-server';
import { answer, call, startScriptedModel, type ScriptedModel } from '../helpers/scripted-model';
import { useTestTemporal, createTestWorker, runAgent } from '../helpers/temporal';

const temporal = useTestTemporal();
let model: ScriptedModel;

const error = (status: number, message: string, headers?: Record<string, string>, code?: string) => ({
  http: { status, body: { error: { message, type: 'error', code: code ?? null } }, headers },
});

describe('model call failures', () => {
  it('retries a 429 (honouring Retry-After) and then succeeds', async () => {
    // Retry-After 3 s, where Temporal's own back-off would retry after 1 s.
    model = await startScriptedModel([answer('after the rate limit')], {
      failFirst: { 0: [error(429, 'Rate limit reached', { 'retry-after': '3' })] },
    });
    const started = Date.now();
    const outcome = await runAgent(temporal(), { message: 'hi' }, { baseURL: model.baseURL });
    expect(outcome).toMatchObject({ status: 'completed', content: 'after the rate limit' });
    expect(model.attempts[0]).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3_000);
  });

  it('retries 5xx and malformed replies', async () => {
    model = await startScriptedModel([answer('fine now')], {
      failFirst: {
        0: [
          error(503, 'overloaded'),
          { http: { status: 200, body: { id: 'x', object: 'chat.completion', choices: [] } } },
        ],
      },
    });
    const outcome = await runAgent(temporal(), { message: 'hi' }, { baseURL: model.baseURL });
    expect(outcome).toMatchObject({ status: 'completed', content: 'fine now' });
    expect(model.attempts[0]).toBe(3);
  });

  it('fails the run at once on 401, without retries, saying what to fix', async () => {
    model = await startScriptedModel([], { fallback: () => error(401, 'Incorrect API key provided') });
    const outcome = await runAgent(temporal(), { message: 'hi' }, { baseURL: model.baseURL });
    expect(model.requests).toHaveLength(1);
    expect(outcome).toMatchObject({ status: 'failed', errorType: 'ModelCall.Auth', iterations: 0 });
    expect(outcome.error).toMatch(
      /rejected the API key \(HTTP 401: .*Incorrect API key provided\); check OPENAI_API_KEY/,
    );
  });

  it('fails on other 4xx without retries, keeping the partial result', async () => {
    model = await startScriptedModel([call(['add', { a: 1, b: 2 }])], {
      fallback: () => error(404, 'The model `gpt-9` does not exist'),
    });
    const outcome = await runAgent(temporal(), { message: 'hi' }, { baseURL: model.baseURL });
    expect(outcome).toMatchObject({ status: 'failed', errorType: 'ModelCall.NotFound', iterations: 1 });
    expect(outcome.error).toMatch(/check AGENT_MODEL/);
    expect(outcome.toolExecutions.map((e) => e.result)).toEqual(['3']);
    expect(model.attempts[1]).toBe(1);
  });

  it('treats an unreachable server as retryable and names the URL', async () => {
    const deadURL = `http://127.0.0.1:${await freePort()}/v1`;
    const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: deadURL });
    const handle = await startAgentRun(temporal().client, { message: 'hi', maxExecutionTime: '20s' }, { taskQueue });
    await worker.runUntil(async () => {
      // Wait for two failed attempts, then look at the pending activity's last failure.
      let failure: string | undefined;
      for (let i = 0; i < 100 && !failure; i++) {
        await new Promise((r) => setTimeout(r, 200));
        const pending = (await handle.describe()).raw.pendingActivities?.[0];
        if ((pending?.attempt ?? 0) >= 2) failure = pending?.lastFailure?.message ?? undefined;
      }
      expect(failure).toContain(`could not reach the model server at ${deadURL}`);
      await handle.terminate('test done');
    });
  });
});

describe('bounds on a model call', () => {
  it('ends a hung model call after modelCallTimeout (all attempts together) with ModelCall.Timeout', async () => {
    // The server accepts the request and never answers; the worker's request timeout is 10 s.
    model = await startScriptedModel([], { fallback: () => new Promise<never>(() => undefined) as never });
    const outcome = await runAgent(temporal(), { message: 'hi', modelCallTimeout: '3s' }, { baseURL: model.baseURL });
    expect(outcome).toMatchObject({ status: 'failed', errorType: 'ModelCall.Timeout', iterations: 0 });
    expect(outcome.error).toMatch(
      /^the model call ran out of time: 3 s waiting for the model over 1 attempt, its modelCallTimeout being 3 s; last failure: the model server at .* did not answer in time/,
    );
    expect(model.requests).toHaveLength(1);
  });

  it('counts modelCallTimeout in time spent waiting for the model, across attempts, not in back-off between them', async () => {
    // Each request takes 2 s and fails with a 503: 2 s + 2 s, then the third gets the last 1 s.
    model = await startScriptedModel([], {
      fallback: async () => (await new Promise((r) => setTimeout(r, 2_000)), error(503, 'overloaded')),
    });
    const started = Date.now();
    const outcome = await runAgent(temporal(), { message: 'hi', modelCallTimeout: '5s' }, { baseURL: model.baseURL });
    expect(outcome).toMatchObject({ status: 'failed', errorType: 'ModelCall.Timeout' });
    expect(outcome.error).toMatch(
      /^the model call ran out of time: 5 s waiting for the model over 3 attempts, its modelCallTimeout being 5 s/,
    );
    expect(model.requests).toHaveLength(3);
    // Wall-clock time includes the back-off (1 s, then 2 s), which the budget does not count.
    expect(Date.now() - started).toBeGreaterThan(7_500);
  });

  it('schedules model and tool calls so a dead worker costs at most 8 s of heartbeat timeout', async () => {
    model = await startScriptedModel([call(['add', { a: 1, b: 2 }]), answer('3')]);
    const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL });
    const handle = await startAgentRun(temporal().client, { message: 'hi' }, { taskQueue });
    await worker.runUntil(handle.result());
    const scheduled = (await handle.fetchHistory())
      .events!.map((e) => e.activityTaskScheduledEventAttributes)
      .filter((a) => a != null);
    const seconds = (d: { seconds?: unknown } | null | undefined) => Number(d?.seconds ?? 0);
    expect(scheduled.map((a) => [a.activityType!.name, seconds(a.heartbeatTimeout)])).toEqual([
      ['callModel', 8],
      ['executeTool', 8],
      ['callModel', 8],
    ]);
    // The budget of one model call with its retries is the activity's to count (in time spent
    // waiting for the model): no wall-clock schedule-to-close, which an outage of Temporal used up.
    expect(seconds(scheduled[0].scheduleToCloseTimeout)).toBe(0);
    expect(seconds(scheduled[0].startToCloseTimeout)).toBe(300);
  });
});

describe('a reply larger than a Temporal payload', () => {
  it('goes by reference to the payload store, like a tool output: a 3 MB answer arrives whole', async () => {
    const huge = 'x'.repeat(3 * 1024 * 1024);
    model = await startScriptedModel([answer(huge)]);
    const outcome = await runAgent(temporal(), { message: 'write a lot' }, { baseURL: model.baseURL });
    expect(outcome.status).toBe('completed');
    expect(outcome.content).toHaveLength(huge.length);
  });

  it('without a payload store, fails the run at once with ModelCall.ReplyTooLarge and a sentence naming the fix', async () => {
    const huge = 'x'.repeat(3 * 1024 * 1024);
    for (const reply of [answer(huge), call(['add', { a: 1, b: 2, note: huge }])]) {
      model = await startScriptedModel([reply]);
      const t = temporal();
      const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL, payloadStorage: false });
      const outcome = await worker.runUntil(async () =>
        runOutcome(await startAgentRun(t.client, { message: 'write a lot' }, { taskQueue })),
      );
      expect(outcome).toMatchObject({ status: 'failed', errorType: 'ModelCall.ReplyTooLarge' });
      expect(outcome.error).toMatch(
        /^the model's reply is 3\.0 MB, more than a Temporal payload may hold \(2\.0 MB\), and this worker has no payload store to record it by reference; give the worker one \(AGENT_PAYLOAD_STORE/,
      );
      expect(model.requests).toHaveLength(1);
      await model.close();
    }
  });
});

describe('bad input', () => {
  it('refuses a duration without a unit in new runs', async () => {
    model = await startScriptedModel([answer('never')]);
    const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL });
    // The client refuses it before anything starts; a workflow given it anyway fails saying why.
    await expect(
      startAgentRun(temporal().client, { message: 'hi', maxExecutionTime: '5' }, { taskQueue }),
    ).rejects.toThrow(/^"maxExecutionTime": invalid duration "5": add a unit/);
    const handle = await temporal().client.workflow.start(AGENT_WORKFLOW_TYPE, {
      taskQueue,
      workflowId: `raw-${randomUUID()}`,
      args: [{ message: 'hi', maxExecutionTime: '5' }],
    });
    const outcome = await worker.runUntil(runOutcome(handle));
    expect(outcome).toMatchObject({ status: 'failed', errorType: 'Agent.InvalidInput' });
    expect(outcome.error).toMatch(/"maxExecutionTime": invalid duration "5": add a unit \(ms, s, m, h, d\)/);
    expect(model.requests).toHaveLength(0);
  });

  it('fails the workflow on unknown tool names before any model call', async () => {
    model = await startScriptedModel([answer('never')]);
    const outcome = await runAgent(
      temporal(),
      { message: 'hi', tools: ['add', 'teleport'] },
      { baseURL: model.baseURL },
    );
    expect(outcome).toMatchObject({ status: 'failed', errorType: 'Agent.UnknownTool' });
    expect(outcome.error).toMatch(/unknown tool: teleport. Registered tools: stringLength, add/);
    expect(model.requests).toHaveLength(0);
  });

  it('fails the workflow on invalid input from non-CLI callers', async () => {
    model = await startScriptedModel([answer('never')]);
    const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL });
    await expect(startAgentRun(temporal().client, { message: 'x', maxIterations: -1 }, { taskQueue })).rejects.toThrow(
      ClientError,
    );
    const handle = await temporal().client.workflow.start(AGENT_WORKFLOW_TYPE, {
      taskQueue,
      workflowId: `raw-${randomUUID()}`,
      args: [{ message: 'x', maxIterations: -1 }],
    });
    await worker.runUntil(expect(handle.result()).rejects.toThrow(WorkflowFailedError));
    const outcome = await runOutcome(handle);
    expect(outcome).toMatchObject({ status: 'failed', errorType: 'Agent.InvalidInput' });
  });
});
