import { applyInterruption, applyModelReply, applyToolOutcomes, nextStep } from '../../src/core/run/agent-loop';
import {
  approvalProblem,
  askPerson,
  pendingApprovals,
  personAnswer,
  settleQuestion,
  decideApproval,
  expireApprovals,
} from '../../src/core/tool-calls/approvals';
import { countModelAnswer } from '../../src/core/tool-calls/tool-questions';
import {
  carryOver,
  finishTurn,
  startConversation,
  startTurn,
  turnProblem,
  turnResult,
  validateConversationOptions,
  withTurnApprovals,
} from '../../src/core/conversation/conversation';
import { conversationStatus, transcriptPage } from '../../src/core/conversation/conversation-status';
import { memoryWindowStart, modelContextRange } from '../../src/core/context/message-window';
import { messagesPage, type ChatMessage } from '../../src/core/messages/chat-message';
import type { ConversationState } from '../../src/core/conversation/conversation-state';
import type { ModelReply } from '../../src/core/messages/model-reply';
import type { RunState } from '../../src/core/state/run-state';
import type { ToolInfo } from '../../src/core/messages/tool-info';
import { checkJsonArguments, defineJsonSchemaTool, ToolRegistry } from '../../src/tools';
import {
  answeredTurnOf,
  messageIdProblem,
  REMEMBERED_MESSAGE_IDS,
  withAnsweredMessage,
} from '../../src/core/messages/message-ids';

const u = (content: string): ChatMessage => ({ role: 'user', content });
const a = (content: string): ChatMessage => ({ role: 'assistant', content });
const calls = (...ids: string[]): ChatMessage => ({
  role: 'assistant',
  content: null,
  tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'f', arguments: '{}' } })),
});
const t = (id: string): ChatMessage => ({ role: 'tool', tool_call_id: id, content: 'r' });
const sys: ChatMessage = { role: 'system', content: 's' };

const tool = (name: string, extra: Partial<ToolInfo> = {}): ToolInfo => ({
  name,
  immediate: false,
  timeoutMs: 1000,
  retry: { maximumAttempts: 1, initialIntervalMs: 1 },
  ...extra,
});
const reply = (over: Partial<ModelReply>): ModelReply => ({
  content: null,
  toolCalls: [],
  finishReason: 'stop',
  usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
  ...over,
});
const toolCall = (id: string, name: string, args: object) => ({
  id,
  type: 'function' as const,
  function: { name, arguments: JSON.stringify(args) },
});

function modelStep(state: RunState) {
  const step = nextStep(state);
  if (step.type !== 'call_model') throw new Error(`expected call_model, got ${step.type}`);
  return step;
}

describe('memory window', () => {
  it('keeps the last N messages after the pinned system message', () => {
    const msgs = [sys, u('1'), a('1'), u('2'), a('2'), u('3')];
    expect(memoryWindowStart(msgs, 3, 1)).toBe(3);
    expect(memoryWindowStart(msgs, 20, 1)).toBe(1);
    expect(modelContextRange(msgs, 3)).toEqual({ messageCount: 6, pinned: 1, from: 3 });
    expect(modelContextRange(msgs, undefined)).toEqual({ messageCount: 6, pinned: 1, from: 1 });
    expect(modelContextRange([u('1'), a('1'), u('2')], 2)).toEqual({ messageCount: 3, pinned: 0, from: 1 });
  });

  it('reaches back to the assistant message instead of cutting its tool results off', () => {
    const msgs = [u('q'), calls('x', 'y', 'z'), t('x'), t('y'), t('z')];
    expect(memoryWindowStart(msgs, 3)).toBe(1); // 4 messages: the call and all three results
    expect(memoryWindowStart([...msgs, a('done')], 3)).toBe(1); // the last 3 start at a result: back to its call
  });
});

describe('conversation options and messages', () => {
  it('validates options', () => {
    expect(validateConversationOptions({ memoryWindow: 2 })).toEqual([
      expect.stringContaining('"memoryWindow" must be an integer >= 3'),
    ]);
    expect(validateConversationOptions({ idleTimeout: 'soon', approvalTools: 'add' })).toEqual([
      '"approvalTools" must be an array of tool names',
      expect.stringContaining('"idleTimeout"'),
    ]);
    expect(validateConversationOptions({ memoryWindow: 3, idleTimeout: '24h', approvalTimeout: '1h' })).toEqual([]);
  });

  it('checks each message: empty, oversized, unknown tools, closing', () => {
    const tools = [tool('add')];
    expect(turnProblem({ message: ' ' }, tools, false)).toMatch(/non-empty/);
    expect(turnProblem({ message: 'x'.repeat(100_001) }, tools, false)).toMatch(/longer than/);
    expect(turnProblem({ message: 'hi', tools: ['add', 'nope'] }, tools, false)).toEqual(
      expect.stringMatching(/^unknown tool nope; this conversation's tools: add \(set by the message that started it/),
    );
    expect(turnProblem({ message: 'hi', tools: ['nope'] }, undefined, false)).toBeUndefined(); // checked once the tools are known
    expect(turnProblem({ message: 'hi' }, tools, true)).toMatch(/ending/);
    expect(turnProblem('hi', tools, false)).toMatch(/must be an object/);
    expect(turnProblem({ message: 'hi', approvalTools: ['nope'] }, tools, false)).toEqual(
      expect.stringMatching(/^unknown tool nope in "approvalTools"; this conversation's tools: add \(/),
    );
    expect(turnProblem({ message: 'hi', approvalTools: 'add' }, tools, false)).toBe(
      '"approvalTools" must be an array of tool names',
    );
    expect(turnProblem({ message: 'hi', approvalTools: ['add'] }, tools, false)).toBeUndefined();
  });

  it("adds a turn's approval tools to the conversation for good", () => {
    const conv: ConversationState = { ...startConversation({}), tools: [tool('add'), tool('sqrt')] };
    expect(withTurnApprovals(conv, { message: 'hi' })).toBe(conv);
    const gated = withTurnApprovals(conv, { message: 'hi', approvalTools: ['add'] });
    expect(gated.tools!.map((t) => [t.name, Boolean(t.needsApproval)])).toEqual([
      ['add', true],
      ['sqrt', false],
    ]);
    // The next turn's run plans calls to `add` as pending approval, even without the option.
    const run = startTurn(gated, { message: 'again' });
    expect(run.tools.find((t) => t.name === 'add')?.needsApproval).toBe(true);
    expect(withTurnApprovals(gated, { message: 'x', approvalTools: ['add'] })).toBe(gated);
  });

  it('validates modelCallTimeout like the other durations', () => {
    expect(validateConversationOptions({ modelCallTimeout: '2m' })).toEqual([]);
    expect(validateConversationOptions({ modelCallTimeout: '90' })).toEqual([
      expect.stringContaining('"modelCallTimeout": invalid duration "90": add a unit'),
    ]);
  });
});

describe('turns', () => {
  it('builds on the transcript, counts turns and usage, and carries the window over continue-as-new', () => {
    let conv: ConversationState = { ...startConversation({ system: 's', memoryWindow: 3 }), tools: [tool('add')] };
    for (const text of ['one', 'two', 'three']) {
      let run = startTurn(conv, { message: text });
      expect(run.messages[0]).toEqual({ role: 'system', content: 's' });
      run = applyModelReply(run, modelStep(run), reply({ content: `re ${text}` }));
      expect(turnResult(run, 'c', conv.turns + 1)).toMatchObject({
        status: 'completed',
        content: `re ${text}`,
        turn: conv.turns + 1,
        workflowId: 'c',
      });
      conv = finishTurn(conv, run);
    }
    expect(conv).toMatchObject({ turns: 3, usage: { totalTokens: 6 }, transcriptStart: 0 });
    expect(conv.messages).toHaveLength(6);

    const carry = carryOver(conv, 'run-1');
    expect(carry).toMatchObject({
      transcriptStart: 3,
      turns: 3,
      runs: 2,
      previousRunId: 'run-1',
      messages: [a('re two'), u('three'), a('re three')],
    });
    const next = startConversation({ system: 's', memoryWindow: 3, carry });
    expect(next).toMatchObject({ transcriptStart: 3, turns: 3, runs: 2, previousRunId: 'run-1', tools: [tool('add')] });

    // Transcript pages use transcript indices; what a run no longer holds points to the previous run.
    const page = transcriptPage(next, undefined, { offset: 0, limit: 10 }, messagesPage);
    expect(page).toMatchObject({ offset: 3, total: 6, heldFrom: 3, previousRunId: 'run-1', system: 's' });
    expect(page.messages).toHaveLength(3);
    expect(transcriptPage(conv, undefined, { offset: 2, limit: 2 }, messagesPage).messages).toEqual([
      { ...u('two'), turn: 2 },
      a('re two'),
    ]);
  });

  it('limits a turn to the tools it names', () => {
    const conv = { ...startConversation({}), tools: [tool('add'), tool('sqrt')] };
    expect(modelStep(startTurn(conv, { message: 'x', tools: ['sqrt'] })).toolNames).toEqual(['sqrt']);
  });

  it('reports a failed turn with the reason and keeps what it did', () => {
    const conv = { ...startConversation({}), tools: [] };
    const run = startTurn(conv, { message: 'x' });
    expect(turnResult(run, 'c', 1, { error: 'nope', errorType: 'ModelCall.Auth' })).toMatchObject({
      status: 'failed',
      error: 'nope',
      errorType: 'ModelCall.Auth',
      content: null,
    });
  });

  it('answers pending tool calls when a turn is cancelled, so the next request stays valid', () => {
    const conv = { ...startConversation({}), tools: [tool('slow')] };
    let run = startTurn(conv, { message: 'x' });
    run = applyModelReply(run, modelStep(run), reply({ toolCalls: [toolCall('c1', 'slow', {})] }));
    run = applyInterruption(run, 'cancelled');
    expect(nextStep(run)).toEqual({ type: 'finish', status: 'cancelled', content: null });
    expect(run.messages[run.messages.length - 1]).toMatchObject({
      role: 'tool',
      tool_call_id: 'c1',
      content: expect.stringMatching(/cancelled this turn/),
    });
  });

  it('gives derived tool-call ids that never repeat across turns', () => {
    let conv: ConversationState = { ...startConversation({}), tools: [tool('f')] };
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      let run = startTurn(conv, { message: 'x' });
      run = applyModelReply(run, modelStep(run), reply({ toolCalls: [toolCall('', 'f', {})] }));
      ids.push(...(run.phase.kind === 'tools' ? run.phase.calls.map((c) => c.call.id) : []));
      run = applyToolOutcomes(run, [{ result: 'r', error: false }]);
      run = applyModelReply(run, modelStep(run), reply({ content: 'done' }));
      conv = finishTurn(conv, run);
    }
    expect(ids).toEqual(['call_1_0', 'call_1_0_2']);
  });
});

describe('approvals', () => {
  function awaiting() {
    const conv = {
      ...startConversation({}),
      tools: [tool('pay', { needsApproval: true, immediate: true }), tool('add')],
    };
    let run = startTurn(conv, { message: 'x' });
    run = applyModelReply(
      run,
      modelStep(run),
      reply({ toolCalls: [toolCall('p1', 'pay', { to: 'bob' }), toolCall('a1', 'add', { a: 1 })] }),
    );
    return { conv, run };
  }

  it('waits for approval before running any tool of the step', () => {
    const { conv, run } = awaiting();
    expect(nextStep(run)).toEqual({
      type: 'await_approval',
      pending: [{ callId: 'p1', name: 'pay', arguments: { to: 'bob' }, summary: 'pay(to="bob")' }],
    });
    expect(conversationStatus('c', conv, { turn: 1, run }, 0, undefined)).toMatchObject({
      state: 'awaiting_approval',
      pendingApprovals: [{ callId: 'p1' }],
    });
  });

  it('validates decisions by call id', () => {
    const { run } = awaiting();
    expect(approvalProblem(run, { callId: 'a1', approve: true })).toBe(
      'no tool call "a1" is awaiting approval; awaiting: p1 (pay(to="bob"))',
    );
    expect(approvalProblem(run, { callId: 'p1', approve: 'yes' })).toMatch(/"approve" must be true or false/);
    expect(approvalProblem(undefined, { callId: 'p1', approve: true })).toMatch(/nothing is awaiting approval/);
    expect(approvalProblem(run, { callId: 'p1', approve: false, reason: 'no' })).toBeUndefined();
  });

  it('runs approved calls and marks them in the result', () => {
    let { run } = awaiting();
    run = decideApproval(run, { callId: 'p1', approve: true });
    const step = nextStep(run);
    expect(step.type).toBe('run_tools');
    run = applyToolOutcomes(run, [
      { result: 'paid', error: false },
      { result: '2', error: false },
    ]);
    expect(run.toolExecutions.map((e) => e.approval)).toEqual(['approved', undefined]);
  });

  it('answers rejected calls with the reason, without running them, and never returns immediately', () => {
    let { run } = awaiting();
    run = decideApproval(run, { callId: 'p1', approve: false, reason: 'too much' });
    const step = nextStep(run);
    if (step.type !== 'run_tools') throw new Error(step.type);
    expect(step.calls[0].resolved).toEqual({
      result: 'Error: the user rejected this call to pay. Reason: too much',
      error: true,
    });
    run = applyToolOutcomes(run, [step.calls[0].resolved!, { result: '2', error: false }]);
    expect(run.toolExecutions[0]).toMatchObject({ approval: 'rejected', error: true, immediate: false });
    expect(nextStep(run).type).toBe('call_model');
  });

  it('rejects what is still pending when the approval timeout runs out', () => {
    const { run } = awaiting();
    const expired = expireApprovals(run, 'no decision within 1 h');
    const step = nextStep(expired);
    expect(step.type === 'run_tools' && step.calls[0].resolved?.result).toMatch(/Reason: no decision within 1 h/);
  });

  describe('a running tool that asks a person', () => {
    const calls = (r: RunState) => (r.phase.kind === 'tools' ? r.phase.calls : []);
    it('waits like an approval, with the question as its summary, and keeps the call for the tool', () => {
      let { run } = awaiting();
      run = decideApproval(run, { callId: 'p1', approve: true });
      const before = calls(run)[0].approval;
      run = askPerson(run, 'a1', 'Which account?');
      expect(pendingApprovals(calls(run))).toEqual([
        { callId: 'a1', name: 'add', arguments: { a: 1 }, summary: 'Which account?', question: 'Which account?' },
      ]);
      expect(personAnswer(run, 'a1')).toBeUndefined();
      run = decideApproval(run, { callId: 'a1', approve: true, reason: 'account 42' });
      // Answered, not resolved: the tool runs again with the answer.
      expect(calls(run)[1].resolved).toBeUndefined();
      expect(personAnswer(run, 'a1')).toEqual({ approved: true, text: 'account 42' });
      run = settleQuestion(run, 'a1', undefined);
      expect(calls(run)[1].approval).toBeUndefined();
      expect(calls(run)[0].approval).toEqual(before);
    });

    it("counts a tool's question to the model in the run's usage", () => {
      const { run } = awaiting();
      const after = countModelAnswer(run, {
        usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
        model: 'm',
      });
      expect(after.usage.totalTokens).toBe(run.usage.totalTokens + 15);
      expect(after.usage.byModel?.m).toMatchObject({ totalTokens: 15 });
    });

    it('gives the tool a decline, and a timeout as a decline with its reason', () => {
      const { run } = awaiting();
      const asked = askPerson(run, 'a1', 'Which account?');
      expect(personAnswer(decideApproval(asked, { callId: 'a1', approve: false }), 'a1')).toEqual({ approved: false });
      const expired = expireApprovals(asked, 'no decision within 1 h');
      expect(personAnswer(expired, 'a1')).toEqual({ approved: false, text: 'no decision within 1 h' });
      // The call that needed approval is rejected by the timeout, as before.
      expect(calls(expired)[0].resolved?.result).toMatch(/rejected this call to pay/);
    });
  });
});

describe('JSON Schema tools', () => {
  const schema = {
    type: 'object',
    properties: {
      id: { type: 'string' },
      n: { type: 'integer' },
      tags: { type: 'array', items: { type: 'string' } },
      kind: { enum: ['a', 'b'] },
    },
    required: ['id'],
    additionalProperties: false,
  };

  it('checks required properties, basic types, enums, items and unknown properties', () => {
    expect(checkJsonArguments(schema, { id: 'x', n: 2, tags: ['t'], kind: 'a' })).toEqual([]);
    expect(checkJsonArguments(schema, { n: 1.5, tags: ['t', 3], kind: 'c', extra: true })).toEqual([
      'id: required',
      'n: expected integer, got number',
      'tags[1]: expected string, got integer',
      'kind: must be one of "a", "b"',
      'extra: unknown property',
    ]);
    expect(checkJsonArguments(schema, [1])).toEqual(['(arguments): expected object, got array']);
  });

  it('registers without zod, validates arguments and builds the OpenAI spec', async () => {
    const seen: unknown[] = [];
    const registry = new ToolRegistry().register(
      defineJsonSchemaTool({
        name: 'lookup',
        description: 'Looks up',
        parameters: schema,
        execute: (args) => (seen.push(args), 'ok'),
      }),
      { dynamic: true },
    );
    expect(registry.names()).toEqual([]); // dynamic: offered only by a tool provider
    expect(registry.has('lookup')).toBe(true);
    expect(registry.checkArguments('lookup', {})).toEqual({ ok: false, problems: ['id: required'] });
    const checked = registry.checkArguments('lookup', { id: 'B-1' });
    expect(checked.ok).toBe(true);
    expect(registry.openAISpecs(['lookup'])[0].function).toEqual({
      name: 'lookup',
      description: 'Looks up',
      parameters: schema,
    });
    expect(() =>
      defineJsonSchemaTool({ name: 'bad', description: 'd', parameters: { type: 'string' }, execute: () => 1 }),
    ).toThrow(/JSON Schema object/);
  });
});

describe('messages by their id', () => {
  it('remembers which turn answered a message id, the newest 200, and refuses ids that are not ones', async () => {
    let conv: { answeredMessages?: Array<[string, number]> } = {};
    expect(answeredTurnOf(conv, 'a')).toBeUndefined();
    conv = withAnsweredMessage(conv, 'a', 1);
    conv = withAnsweredMessage(conv, undefined, 2);
    expect(answeredTurnOf(conv, 'a')).toBe(1);
    for (let i = 0; i < REMEMBERED_MESSAGE_IDS; i++) conv = withAnsweredMessage(conv, `m${i}`, i + 2);
    expect(answeredTurnOf(conv, 'a')).toBeUndefined();
    expect(conv.answeredMessages).toHaveLength(REMEMBERED_MESSAGE_IDS);
    expect(answeredTurnOf(conv, `m${REMEMBERED_MESSAGE_IDS - 1}`)).toBe(REMEMBERED_MESSAGE_IDS + 1);
    expect(messageIdProblem('ok-1')).toBeUndefined();
    expect(messageIdProblem('')).toMatch(/1-200 characters/);
    expect(messageIdProblem('x'.repeat(201))).toMatch(/1-200 characters/);
    expect(messageIdProblem('a\nb')).toMatch(/control characters/);
    expect(turnProblem({ message: 'hi', messageId: 7 }, undefined, false)).toMatch(/"messageId" must be/);
  });
});
