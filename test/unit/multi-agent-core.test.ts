import { agentToolOutcome, agentToolWorkflowId } from '../../src/core/tool-calls/agent-tools';
import { applyHandoff, handoffOutcome } from '../../src/core/tool-calls/handoffs';
import { carryOver, finishTurn, startConversation, startTurn } from '../../src/core/conversation/conversation';
import { conversationStatus } from '../../src/core/conversation/conversation-status';
import { MAX_WORKFLOW_ID_BYTES } from '../../src/core/state/limits';
import { startRun } from '../../src/core/run/agent-loop';
import type { RecordedTurnResult } from '../../src/core/state/run-results';
import type { ResolvedAgent } from '../../src/core/state/agents';
import type { ToolInfo } from '../../src/core/messages/tool-info';

const tool = (name: string, extra: Partial<ToolInfo> = {}): ToolInfo => ({
  name,
  immediate: false,
  timeoutMs: 1000,
  retry: { maximumAttempts: 1, initialIntervalMs: 1000 },
  ...extra,
});
const billing: ResolvedAgent = {
  settings: { name: 'billing', instructions: 'You are billing.', modelSettings: { model: 'b-1' } },
  tools: [tool('refund'), tool('add')],
};
const usage = { promptTokens: 1, completionTokens: 2, totalTokens: 3 };

describe('handoffs (pure)', () => {
  it('replace the system message, tools and model settings; gates stay on tools the target shares; the revision counts', () => {
    const state = startRun({ message: 'hi', system: 'You triage.' }, [
      tool('add', { needsApproval: true }),
      tool('transfer_to_billing', { handoff: 'billing' }),
    ]);
    const handed = applyHandoff(state, billing);
    expect(handed.messages[0]).toEqual({ role: 'system', content: 'You are billing.' });
    expect(handed.messages.slice(1)).toEqual(state.messages.slice(1));
    expect(handed.tools).toEqual([tool('refund'), tool('add', { needsApproval: true })]);
    expect(handed.agent).toEqual({ name: 'billing', modelSettings: { model: 'b-1' } });
    expect(handed.revision).toBe(1);
    expect(
      applyHandoff(handed, { settings: { name: 'triage', instructions: 'You triage.' }, tools: [] }).revision,
    ).toBe(2);
    // A run without a system message gets one.
    expect(applyHandoff(startRun({ message: 'hi' }, []), billing).messages.map((m) => m.role)).toEqual([
      'system',
      'user',
    ]);
  });

  it("keep the agent a run speaks as in its state: what it started as, then the target, with the run's output schema and tool calling", () => {
    const output = { type: 'object', properties: { n: { type: 'number' } } };
    const state = startRun(
      { message: 'hi', agent: 'triage', modelSettings: { model: 't-1' }, toolCalling: 'react', output },
      [],
    );
    expect(state.agent).toEqual({ name: 'triage', modelSettings: { model: 't-1' }, toolCalling: 'react', output });
    expect(state.handedOff).toBeUndefined();
    const handed = applyHandoff(state, billing);
    expect(handed.agent).toEqual({ name: 'billing', modelSettings: { model: 'b-1' }, toolCalling: 'react', output });
    expect(handed.handedOff).toBe(true);
    // Only a handoff names the agent in the result: a run of one agent reads like before.
    expect(startRun({ message: 'hi' }, []).agent).toEqual({});
  });

  it('tell the LLM which handoff went ahead', () => {
    expect(handoffOutcome('billing', 'billing')).toEqual({
      result: 'Transferred to billing: the billing agent takes it from here.',
      error: false,
    });
    expect(handoffOutcome('shipping', 'billing')).toEqual({
      result: 'Error: only one handoff per reply; the conversation went to billing.',
      error: true,
    });
    expect(handoffOutcome('billing', undefined, 'no agent named "billing"')).toEqual({
      result: 'Error: could not hand off to billing: no agent named "billing"',
      error: true,
    });
  });

  it('carry into the conversation: later turns, continue-as-new and the status are the new agent', () => {
    let conv = startConversation({
      agent: 'triage',
      system: 'You triage.',
      modelSettings: { model: 't-1', temperature: 0.5 },
      tools: undefined,
    });
    conv = { ...conv, tools: [tool('transfer_to_billing', { handoff: 'billing' })] };
    const turn = applyHandoff(startTurn(conv, { message: 'invoice' }), billing);
    expect(conversationStatus('c', conv, { turn: 1, run: turn }, 0, undefined).agent).toBe('billing');
    conv = finishTurn(conv, turn);
    expect(conv.options).toMatchObject({
      agent: 'billing',
      system: 'You are billing.',
      modelSettings: { model: 'b-1' },
    });
    expect(conv.tools?.map((t) => t.name)).toEqual(['refund', 'add']);
    expect(conv.revision).toBe(1);
    expect(startTurn(conv, { message: 'next' }).revision).toBe(1);
    expect(carryOver(conv, 'run-1').revision).toBe(1);
    expect(conversationStatus('c', conv, undefined, 0, undefined).agent).toBe('billing');
  });
});

describe('agents as tools (pure)', () => {
  const run = (over: Partial<RecordedTurnResult>): RecordedTurnResult => ({
    workflowId: 'child',
    status: 'completed',
    content: 'the answer',
    toolExecutions: [],
    iterations: 1,
    usage,
    ...over,
  });

  it("turn the child's result into the caller's tool outcome", () => {
    expect(agentToolOutcome('r', 'child', run({}))).toEqual({
      result: 'the answer',
      error: false,
      usage,
      childWorkflowId: 'child',
    });
    expect(agentToolOutcome('r', 'child', run({ output: { n: 1 } }))).toMatchObject({
      result: '{"n":1}',
      value: { n: 1 },
      error: false,
    });
    expect(agentToolOutcome('r', 'child', run({ status: 'max_iterations', content: 'stopped' }))).toMatchObject({
      result: 'Error: the r agent stopped without an answer (max_iterations): stopped',
      error: true,
    });
    expect(
      agentToolOutcome(
        'r',
        'child',
        run({ status: 'failed', content: null, error: 'bad key', errorType: 'ModelCall.Auth' }),
      ),
    ).toMatchObject({ result: 'Error: the r agent failed (ModelCall.Auth): bad key', error: true });
    const immediate = run({
      status: 'immediate',
      content: null,
      toolExecutions: [{ id: 'c', name: 'lookup', arguments: {}, result: 'found it', error: false, immediate: true }],
    });
    expect(agentToolOutcome('r', 'child', immediate)).toMatchObject({ result: 'found it', error: false });
  });

  it('name the child after the caller, turn, agent and call, within the id limit', () => {
    expect(agentToolWorkflowId('support-1', 'researcher', 'call_9')).toBe('support-1-researcher-call_9');
    expect(agentToolWorkflowId('conv-1', 'researcher', 'call_9', 4)).toBe('conv-1-t4-researcher-call_9');
    const long = agentToolWorkflowId('x'.repeat(MAX_WORKFLOW_ID_BYTES), 'researcher', 'call_9');
    expect(long.length).toBe(MAX_WORKFLOW_ID_BYTES);
    expect(long.endsWith('-researcher-call_9')).toBe(true);
  });
});
