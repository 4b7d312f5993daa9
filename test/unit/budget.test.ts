import { applyModelReply, applyToolOutcomes, nextStep, startRun } from '../../src/core/run/agent-loop';
import { BUDGET_STOP_MESSAGE, budgetLeft, budgetProblem, wouldPassBudget } from '../../src/core/state/limits';
import {
  carryOver,
  finishTurn,
  startConversation,
  startTurn,
  turnResult,
} from '../../src/core/conversation/conversation';
import { conversationStatus } from '../../src/core/conversation/conversation-status';
import { runResult, runStatus } from '../../src/core/run/run-result';
import { validateAgentInput } from '../../src/core/run/run-input';
import type { ConversationState } from '../../src/core/conversation/conversation-state';
import type { ModelReply } from '../../src/core/messages/model-reply';
import type { NextStep, RunState } from '../../src/core/state/run-state';
import type { ToolInfo } from '../../src/core/messages/tool-info';

/** Budgets as pure decisions: when a run stops or wraps up, what children and later turns get. */

const add: ToolInfo = {
  name: 'add',
  immediate: false,
  timeoutMs: 1000,
  retry: { maximumAttempts: 1, initialIntervalMs: 1 },
};
const reply = (tokens: number, call?: string, costUsd?: number): ModelReply => ({
  content: call ? null : 'done',
  toolCalls: call ? [{ id: call, type: 'function', function: { name: 'add', arguments: '{"a":1,"b":2}' } }] : [],
  finishReason: call ? 'tool_calls' : 'stop',
  usage: {
    promptTokens: tokens - 20,
    completionTokens: 20,
    totalTokens: tokens,
    ...(costUsd !== undefined ? { costUsd } : {}),
  },
});

/** Runs a tool loop in which every model call costs `tokens` more than the one before, until the loop ends. */
function toolLoop(start: RunState, tokensOf: (call: number) => number, costOf?: (call: number) => number) {
  let state = start;
  const steps: NextStep[] = [];
  for (let step = nextStep(state); step.type !== 'finish'; step = nextStep(state)) {
    steps.push(step);
    if (step.type === 'call_model') {
      const n = state.iterations + 1;
      state = applyModelReply(state, step, reply(tokensOf(n), step.final ? undefined : `c${n}`, costOf?.(n)));
    } else if (step.type === 'run_tools') state = applyToolOutcomes(state, [{ result: '3', error: false }]);
    else throw new Error(`unexpected ${step.type}`);
  }
  return { state, steps };
}

describe('checking budgets', () => {
  it('takes tokens and dollars (0 included, what a child gets when its caller is spent), and names what is wrong', () => {
    expect(budgetProblem({ tokens: 3000 })).toBeUndefined();
    expect(budgetProblem({ costUsd: 0.5, tokens: 0 })).toBeUndefined();
    expect(budgetProblem({})).toMatch(/needs "tokens" or "costUsd"/);
    expect(budgetProblem({ tokens: 1.5 })).toMatch(/whole number/);
    expect(budgetProblem({ usd: 1 })).toMatch(/not "usd"/);
    expect(budgetProblem(3000)).toMatch(/must be an object/);
    expect(validateAgentInput({ message: 'x', budget: { tokens: -1 } })).toEqual([
      expect.stringMatching(/budget.tokens/),
    ]);
    expect(validateAgentInput({ message: 'x', budget: { tokens: 10 }, onBudget: 'later' })).toEqual([
      expect.stringMatching(/"onBudget" must be "stop" or "wrap_up"/),
    ]);
  });

  it('says the next call would pass when what is spent plus the last call is over', () => {
    expect(wouldPassBudget({ tokens: 1000 }, { totalTokens: 0 })).toBe(false);
    expect(wouldPassBudget({ tokens: 1000 }, { totalTokens: 600 }, { tokens: 300 })).toBe(false);
    expect(wouldPassBudget({ tokens: 1000 }, { totalTokens: 800 }, { tokens: 300 })).toBe(true);
    expect(wouldPassBudget({ tokens: 0 }, { totalTokens: 0 })).toBe(true);
    expect(wouldPassBudget({ costUsd: 0.01 }, { totalTokens: 5, costUsd: 0.006 }, { tokens: 5, costUsd: 0.005 })).toBe(
      true,
    );
    expect(budgetLeft({ tokens: 1000, costUsd: 0.3 }, { totalTokens: 1200, costUsd: 0.1 })).toEqual({
      tokens: 0,
      costUsd: 0.2,
    });
  });
});

describe('a run under a budget', () => {
  it('stops a 12-step tool loop early with budget_exceeded, reporting what was spent and left', () => {
    const start = startRun({ message: 'loop', budget: { tokens: 3000 }, maxIterations: 12 }, [add]);
    // Each call re-reads a growing prompt: 300, 400, 500, ... tokens.
    const { state } = toolLoop(start, (n) => 200 + 100 * n);
    // 300 + 400 + 500 + 600 = 1800; the next (at least 600) fits, 2400; then 700 more would pass 3000.
    expect(state.iterations).toBe(5);
    const result = runResult(state, 'wf');
    expect(result).toMatchObject({ status: 'budget_exceeded', content: BUDGET_STOP_MESSAGE });
    expect(result.usage.totalTokens).toBe(2500);
    expect(result.budget).toEqual({
      limit: { tokens: 3000 },
      spent: { tokens: 2500, costUsd: 0 },
      left: { tokens: 500 },
    });
    expect(runStatus(state).budget).toEqual(result.budget);
  });

  it('wraps up with one last call without tools when asked to, and the model is told why', () => {
    const start = startRun({ message: 'loop', budget: { tokens: 1000 }, onBudget: 'wrap_up', maxIterations: 12 }, [
      add,
    ]);
    const { state, steps } = toolLoop(start, () => 300);
    const last = steps[steps.length - 1];
    expect(last).toEqual({ type: 'call_model', iteration: 4, toolNames: [], final: true, wrapUp: true });
    expect(runResult(state, 'wf')).toMatchObject({ status: 'budget_exceeded', content: 'done', iterations: 4 });
  });

  it('counts dollars by the replies’ costs', () => {
    const start = startRun({ message: 'loop', budget: { costUsd: 0.01 }, maxIterations: 12 }, [add]);
    const { state } = toolLoop(
      start,
      () => 100,
      () => 0.003,
    );
    expect(state.iterations).toBe(3);
    expect(runResult(state, 'wf').budget).toEqual({
      limit: { costUsd: 0.01 },
      spent: { tokens: 300, costUsd: 0.009 },
      left: { costUsd: 0.001 },
    });
  });

  it('counts the tokens of agents called as tools toward the caller', () => {
    let state = startRun({ message: 'delegate', budget: { tokens: 1000 } }, [add]);
    state = applyModelReply(
      state,
      { type: 'call_model', iteration: 1, toolNames: ['add'], final: false },
      reply(100, 'c1'),
    );
    state = applyToolOutcomes(state, [
      { result: 'child answer', error: false, usage: { promptTokens: 800, completionTokens: 50, totalTokens: 850 } },
    ]);
    expect(nextStep(state)).toEqual({ type: 'finish', status: 'budget_exceeded', content: BUDGET_STOP_MESSAGE });
  });

  it('changes nothing for runs without a budget', () => {
    const { state } = toolLoop(startRun({ message: 'loop', maxIterations: 3 }, [add]), () => 5000);
    expect(runResult(state, 'wf')).toMatchObject({ status: 'max_iterations' });
    expect(runResult(state, 'wf').budget).toBeUndefined();
    expect(state.lastCall).toBeUndefined();
  });
});

describe('a conversation under a budget', () => {
  it('spends one budget over all its turns: a turn starts from what the others spent and their last call’s size', () => {
    let conv: ConversationState = { ...startConversation({ budget: { tokens: 1000 } }), tools: [add] };
    const first = applyModelReply(
      startTurn(conv, { message: 'first' }),
      { type: 'call_model', iteration: 1, toolNames: [], final: false },
      reply(400),
    );
    expect(turnResult(first, 'c', 1).budget).toEqual({
      limit: { tokens: 1000 },
      spent: { tokens: 400, costUsd: 0 },
      left: { tokens: 600 },
    });
    conv = finishTurn(conv, first);
    expect(conversationStatus('c', conv, undefined, 0, undefined).budget).toMatchObject({ left: { tokens: 600 } });
    // 400 spent, the last call 400: the next fits.
    const second = startTurn(conv, { message: 'second' });
    expect(nextStep(second)).toMatchObject({ type: 'call_model' });
    conv = finishTurn(
      conv,
      applyModelReply(second, { type: 'call_model', iteration: 1, toolNames: [], final: false }, reply(500)),
    );
    // 900 spent, the last call 500: the third turn answers at once, without a model call; across continue-as-new too.
    const stopped = { type: 'finish', status: 'budget_exceeded', content: BUDGET_STOP_MESSAGE };
    expect(nextStep(startTurn(conv, { message: 'third' }))).toEqual(stopped);
    const carried = startConversation({ budget: { tokens: 1000 }, carry: carryOver(conv, 'run-1') });
    expect(nextStep(startTurn(carried, { message: 'third' }))).toEqual(stopped);
  });

  it('with wrap_up, makes the one last call in the turn that reaches the budget; later turns end without a call', () => {
    let conv: ConversationState = {
      ...startConversation({ budget: { tokens: 1000 }, onBudget: 'wrap_up' }),
      tools: [add],
    };
    const first = startTurn(conv, { message: 'first' });
    conv = finishTurn(
      conv,
      applyModelReply(first, { type: 'call_model', iteration: 1, toolNames: [], final: false }, reply(600)),
    );
    // 600 spent, the last call 600: the next would pass, so the second turn wraps up (one call, no tools).
    const second = startTurn(conv, { message: 'second' });
    const wrapUp = nextStep(second);
    expect(wrapUp).toMatchObject({ type: 'call_model', toolNames: [], wrapUp: true });
    if (wrapUp.type !== 'call_model') throw new Error('no wrap-up');
    conv = finishTurn(conv, applyModelReply(second, wrapUp, reply(700)));
    // 1,300 spent: the budget is gone. The third turn ends at once (no model call, nothing more spent).
    const third = startTurn(conv, { message: 'third' });
    expect(nextStep(third)).toEqual({ type: 'finish', status: 'budget_exceeded', content: BUDGET_STOP_MESSAGE });
  });
});
