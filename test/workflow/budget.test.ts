import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { WRAP_UP_INSTRUCTION } from '../../src/core/state/limits';
import { defineAgent } from '../../src/agents/define-agent';
import { add } from '../../scripts/demo-agents';
import type { ModelConfig } from '../../src/models/model-config';
import type { ChatRequest } from '../../src/testing/chat-request';
import { answer, call, lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/**
 * Budgets in real runs: the scripted server reports usage from the size of each request, so a
 * tool loop's calls grow as its conversation does, as a real model's would.
 */
const temporal = useTestTemporal();

/** A model that adds forever: each reply calls `add` again, until it is offered no tools. */
function loopingModel() {
  return startModel((req: ChatRequest) => {
    if (!req.tools?.length) return answer(`best so far: ${req.messages.filter((m) => m.role === 'tool').length} sums`);
    return call(['add', { a: req.messages.length, b: 1 }]);
  });
}

/** Runs `input` on a fresh worker at `baseURL` and returns its outcome. */
async function run(
  baseURL: string,
  input: Parameters<typeof startAgentRun>[1],
  agents?: ReturnType<typeof defineAgent>[],
  model?: Partial<ModelConfig>,
) {
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL,
    ...(agents ? { agents } : {}),
    ...(model ? { model } : {}),
  });
  return worker.runUntil(async () => runOutcome(await startAgentRun(temporal().client, input, { taskQueue })));
}

it('ends a 12-step tool loop early with budget_exceeded, and reports what was spent', async () => {
  const model = await loopingModel();
  const outcome = await run(model.baseURL, {
    message: 'Keep adding.',
    tools: ['add'],
    maxIterations: 12,
    budget: { tokens: 3000 },
  });
  expect(outcome.status).toBe('budget_exceeded');
  expect(outcome.iterations).toBeLessThan(12);
  expect(outcome.iterations).toBe(model.requests.length);
  expect(outcome.usage.totalTokens).toBeLessThanOrEqual(3000);
  expect(outcome.budget).toEqual({
    limit: { tokens: 3000 },
    spent: { tokens: outcome.usage.totalTokens, costUsd: 0 },
    left: { tokens: 3000 - outcome.usage.totalTokens },
  });
});

it('wraps up: one last call without tools, told why, answers the run', async () => {
  const model = await loopingModel();
  const outcome = await run(model.baseURL, {
    message: 'Keep adding.',
    tools: ['add'],
    budget: { tokens: 2000 },
    onBudget: 'wrap_up',
  });
  expect(outcome).toMatchObject({
    status: 'budget_exceeded',
    content: expect.stringMatching(/^best so far: \d+ sums$/),
  });
  const last = model.requests.at(-1)!;
  expect(last.tools ?? []).toEqual([]);
  expect(lastOf(last, 'user')).toBe(WRAP_UP_INSTRUCTION);
  // Told, not kept: the conversation the run holds has no such message.
  expect(JSON.stringify(outcome)).not.toContain('budget for this task is spent');
});

it('lets an agent called as a tool spend only what its caller has left, and counts it to the caller', async () => {
  const model = await startModel((req) => {
    const system = req.messages[0]?.role === 'system' ? String(req.messages[0].content) : '';
    if (system.startsWith('You research')) return req.tools?.length ? call(['add', { a: 1, b: 2 }]) : answer('no');
    if (req.messages.some((m) => m.role === 'tool')) return answer(`researcher said: ${lastOf(req, 'tool')}`);
    return call(['researcher', { message: 'Add things, at length.' }]);
  });
  const researcher = defineAgent({ name: 'researcher', instructions: 'You research.', tools: [add] });
  const lead = defineAgent({ name: 'lead', instructions: 'You lead.', tools: [], agents: [researcher] });
  const outcome = await run(model.baseURL, { agent: 'lead', message: 'Go.', budget: { tokens: 1500 } }, [
    lead,
    researcher,
  ]);
  // The child stopped on what was left of the 1,500 tokens; the lead's next call would pass them.
  expect(outcome.toolExecutions[0]).toMatchObject({
    name: 'researcher',
    error: true,
    result: expect.stringMatching(/stopped without an answer \(budget_exceeded\)/),
  });
  expect(outcome.status).toBe('budget_exceeded');
  expect(outcome.usage.totalTokens).toBeLessThanOrEqual(1500);
  expect(outcome.budget?.spent.tokens).toBe(outcome.usage.totalTokens);
});

it('refuses a cost budget on a model without a price, naming the setting', async () => {
  const model = await startModel(() => answer('unreachable'));
  const outcome = await run(model.baseURL, { message: 'Hi', budget: { costUsd: 0.05 } });
  expect(outcome).toMatchObject({ status: 'failed', errorType: 'ModelCall.NoPrice' });
  expect(outcome.error).toMatch(/add its price to the worker's prices/);
  expect(model.requests).toHaveLength(0);
});

describe.each([
  ['Claude', 'anthropic:claude-haiku-4-5', 'anthropic'],
  ['the Responses API', 'openai-responses:gpt-5', 'responses'],
] as const)('budgets through %s', (_name, modelName, wire) => {
  it('counts the usage its wire format reports, in tokens and in dollars by the price table', async () => {
    const model = await loopingModel();
    const anthropic = { apiKey: 'test-key', baseURL: model.baseURL.replace(/\/v1$/, '') };
    const outcome = await run(
      model.baseURL,
      { message: 'Keep adding.', tools: ['add'], maxIterations: 12, budget: { tokens: 3000, costUsd: 1 } },
      undefined,
      { model: modelName, anthropic },
    );
    expect(model.requests.every((r) => r.wire === wire)).toBe(true);
    expect(outcome.status).toBe('budget_exceeded');
    expect(outcome.iterations).toBeLessThan(12);
    expect(outcome.usage.totalTokens).toBeLessThanOrEqual(3000);
    expect(outcome.usage.costUsd).toBeGreaterThan(0);
    expect(outcome.budget?.spent).toEqual({ tokens: outcome.usage.totalTokens, costUsd: outcome.usage.costUsd });
  });
});
