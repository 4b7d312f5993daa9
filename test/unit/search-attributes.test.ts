import {
  agentListQuery,
  conversationSearchValues,
  missingSearchAttributes,
  runSearchValues,
  searchAttributeChanges,
  searchAttributeCreateCommands,
  stepStaysInWorkflowTask,
  type AgentSearchValues,
  type SearchAttributeSettings,
} from '../../src/core/run/search-attributes';
import { applyHandoff } from '../../src/core/tool-calls/handoffs';
import { applyModelReply, applyToolOutcomes, nextStep, startRun } from '../../src/core/run/agent-loop';
import { runStatus } from '../../src/core/run/run-result';
import type { NextStep } from '../../src/core/state/run-state';
import type { ResolvedAgent } from '../../src/core/state/agents';
import type { ToolInfo } from '../../src/core/messages/tool-info';

const tool = (name: string, extra: Partial<ToolInfo> = {}): ToolInfo => ({
  name,
  immediate: false,
  timeoutMs: 1000,
  retry: { maximumAttempts: 1, initialIntervalMs: 1000 },
  ...extra,
});
const all: SearchAttributeSettings = {
  registered: ['AgentName', 'AgentStatus', 'AgentIterations', 'AgentTotalTokens', 'AgentModel'],
  updates: 'steps',
  defaultModel: 'worker-model',
};
const usage = { promptTokens: 10, completionTokens: 5, totalTokens: 15 };

describe('agent search attributes (pure)', () => {
  it('show a run stopped at its iteration limit or budget as such (runs recorded before: thinking)', () => {
    for (const [limits, status] of [
      [{ maxIterations: 1 }, 'max_iterations'],
      [{ budget: { tokens: 10 } }, 'budget_exceeded'],
    ] as const) {
      let state = startRun({ message: 'loop', ...limits }, [tool('add')]);
      const step = nextStep(state) as Extract<NextStep, { type: 'call_model' }>;
      state = applyModelReply(state, step, {
        content: null,
        toolCalls: [{ id: 'c1', type: 'function', function: { name: 'add', arguments: '{}' } }],
        finishReason: 'tool_calls',
        usage,
      });
      state = applyToolOutcomes(state, [{ result: '2', error: false }]);
      expect(nextStep(state)).toMatchObject({ type: 'finish', status });
      expect(runStatus(state)).toMatchObject({ state: status, status });
      expect(runSearchValues(state, {}).AgentStatus).toBe(status);
    }
  });

  it('follow a run: thinking, running_tools, awaiting_approval, then its final status, with calls and tokens', () => {
    let state = startRun({ message: 'add 2 and 3', agent: 'clerk' }, [
      tool('add'),
      tool('pay', { needsApproval: true }),
    ]);
    expect(runSearchValues(state, { defaultModel: 'worker-model' })).toEqual({
      AgentName: 'clerk',
      AgentStatus: 'thinking',
      AgentIterations: 0,
      AgentTotalTokens: 0,
      AgentModel: 'worker-model',
    });
    const step = nextStep(state) as Extract<ReturnType<typeof nextStep>, { type: 'call_model' }>;
    state = applyModelReply(state, step, {
      content: null,
      toolCalls: [{ id: 'c1', type: 'function', function: { name: 'add', arguments: '{}' } }],
      finishReason: 'tool_calls',
      usage,
    });
    expect(runSearchValues(state, { defaultModel: 'worker-model' })).toMatchObject({
      AgentStatus: 'running_tools',
      AgentIterations: 1,
      AgentTotalTokens: 15,
      AgentModel: 'worker-model',
    });
    const named = startRun({ message: 'hi', modelSettings: { model: 'm-1' } }, []);
    expect(runSearchValues(named, { defaultModel: 'worker-model' }).AgentModel).toBe('m-1');
    const asking = applyModelReply(startRun({ message: 'pay' }, [tool('pay', { needsApproval: true })]), step, {
      content: null,
      toolCalls: [{ id: 'c2', type: 'function', function: { name: 'pay', arguments: '{}' } }],
      finishReason: 'tool_calls',
      usage,
    });
    expect(runSearchValues(asking, {}).AgentStatus).toBe('awaiting_approval');
    const done = applyModelReply(startRun({ message: 'hi' }, []), step, {
      content: 'hello',
      toolCalls: [],
      finishReason: 'stop',
      usage,
    });
    expect(runSearchValues(done, {}).AgentStatus).toBe('completed');
  });

  it('name the agent and model handed off to', () => {
    const billing: ResolvedAgent = {
      settings: { name: 'billing', instructions: 'You are billing.', modelSettings: { model: 'b-1' } },
      tools: [],
    };
    const triage = startRun({ message: 'hi', agent: 'triage', modelSettings: { model: 't-1' } }, []);
    expect(runSearchValues(triage, {})).toMatchObject({ AgentName: 'triage', AgentModel: 't-1' });
    const handed = applyHandoff(triage, billing);
    expect(runSearchValues(handed, {})).toMatchObject({ AgentName: 'billing', AgentModel: 'b-1' });
    const noModel = applyHandoff(triage, { settings: { name: 'plain', instructions: '.' }, tools: [] });
    expect(runSearchValues(noModel, { defaultModel: 'worker-model' }).AgentModel).toBe('worker-model');
  });

  it('upsert only what changed, only registered attributes, and with milestones not while a run alternates model calls and tools', () => {
    const v = (status: AgentSearchValues['AgentStatus'], iterations: number): AgentSearchValues => ({
      AgentName: 'a',
      AgentStatus: status,
      AgentIterations: iterations,
      AgentTotalTokens: iterations * 10,
      AgentModel: 'm',
    });
    expect(searchAttributeChanges({}, v('thinking', 0), all)).toEqual(v('thinking', 0));
    expect(searchAttributeChanges(v('thinking', 0), v('running_tools', 1), all)).toEqual({
      AgentStatus: 'running_tools',
      AgentIterations: 1,
      AgentTotalTokens: 10,
    });
    expect(searchAttributeChanges(v('thinking', 1), v('thinking', 1), all)).toEqual({});
    expect(searchAttributeChanges({}, v('thinking', 0), { ...all, registered: ['AgentStatus'] })).toEqual({
      AgentStatus: 'thinking',
    });
    const milestones = { ...all, updates: 'milestones' as const };
    expect(searchAttributeChanges(v('thinking', 0), v('running_tools', 1), milestones)).toEqual({});
    expect(searchAttributeChanges(v('thinking', 0), v('awaiting_approval', 1), milestones)).toMatchObject({
      AgentStatus: 'awaiting_approval',
    });
    expect(searchAttributeChanges(v('running_tools', 3), v('completed', 4), milestones)).toMatchObject({
      AgentStatus: 'completed',
      AgentIterations: 4,
    });
  });

  it('upsert when what the run does or who does it changes, the counters riding along', () => {
    const v = (
      status: AgentSearchValues['AgentStatus'],
      iterations: number,
      extra: Partial<AgentSearchValues> = {},
    ): AgentSearchValues => ({
      AgentName: 'a',
      AgentStatus: status,
      AgentIterations: iterations,
      AgentTotalTokens: iterations * 10,
      AgentModel: 'm',
      ...extra,
    });
    expect(searchAttributeChanges({}, v('thinking', 0), all)).toEqual(v('thinking', 0));
    // Only the counters moved (a step whose tools ran inside the workflow task): no upsert, no action.
    expect(searchAttributeChanges(v('thinking', 1), v('thinking', 4), all)).toEqual({});
    // A change of status brings the counters up to date in the same upsert.
    expect(searchAttributeChanges(v('thinking', 1), v('running_tools', 4), all)).toEqual({
      AgentStatus: 'running_tools',
      AgentIterations: 4,
      AgentTotalTokens: 40,
    });
    expect(searchAttributeChanges(v('thinking', 1), v('completed', 4), all)).toMatchObject({
      AgentStatus: 'completed',
      AgentIterations: 4,
    });
    // A handoff names another agent and model.
    expect(
      searchAttributeChanges(v('thinking', 1), v('thinking', 2, { AgentName: 'b', AgentModel: 'm2' }), all),
    ).toEqual({ AgentName: 'b', AgentModel: 'm2', AgentIterations: 2, AgentTotalTokens: 20 });
    // A namespace with the counters but not the status (the worker warns of it) gets nothing: the status triggers.
    expect(
      searchAttributeChanges(v('thinking', 1), v('running_tools', 2), { ...all, registered: ['AgentIterations'] }),
    ).toEqual({});
  });

  it('know which steps the server never sees: all-local tool calls, resolved calls and handoffs, not activities or agents', () => {
    const planned = (t: ToolInfo) => ({
      call: { id: t.name, type: 'function' as const, function: { name: t.name, arguments: '{}' } },
      arguments: {},
      immediate: false,
      tool: t,
    });
    const tools = (...infos: ToolInfo[]): NextStep => ({ type: 'run_tools', calls: infos.map(planned) });
    expect(stepStaysInWorkflowTask(tools(tool('a', { local: true }), tool('b', { local: true })))).toBe(true);
    expect(stepStaysInWorkflowTask(tools(tool('a', { local: true }), tool('to_billing', { handoff: 'billing' })))).toBe(
      true,
    );
    const resolved: NextStep = {
      type: 'run_tools',
      calls: [
        {
          call: { id: 'x', type: 'function', function: { name: 'nope', arguments: '{}' } },
          arguments: {},
          immediate: false,
          resolved: { result: 'unknown tool', error: true },
        },
      ],
    };
    expect(stepStaysInWorkflowTask(resolved)).toBe(true);
    expect(stepStaysInWorkflowTask(tools(tool('a', { local: true }), tool('b')))).toBe(false);
    expect(stepStaysInWorkflowTask(tools(tool('helper', { agent: 'helper', local: true })))).toBe(false);
    expect(stepStaysInWorkflowTask({ type: 'call_model', iteration: 1, toolNames: [], final: false })).toBe(false);
    expect(stepStaysInWorkflowTask({ type: 'await_approval', pending: [] })).toBe(false);
  });

  it('describe an idle or closed conversation', () => {
    expect(
      conversationSearchValues('idle', { usage, lastTurnIterations: 2 }, { agent: 'support', defaultModel: 'w' }),
    ).toEqual({
      AgentName: 'support',
      AgentStatus: 'idle',
      AgentIterations: 2,
      AgentTotalTokens: 15,
      AgentModel: 'w',
    });
  });

  it('say which attributes a namespace lacks, and the command that adds them, a type for each name', () => {
    const problems = missingSearchAttributes({ AgentName: 'Keyword', AgentIterations: 'Keyword' });
    expect(problems).toEqual([
      { name: 'AgentStatus', type: 'Keyword', problem: 'missing' },
      { name: 'AgentIterations', type: 'Int', problem: 'wrong_type', actual: 'Keyword' },
      { name: 'AgentTotalTokens', type: 'Int', problem: 'missing' },
      { name: 'AgentModel', type: 'Keyword', problem: 'missing' },
      { name: 'AgentVersion', type: 'Keyword', problem: 'missing' },
      { name: 'AgentTenant', type: 'Keyword', problem: 'missing' },
    ]);
    expect(
      searchAttributeCreateCommands(
        'prod',
        problems.filter((p) => p.problem === 'missing'),
      ),
    ).toEqual([
      'temporal operator search-attribute create --namespace prod --name AgentStatus --type Keyword --name AgentTotalTokens --type Int --name AgentModel --type Keyword --name AgentVersion --type Keyword --name AgentTenant --type Keyword',
    ]);
    expect(
      missingSearchAttributes({
        AgentName: 'Keyword',
        AgentStatus: 'Keyword',
        AgentIterations: 'Int',
        AgentTotalTokens: 'Int',
        AgentModel: 'Keyword',
        AgentVersion: 'Keyword',
        AgentTenant: 'Keyword',
      }),
    ).toEqual([]);
  });

  it('build the list query, refusing unknown statuses and odd agent names', () => {
    expect(
      agentListQuery({ status: 'awaiting_approval', agent: 'support' }, ['agentWorkflow', 'conversationWorkflow']),
    ).toBe(
      "WorkflowType IN ('agentWorkflow', 'conversationWorkflow') AND AgentStatus = 'awaiting_approval' AND AgentName = 'support'",
    );
    expect(() => agentListQuery({ status: 'sleeping' }, [])).toThrow(
      /unknown status "sleeping"; one of: thinking, running_tools/,
    );
    expect(() => agentListQuery({ agent: "x' OR 1=1" }, [])).toThrow(/is not an agent name/);
    // A tenant's list: its attribute first, and no tenant name that could end the quote.
    expect(agentListQuery({ tenant: 'acme', query: "AgentName = 'a(' OR AgentName = 'b'" }, ['agentWorkflow'])).toBe(
      "WorkflowType IN ('agentWorkflow') AND AgentTenant = 'acme' AND (AgentName = 'a(' OR AgentName = 'b')",
    );
    // A query that would close the parentheses it is put in, and widen the list, is refused.
    expect(() => agentListQuery({ tenant: 'acme', query: "AgentName = 'a') OR (1 = 1" }, [])).toThrow(
      /a "\)" closes no "\("/,
    );
    expect(() => agentListQuery({ tenant: "a' OR 'b" }, [])).toThrow(/must be a tenant name/);
  });
});
