import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { streamEvents } from '../../src/client/event-stream';
import { defineAgent } from '../../src/agents/define-agent';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { answer, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/** An agent's model and its fallbacks: `model: [primary, fallback]`. */
const temporal = useTestTemporal();

/**
 * One scripted server for both models: Claude (the primary) fails with `status` and `type`;
 * the OpenAI-compatible endpoint (the fallback, `gpt-backup`) answers. Returns the server and a
 * worker whose agent `agent` has the two models.
 */
async function primaryFailing(status: number, type: string, agent: string) {
  const llm = await startModel((req: ChatRequest) =>
    req.wire === 'anthropic'
      ? { http: { status, body: { type: 'error', error: { type, message: type } } } }
      : answer('Answered by the fallback.'),
  );
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: llm.baseURL,
    model: { anthropic: { apiKey: 'k', baseURL: llm.baseURL.replace(/\/v1$/, '') } },
    agents: [
      defineAgent({ name: agent, instructions: 'Answer.', tools: [], model: ['anthropic:claude-test', 'gpt-backup'] }),
    ],
  });
  return { llm, worker, taskQueue };
}

it('falls back to the next model at once when the provider is overloaded, and says so', async () => {
  // Claude is overloaded; the OpenAI-compatible endpoint of the same server answers.
  const { llm, worker, taskQueue } = await primaryFailing(529, 'overloaded_error', 'resilient');
  const { outcome, events } = await worker.runUntil(async () => {
    const handle = await startAgentRun(temporal().client, { agent: 'resilient', message: 'Hello?' }, { taskQueue });
    const outcome = await runOutcome(handle);
    const events = [];
    for await (const e of streamEvents(temporal().client, handle.workflowId, { after: -1 })) events.push(e);
    return { outcome, events };
  });
  expect(outcome).toMatchObject({ status: 'completed', content: 'Answered by the fallback.', iterations: 1 });
  // Overloaded with a fallback waiting: one attempt, not eight.
  expect(llm.requests.map((r) => r.wire ?? 'chat-completions')).toEqual(['anthropic', 'chat-completions']);
  expect(llm.requests[1].model).toBe('gpt-backup');
  const fallback = events.find((e) => e.type === 'model_fallback');
  expect(fallback).toMatchObject({
    type: 'model_fallback',
    from: 'anthropic:claude-test',
    to: 'gpt-backup',
    error: expect.stringMatching(/^ModelCall\.Overloaded: .*overloaded/),
  });
  // The answer is the fallback call's: its text follows under its own call number.
  const texts = events.filter((e) => e.type === 'text_delta');
  expect(texts.every((e) => e.type === 'text_delta' && e.call === (fallback as { call: number }).call)).toBe(true);
  expect(Object.keys(outcome.usage.byModel ?? {})).toEqual(['gpt-backup']);
});

it('does not fall back on a mistake the next model would make too (a bad key fails the run)', async () => {
  const { llm, worker, taskQueue } = await primaryFailing(401, 'authentication_error', 'strict');
  const outcome = await worker.runUntil(async () =>
    runOutcome(await startAgentRun(temporal().client, { agent: 'strict', message: 'Hello?' }, { taskQueue })),
  );
  expect(outcome).toMatchObject({ status: 'failed', errorType: 'ModelCall.Auth' });
  expect(llm.requests).toHaveLength(1);
});

it('falls back to the next model when its model’s turn at the fleet’s rate limit is further off than maxWaitMs', async () => {
  // One request a minute for the primary: the second run's turn is a minute away, more than it may wait.
  const llm = await startModel((req: ChatRequest) => answer(`Answered by ${req.model}.`));
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: llm.baseURL,
    rateLimits: { 'gpt-primary': { requestsPerMinute: 1, maxWaitMs: 2_000 } },
    agents: [
      defineAgent({ name: 'patient', instructions: 'Answer.', tools: [], model: ['gpt-primary', 'gpt-backup'] }),
    ],
  });
  const outcomes = await worker.runUntil(async () => {
    const first = await runOutcome(
      await startAgentRun(temporal().client, { agent: 'patient', message: 'one' }, { taskQueue }),
    );
    const second = await startAgentRun(temporal().client, { agent: 'patient', message: 'two' }, { taskQueue });
    const events = [];
    const outcome = await runOutcome(second);
    for await (const e of streamEvents(temporal().client, second.workflowId, { after: -1 })) events.push(e);
    return { first, second: outcome, events };
  });
  expect(outcomes.first).toMatchObject({ status: 'completed', content: 'Answered by gpt-primary.' });
  expect(outcomes.second).toMatchObject({ status: 'completed', content: 'Answered by gpt-backup.' });
  expect(outcomes.events.find((e) => e.type === 'model_fallback')).toMatchObject({
    from: 'gpt-primary',
    to: 'gpt-backup',
    error: expect.stringMatching(
      /^ModelCall\.RateLimit: gpt-primary is at its rate limit: this call's turn is \d+ s away, more than its maxWaitMs/,
    ),
  });
  // The primary was asked once: the second run never waited for its turn.
  expect(llm.requests.map((r) => r.model)).toEqual(['gpt-primary', 'gpt-backup']);
});
