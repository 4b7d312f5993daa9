import {
  applyModelReply,
  applyInterruption,
  applyToolOutcomes,
  nextStep,
  startRun,
} from '../../src/core/run/agent-loop';
import { LIMIT_STOP_MESSAGE, WRAP_UP_INSTRUCTION } from '../../src/core/state/limits';
import { modelCallInput } from '../../src/core/run/model-call-input';
import { runResult, runStatus } from '../../src/core/run/run-result';
import type { ModelReply } from '../../src/core/messages/model-reply';
import type { NextStep, RunState } from '../../src/core/state/run-state';
import type { ToolInfo } from '../../src/core/messages/tool-info';

const tool = (name: string, immediate = false): ToolInfo => ({
  name,
  immediate,
  timeoutMs: 1000,
  retry: { maximumAttempts: 1, initialIntervalMs: 10 },
});
const TOOLS = [tool('add'), tool('sqrt'), tool('notify', true)];
const usage = { promptTokens: 10, completionTokens: 2, totalTokens: 12 };
const reply = (content: string | null, calls: Array<[string, unknown, string?]> = []): ModelReply => ({
  content,
  toolCalls: calls.map(([name, args, id], i) => ({
    id: id ?? `c${i}`,
    type: 'function',
    function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) },
  })),
  finishReason: calls.length ? 'tool_calls' : 'stop',
  usage,
});

function modelStep(state: RunState): Extract<NextStep, { type: 'call_model' }> {
  const step = nextStep(state);
  if (step.type !== 'call_model') throw new Error(`expected call_model, got ${step.type}`);
  return step;
}

describe('agent loop', () => {
  it('starts with the system and user messages and asks for a model call with every tool', () => {
    const s = startRun({ message: 'hi', system: 'be brief' }, TOOLS);
    expect(s.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
    ]);
    expect(nextStep(s)).toEqual({
      type: 'call_model',
      iteration: 1,
      toolNames: ['add', 'sqrt', 'notify'],
      final: false,
    });
  });

  it('finishes with the answer when the LLM replies without tool calls', () => {
    let s = startRun({ message: 'hi' }, TOOLS);
    s = applyModelReply(s, modelStep(s), reply('hello!'));
    expect(nextStep(s)).toEqual({ type: 'finish', status: 'completed', content: 'hello!' });
    expect(runResult(s, 'wf')).toMatchObject({
      workflowId: 'wf',
      status: 'completed',
      content: 'hello!',
      iterations: 1,
      usage,
    });
  });

  it('plans tool calls, then records results in call order with matching tool_call_ids', () => {
    let s = startRun({ message: 'q' }, TOOLS);
    s = applyModelReply(
      s,
      modelStep(s),
      reply(null, [
        ['add', { a: 1, b: 2 }, 'x1'],
        ['sqrt', { x: 9 }, 'x2'],
      ]),
    );
    const step = nextStep(s);
    expect(step.type).toBe('run_tools');
    if (step.type !== 'run_tools') return;
    expect(step.calls.map((c) => [c.call.id, c.arguments])).toEqual([
      ['x1', { a: 1, b: 2 }],
      ['x2', { x: 9 }],
    ]);
    s = applyToolOutcomes(s, [
      { result: '3', value: 3, json: true, error: false },
      { result: '3.0', value: 3, error: false },
    ]);
    // A result that is the JSON of the tool's value says so: clients read the value back from it.
    expect(s.messages.slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 'x1', content: '3', json: true },
      { role: 'tool', tool_call_id: 'x2', content: '3.0' },
    ]);
    expect(s.toolExecutions).toEqual([
      { id: 'x1', name: 'add', arguments: { a: 1, b: 2 }, result: '3', value: 3, error: false, immediate: false },
      { id: 'x2', name: 'sqrt', arguments: { x: 9 }, result: '3.0', value: 3, error: false, immediate: false },
    ]);
    expect(nextStep(s)).toMatchObject({ type: 'call_model', iteration: 2 });
  });

  it('keeps how many attempts a tool call took (and how many lost their worker) when it took more than one', () => {
    let s = startRun({ message: 'q' }, TOOLS);
    s = applyModelReply(
      s,
      modelStep(s),
      reply(null, [
        ['add', { a: 1, b: 2 }, 'x1'],
        ['sqrt', { x: 9 }, 'x2'],
      ]),
    );
    s = applyToolOutcomes(s, [
      { result: '3', error: false, attempts: 4, workerLosses: 3 },
      { result: '3', error: false, attempts: 1 },
    ]);
    expect(s.toolExecutions.map((e) => [e.attempts, e.workerLosses])).toEqual([
      [4, 3],
      [undefined, undefined],
    ]);
  });

  it("leaves out of the run's result the tool outputs its history holds, but not an immediate tool's answer", () => {
    let s = startRun({ message: 'q' }, TOOLS);
    s = applyModelReply(
      s,
      modelStep(s),
      reply(null, [
        ['add', { a: 1, b: 2 }, 'x1'],
        ['sqrt', { x: -1 }, 'x2'],
      ]),
    );
    s = applyToolOutcomes(s, [
      { result: '3', value: 3, error: false, recorded: true },
      { result: 'Error: sqrt failed', error: true }, // made by the workflow after retries: not in history
    ]);
    expect(s.toolExecutions.map((e) => e.resultInHistory)).toEqual([true, undefined]);
    s = applyModelReply(s, modelStep(s), reply(null, [['notify', {}, 'x3']]));
    s = applyToolOutcomes(s, [{ result: 'sent', error: false, recorded: true }]);
    const result = runResult(s, 'wf', { omitRecordedResults: true });
    expect(result.toolExecutions).toEqual([
      { id: 'x1', name: 'add', arguments: { a: 1, b: 2 }, error: false, immediate: false, resultInHistory: true },
      { id: 'x2', name: 'sqrt', arguments: { x: -1 }, result: 'Error: sqrt failed', error: true, immediate: false },
      { id: 'x3', name: 'notify', arguments: {}, result: 'sent', error: false, immediate: true }, // kept whole: the mark only flags left-out results
    ]);
    // Without the option (runs recorded before the change), everything stays.
    expect(runResult(s, 'wf').toolExecutions[0]).toEqual({
      id: 'x1',
      name: 'add',
      arguments: { a: 1, b: 2 },
      result: '3',
      value: 3,
      error: false,
      immediate: false,
    });
  });

  it('answers a call to a tool the run was not given without an activity, naming the available tools', () => {
    let s = startRun({ message: 'q' }, [tool('add')]);
    s = applyModelReply(s, modelStep(s), reply(null, [['sqrt', { x: 4 }]]));
    const step = nextStep(s);
    if (step.type !== 'run_tools') throw new Error('expected run_tools');
    expect(step.calls[0].resolved).toEqual({
      result: 'Error: there is no tool named "sqrt". Available tools: add.',
      error: true,
    });
  });

  it('keeps unparseable arguments as {} for the record (the tool activity reports the error)', () => {
    let s = startRun({ message: 'q' }, TOOLS);
    s = applyModelReply(s, modelStep(s), reply(null, [['add', '{"a": 1,']]));
    const step = nextStep(s);
    if (step.type !== 'run_tools') throw new Error('expected run_tools');
    expect(step.calls[0]).toMatchObject({ arguments: {}, tool: { name: 'add' } });
  });

  it('replaces missing and repeated tool-call ids with stable unique ones', () => {
    let s = startRun({ message: 'q' }, TOOLS);
    s = applyModelReply(
      s,
      modelStep(s),
      reply(null, [
        ['add', {}, 'same'],
        ['add', {}, 'same'],
        ['add', {}, ''],
      ]),
    );
    const step = nextStep(s);
    if (step.type !== 'run_tools') throw new Error('expected run_tools');
    expect(step.calls.map((c) => c.call.id)).toEqual(['same', 'call_1_1', 'call_1_2']);
    s = applyToolOutcomes(
      s,
      step.calls.map(() => ({ result: '0', error: false })),
    );
    s = applyModelReply(s, modelStep(s), reply(null, [['add', {}, 'same']]));
    const next = nextStep(s);
    if (next.type !== 'run_tools') throw new Error('expected run_tools');
    expect(next.calls[0].call.id).toBe('call_2_0');
  });

  describe('immediate return', () => {
    it('ends the run with content null when every call is immediate and none failed', () => {
      let s = startRun({ message: 'q' }, TOOLS);
      s = applyModelReply(
        s,
        modelStep(s),
        reply(null, [
          ['notify', { to: 'a' }],
          ['notify', { to: 'b' }],
        ]),
      );
      s = applyToolOutcomes(s, [
        { result: 'Success', error: false },
        { result: 'Success', error: false },
      ]);
      expect(nextStep(s)).toEqual({ type: 'finish', status: 'immediate', content: null });
      expect(s.toolExecutions.every((e) => e.immediate)).toBe(true);
    });

    it('goes back to the LLM when the reply mixes immediate and ordinary tools', () => {
      let s = startRun({ message: 'q' }, TOOLS);
      s = applyModelReply(
        s,
        modelStep(s),
        reply(null, [
          ['notify', {}],
          ['add', { a: 1, b: 1 }],
        ]),
      );
      s = applyToolOutcomes(s, [
        { result: 'Success', error: false },
        { result: '2', error: false },
      ]);
      expect(nextStep(s).type).toBe('call_model');
    });

    it('goes back to the LLM when an immediate tool failed', () => {
      let s = startRun({ message: 'q' }, TOOLS);
      s = applyModelReply(s, modelStep(s), reply(null, [['notify', {}]]));
      s = applyToolOutcomes(s, [{ result: 'Error: boom', error: true }]);
      expect(nextStep(s).type).toBe('call_model');
    });
  });

  describe('limits', () => {
    const loopOnce = (s: RunState): RunState => {
      s = applyModelReply(s, modelStep(s), reply(null, [['add', { a: 1, b: 1 }]]));
      return applyToolOutcomes(s, [{ result: '2', error: false }]);
    };

    it('stops at maxIterations with the LangChain message', () => {
      let s = startRun({ message: 'q', maxIterations: 2 }, TOOLS);
      s = loopOnce(loopOnce(s));
      expect(s.iterations).toBe(2);
      expect(nextStep(s)).toEqual({ type: 'finish', status: 'max_iterations', content: LIMIT_STOP_MESSAGE });
    });

    it('defaults to 15 iterations', () => {
      let s = startRun({ message: 'q' }, TOOLS);
      for (let i = 0; i < 15; i++) s = loopOnce(s);
      expect(nextStep(s)).toMatchObject({ type: 'finish', status: 'max_iterations' });
    });

    it('with onLimit "generate" makes one last call without tools and returns its text', () => {
      let s = startRun({ message: 'q', maxIterations: 1, onLimit: 'generate' }, TOOLS);
      s = loopOnce(s);
      const last = modelStep(s);
      expect(last).toEqual({ type: 'call_model', iteration: 2, toolNames: [], final: true });
      // Even if the server ignores the missing tools and asks for one, the run ends here.
      s = applyModelReply(s, last, reply('best effort', [['add', {}]]));
      expect(nextStep(s)).toEqual({ type: 'finish', status: 'max_iterations', content: 'best effort' });
      expect(s.iterations).toBe(2);
    });

    it('ends with time_limit when the timer fires', () => {
      const s = applyInterruption(loopOnce(startRun({ message: 'q' }, TOOLS)), 'time_limit');
      expect(runResult(s, 'wf')).toMatchObject({ status: 'time_limit', content: LIMIT_STOP_MESSAGE, iterations: 1 });
    });
  });

  it('reports status: phase, iteration and pending tool calls', () => {
    let s = startRun({ message: 'q', maxIterations: 5 }, TOOLS);
    expect(runStatus(s)).toMatchObject({
      state: 'thinking',
      status: 'running',
      phase: 'model',
      iteration: 0,
      maxIterations: 5,
      pendingToolCalls: [],
    });
    s = applyModelReply(s, modelStep(s), reply(null, [['add', { a: 2, b: 3 }, 'k']]));
    expect(runStatus(s)).toMatchObject({
      state: 'running_tools',
      phase: 'tools',
      iteration: 1,
      pendingToolCalls: [{ id: 'k', name: 'add', arguments: { a: 2, b: 3 } }],
      messageCount: 2,
    });
    const gated = startRun({ message: 'q' }, [{ ...TOOLS[0], needsApproval: true }]);
    const asked = applyModelReply(gated, modelStep(gated), reply(null, [[TOOLS[0].name, {}, 'k']]));
    expect(runStatus(asked)).toMatchObject({
      state: 'awaiting_approval',
      phase: 'approval',
      pendingApprovals: [expect.objectContaining({ callId: 'k' })],
    });
    s = applyToolOutcomes(s, [{ result: '5', error: false }]);
    s = applyModelReply(s, modelStep(s), reply('5', []));
    expect(runStatus(s)).toMatchObject({ state: 'completed', status: 'completed', phase: 'done' });
  });

  it('refuses tool outcomes that do not match the pending calls', () => {
    let s = startRun({ message: 'q' }, TOOLS);
    expect(() => applyToolOutcomes(s, [])).toThrow(/no tool calls are pending/);
    s = applyModelReply(s, modelStep(s), reply(null, [['add', {}]]));
    expect(() => applyToolOutcomes(s, [])).toThrow(/expected 1 outcomes/);
  });

  it('keeps state JSON-serialisable (it crosses queries and results)', () => {
    let s = startRun({ message: 'q' }, TOOLS);
    s = applyModelReply(s, modelStep(s), reply(null, [['add', { a: 1, b: 2 }]]));
    expect(JSON.parse(JSON.stringify(s))).toEqual(s);
  });
});

describe('which model answered', () => {
  it('records the model of each reply, and names them in the result when more than one answered', () => {
    let s = startRun({ message: 'go' }, TOOLS);
    s = applyModelReply(s, modelStep(s), { ...reply(null, [['add', { a: 1, b: 2 }]]), model: 'backup' });
    s = applyToolOutcomes(s, [{ result: '3', value: 3, error: false }]);
    s = applyModelReply(s, modelStep(s), { ...reply('3'), model: 'smart' });
    expect(runResult(s, 'wf').models).toEqual(['backup', 'smart']);
    expect(runResult(s, 'wf').usage.byModel).toEqual({ backup: usage, smart: usage });

    let one = startRun({ message: 'go' }, TOOLS);
    one = applyModelReply(one, modelStep(one), { ...reply('hi'), model: 'smart' });
    expect(runResult(one, 'wf').models).toBeUndefined();
    // Replies of older workers name no model: nothing changes for them.
    let old = startRun({ message: 'go' }, TOOLS);
    old = applyModelReply(old, modelStep(old), reply('hi'));
    expect(old.models).toBeUndefined();
    expect(runResult(old, 'wf').usage).toEqual(usage);
  });
});

describe('modelCallInput: the model call a step asks for, by reference', () => {
  const site = { workflowId: 'wf', runId: 'r1' };
  it('gives the range of messages, the tools, and only the settings a run has', () => {
    const s = startRun({ message: 'q', system: 'Be brief.' }, TOOLS);
    const step = modelStep(s);
    expect(modelCallInput(s, step, site)).toEqual({
      workflowId: 'wf',
      runId: 'r1',
      messageCount: 2,
      pinned: 1,
      from: 1,
      toolNames: TOOLS.map((t) => t.name),
    });
  });

  it('names the agent, its output schema, the stream, the time budget, a wrap-up, a cost budget and a fallback model', () => {
    const s = startRun(
      {
        message: 'q',
        agent: 'clerk',
        modelSettings: { model: 'main' },
        output: { type: 'object' },
        modelCallTimeout: '2m',
        budget: { costUsd: 1 },
        onBudget: 'wrap_up',
      },
      TOOLS,
    );
    const step = { ...modelStep(s), wrapUp: true as const, toolNames: [] };
    expect(modelCallInput(s, step, { ...site, streamCall: 3, model: 'backup' })).toMatchObject({
      agent: 'clerk',
      output: { type: 'object' },
      settings: { model: 'backup' },
      stream: { call: 3 },
      timeoutMs: 120_000,
      instruction: WRAP_UP_INSTRUCTION,
      needsCost: true,
      toolNames: [],
    });
    expect(modelCallInput(s, modelStep(s), site).settings).toEqual({ model: 'main' });
  });
});
