import { applyGuardrailChecks } from '../../src/core/guardrails/guardrails';
import { applyModelReply, nextStep, startRun } from '../../src/core/run/agent-loop';
import type { GuardrailCheck } from '../../src/core/state/guardrail-types';
import type { ModelReply } from '../../src/core/messages/model-reply';
import type { RunState } from '../../src/core/state/run-state';
import type { ToolInfo } from '../../src/core/messages/tool-info';
import { toVerdict } from '../../src/agents/define-guardrail';

/** Guardrails' decisions, without a server: where they come in, and what each verdict does. */
const tools: ToolInfo[] = [
  { name: 'refund', immediate: false, timeoutMs: 1000, retry: { maximumAttempts: 1, initialIntervalMs: 100 } },
];
const usage = { promptTokens: 1, completionTokens: 1, totalTokens: 2 };
const reply = (r: Partial<ModelReply>): ModelReply => ({ content: null, toolCalls: [], usage, ...r }) as ModelReply;
const check = (c: Partial<GuardrailCheck> & Pick<GuardrailCheck, 'verdict'>): GuardrailCheck => ({
  guardrail: 'g',
  kind: 'input',
  ...c,
});

function answered(state: RunState, content: string): RunState {
  const step = nextStep(state);
  if (step.type !== 'call_model') throw new Error(`expected a model call, got ${step.type}`);
  return applyModelReply(state, step, reply({ content }));
}

describe('input guardrails', () => {
  const start = () => startRun({ message: 'Refund everything', inputGuardrails: ['no-fraud'] }, tools);

  it('check the message before the first model call, once', () => {
    const state = start();
    expect(nextStep(state)).toEqual({ type: 'check_guardrails', kind: 'input', names: ['no-fraud'], messageIndex: 0 });
    const allowed = applyGuardrailChecks(state, nextStep(state) as never, [check({ verdict: { action: 'allow' } })]);
    expect(nextStep(allowed).type).toBe('call_model');
  });

  it('end the run with guardrail_tripped when one refuses', () => {
    const state = start();
    const tripped = applyGuardrailChecks(state, nextStep(state) as never, [
      check({ guardrail: 'no-fraud', verdict: { action: 'refuse', reason: 'looks like fraud' } }),
    ]);
    expect(nextStep(tripped)).toEqual({
      type: 'finish',
      status: 'guardrail_tripped',
      content: 'The guardrail "no-fraud" refused the request: looks like fraud',
    });
    expect(tripped.tripped).toEqual({ guardrail: 'no-fraud', kind: 'input', reason: 'looks like fraud' });
  });

  it('treat a verdict their kind cannot give as a refusal', () => {
    const state = start();
    const next = applyGuardrailChecks(state, nextStep(state) as never, [
      check({ verdict: { action: 'retry', reason: 'x' } }),
    ]);
    expect(next.tripped?.reason).toBe('it answered "retry", which a guardrail of inputs cannot');
  });
});

describe('output guardrails', () => {
  const start = () => {
    const s = startRun({ message: 'Hi', outputGuardrails: ['polite'] }, tools);
    return s;
  };

  it('hold the answer until checked; allow ends the run with it', () => {
    const state = answered(start(), 'Go away.');
    const step = nextStep(state);
    expect(step).toEqual({ type: 'check_guardrails', kind: 'output', names: ['polite'], messageIndex: 1 });
    const done = applyGuardrailChecks(state, step as never, [check({ kind: 'output', verdict: { action: 'allow' } })]);
    expect(nextStep(done)).toEqual({ type: 'finish', status: 'completed', content: 'Go away.' });
  });

  it('send the answer back with the reason on retry, costing a model call', () => {
    const state = answered(start(), 'Go away.');
    const retried = applyGuardrailChecks(state, nextStep(state) as never, [
      check({ guardrail: 'polite', kind: 'output', verdict: { action: 'retry', reason: 'be polite' } }),
    ]);
    expect(retried.messages.at(-1)).toEqual({
      role: 'user',
      content: 'Your answer was not accepted (polite: be polite). Write the answer again, taking this into account.',
    });
    expect(nextStep(retried)).toMatchObject({ type: 'call_model', iteration: 2 });
    const again = answered(retried, 'Hello, how can I help?');
    expect(nextStep(again)).toMatchObject({ type: 'check_guardrails', kind: 'output', messageIndex: 3 });
  });
});

describe('tool guardrails', () => {
  const withCall = () => {
    const state = startRun({ message: 'Refund A-1', toolGuardrails: ['limits'] }, tools);
    const step = nextStep(state);
    return applyModelReply(
      state,
      step as never,
      reply({ toolCalls: [{ id: 'c1', type: 'function', function: { name: 'refund', arguments: '{"amount":900}' } }] }),
    );
  };

  it('check each call before approvals and execution; approve makes it wait for a person', () => {
    const state = withCall();
    const step = nextStep(state);
    expect(step).toEqual({
      type: 'check_guardrails',
      kind: 'tool',
      names: ['limits'],
      calls: [{ id: 'c1', name: 'refund', arguments: { amount: 900 } }],
    });
    const next = applyGuardrailChecks(state, step as never, [
      check({ kind: 'tool', callId: 'c1', verdict: { action: 'approve', reason: 'over 500' } }),
    ]);
    expect(nextStep(next)).toMatchObject({ type: 'await_approval', pending: [{ callId: 'c1' }] });
  });

  it('refuse: the call does not run, gets a result, and the run ends', () => {
    const state = withCall();
    const next = applyGuardrailChecks(state, nextStep(state) as never, [
      check({ guardrail: 'limits', kind: 'tool', callId: 'c1', verdict: { action: 'refuse', reason: 'too much' } }),
    ]);
    expect(nextStep(next)).toMatchObject({ type: 'finish', status: 'guardrail_tripped' });
    expect(next.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'c1' });
    expect(next.tripped).toEqual({ guardrail: 'limits', kind: 'tool', reason: 'too much', callId: 'c1' });
  });
});

it('runs without guardrails keep their steps and state shape', () => {
  const state = startRun({ message: 'Hi' }, tools);
  expect(state.guardrails).toBeUndefined();
  expect(nextStep(answered(state, 'Hello'))).toEqual({ type: 'finish', status: 'completed', content: 'Hello' });
});

it('reads guardrail functions’ shorthand results as verdicts', () => {
  expect(toVerdict(undefined)).toEqual({ action: 'allow' });
  expect(toVerdict(true)).toEqual({ action: 'allow' });
  expect(toVerdict(false)).toEqual({ action: 'refuse', reason: 'refused' });
  expect(toVerdict('mentions a card number')).toEqual({ action: 'refuse', reason: 'mentions a card number' });
  expect(toVerdict({ action: 'retry', reason: 'shorter' })).toEqual({ action: 'retry', reason: 'shorter' });
});
