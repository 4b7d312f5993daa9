import { randomUUID } from 'node:crypto';
import { defineAgent } from '../../src/agents/define-agent';
import { AgentRegistry } from '../../src/agents/agent-registry';
import type { AgentEvent } from '../../src/core/events/agent-events';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { readStatus, readTranscript } from '../../src/client/workflow-controls';
import { conversationStatus, sendMessage } from '../../src/client/conversations';
import { isTurnEnd, streamEvents } from '../../src/client/event-stream';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { add } from '../../scripts/demo-agents';
import { ToolRegistry } from '../../src/tools';
import { eventually } from '../helpers/processes';
import { answer, call, lastOf, startModel, toolResults } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/** Agents as tools (child workflows) and handoffs, against the real server and a scripted model. */
const temporal = useTestTemporal();

const system = (req: ChatRequest) => String(req.messages[0]?.role === 'system' ? req.messages[0].content : '');
const answered = (req: ChatRequest) => req.messages[req.messages.length - 1].role === 'tool';

const researcher = defineAgent({
  name: 'researcher',
  description: 'Finds facts',
  instructions: 'You research.',
  tools: [],
});
const writer = defineAgent({ name: 'writer', instructions: 'You write.', tools: [], agents: [researcher] });

describe('agents as tools', () => {
  it('runs the named agent as a child workflow whose answer is the result; its tokens count toward the caller', async () => {
    const model = await startModel((req) => {
      if (system(req) === 'You research.') return answer(`facts about ${lastOf(req, 'user')}`);
      return answered(req) ? answer(`article: ${toolResults(req)[0]}`) : call(['researcher', { message: 'otters' }]);
    });
    const t = temporal();
    const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL, agents: [writer] });
    const workflowId = `writer-${randomUUID()}`;
    const outcome = await worker.runUntil(async () =>
      runOutcome(
        await startAgentRun(t.client, { agent: 'writer', message: 'write about otters' }, { taskQueue, workflowId }),
      ),
    );
    expect(outcome).toMatchObject({ status: 'completed', content: 'article: facts about otters' });
    const [execution] = outcome.toolExecutions;
    expect(execution).toMatchObject({
      name: 'researcher',
      arguments: { message: 'otters' },
      result: 'facts about otters',
      error: false,
      childWorkflowId: `${workflowId}-researcher-${execution.id}`,
    });
    // The writer was offered the researcher as a tool taking a message.
    expect(model.requests[0].tools).toEqual([
      expect.objectContaining({
        function: expect.objectContaining({
          name: 'researcher',
          description: 'Finds facts',
          parameters: expect.objectContaining({ required: ['message'] }),
        }),
      }),
    ]);
    // The child is a workflow of its own, under the writer in the Temporal UI.
    const child = await t.client.workflow.getHandle(execution.childWorkflowId!).describe();
    expect(child.type).toBe('agentWorkflow');
    expect(child.parentExecution?.workflowId).toBe(workflowId);
    const childResult = await t.client.workflow.getHandle(execution.childWorkflowId!).result();
    expect(outcome.usage.totalTokens).toBeGreaterThan(childResult.usage.totalTokens);
    expect(childResult.usage.totalTokens).toBeGreaterThan(0);
  });

  it('a child that fails or runs out of iterations is a tool error for the caller, whose run goes on', async () => {
    const stubborn = defineAgent({ name: 'stubborn', instructions: 'You loop.', tools: [add], maxIterations: 1 });
    const broken = defineAgent({ name: 'broken', instructions: 'You break.', tools: [] });
    const boss = defineAgent({ name: 'boss', instructions: 'You delegate.', tools: [], agents: [stubborn, broken] });
    const model = await startModel((req) => {
      if (system(req) === 'You loop.') return call(['add', { a: 1, b: 1 }]);
      if (system(req) === 'You break.')
        return { http: { status: 401, body: { error: { message: 'bad key for the broken agent' } } } };
      return answered(req)
        ? answer(`noted: ${toolResults(req).join(' | ')}`)
        : call(['stubborn', { message: 'go' }], ['broken', { message: 'go' }]);
    });
    const t = temporal();
    const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL, agents: [boss] });
    const outcome = await worker.runUntil(async () =>
      runOutcome(await startAgentRun(t.client, { agent: 'boss', message: 'do it' }, { taskQueue })),
    );
    expect(outcome.status).toBe('completed');
    expect(outcome.toolExecutions.map((e) => [e.name, e.error])).toEqual([
      ['stubborn', true],
      ['broken', true],
    ]);
    expect(outcome.toolExecutions[0].result).toMatch(
      /^Error: the stubborn agent stopped without an answer \(max_iterations\)/,
    );
    expect(outcome.toolExecutions[1].result).toMatch(
      /^Error: the broken agent failed \(ModelCall\.Auth\): .*bad key for the broken agent/,
    );
  });

  it('cancelling the caller cancels the child; so does the caller running out of time', async () => {
    const slow = defineAgent({ name: 'slow', instructions: 'You are slow.', tools: [] });
    const caller = defineAgent({ name: 'caller', instructions: 'You call.', tools: [], agents: [slow] });
    const model = await startModel(async (req) => {
      if (system(req) === 'You are slow.') {
        // A model slower than the caller's limit: the caller's cancellation must reach it first.
        await new Promise((r) => setTimeout(r, 20_000));
        return answer('too late');
      }
      return answered(req) ? answer('done') : call(['slow', { message: 'take your time' }]);
    });
    const t = temporal();
    const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL, agents: [caller] });
    await worker.runUntil(async () => {
      const childOf = async (workflowId: string) => {
        let id: string | undefined;
        expect(
          await eventually(
            async () =>
              !!(id = ((await readStatus(t.client, workflowId)) as { pendingToolCalls: Array<{ id: string }> })
                .pendingToolCalls[0]?.id),
            20_000,
          ),
        ).toBe(true);
        return `${workflowId}-slow-${id}`;
      };
      const cancelled = await startAgentRun(t.client, { agent: 'caller', message: 'go' }, { taskQueue });
      const child1 = await childOf(cancelled.workflowId);
      expect(
        await eventually(
          async () => (await t.client.workflow.getHandle(child1).describe()).status.name === 'RUNNING',
          20_000,
        ),
      ).toBe(true);
      await cancelled.cancel();
      expect(
        await eventually(
          async () => (await t.client.workflow.getHandle(child1).describe()).status.name === 'CANCELLED',
          20_000,
        ),
      ).toBe(true);

      const timed = await startAgentRun(
        t.client,
        { agent: 'caller', message: 'go', maxExecutionTime: '4s' },
        { taskQueue },
      );
      const child2 = await childOf(timed.workflowId);
      expect(await runOutcome(timed)).toMatchObject({ status: 'time_limit' });
      expect(
        await eventually(
          async () => (await t.client.workflow.getHandle(child2).describe()).status.name === 'CANCELLED',
          20_000,
        ),
      ).toBe(true);
    });
  });

  it('refuses agents that call each other in a cycle, and names that clash', () => {
    const a = defineAgent({ name: 'a', instructions: 'x', tools: [], agents: ['b'] });
    const b = defineAgent({ name: 'b', instructions: 'x', tools: [], agents: ['a'] });
    expect(() => new AgentRegistry([a, b], new ToolRegistry())).toThrow(
      'agents call each other as tools in a cycle (a -> b -> a)',
    );
    const clash = defineAgent({ name: 'add', instructions: 'x', tools: [] });
    expect(
      () =>
        new AgentRegistry(
          [defineAgent({ name: 'c', instructions: 'x', tools: [add], agents: [clash] })],
          new ToolRegistry(),
        ),
    ).toThrow('a tool named "add" is already registered; the agent "add" cannot be offered as a tool under its name');
    expect(
      () =>
        new AgentRegistry(
          [defineAgent({ name: 'd', instructions: 'x', tools: [], handoffs: ['nobody'] })],
          new ToolRegistry(),
        ),
    ).toThrow('agent "d" names the agent "nobody" in handoffs, which is not registered on this worker');
  });
});

describe('handoffs', () => {
  const billing = defineAgent({
    name: 'billing',
    description: 'Invoices and refunds',
    instructions: 'You are billing.',
    tools: [add],
    model: 'billing-model',
  });
  const triage = defineAgent({ name: 'triage', instructions: 'You triage.', tools: [], handoffs: [billing] });

  function handoffModel() {
    return startModel((req) => {
      if (system(req) === 'You triage.') return call(['transfer_to_billing', {}]);
      return answer(`billing here (${req.model}): ${lastOf(req, 'user')}`);
    });
  }

  it('in a conversation: the next model call is the new agent (instructions, tools, model), the transcript records it, later turns stay with it', async () => {
    const model = await handoffModel();
    const t = temporal();
    const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL, agents: [triage] });
    const id = `handoff-${randomUUID()}`;
    await worker.runUntil(async () => {
      const events: AgentEvent[] = [];
      const first = await sendMessage(
        t.client,
        id,
        { message: 'my invoice is wrong' },
        { taskQueue, options: { agent: 'triage' } },
      );
      for await (const e of streamEvents(t.client, id, { after: -1, until: isTurnEnd })) events.push(e);
      expect(first).toMatchObject({
        status: 'completed',
        content: 'billing here (billing-model): my invoice is wrong',
      });
      expect(first.toolExecutions[0]).toMatchObject({
        name: 'transfer_to_billing',
        result: 'Transferred to billing: the billing agent takes it from here.',
        error: false,
      });
      expect(model.requests[0].tools!.map((x) => x.function.name)).toEqual(['transfer_to_billing']);
      expect(model.requests[0].tools![0].function.description).toContain('Invoices and refunds');
      expect(system(model.requests[1])).toBe('You are billing.');
      expect(model.requests[1].tools!.map((x) => x.function.name)).toEqual(['add']);
      expect(model.requests[1].model).toBe('billing-model');
      expect(events.find((e) => e.type === 'handoff')).toMatchObject({
        type: 'handoff',
        from: 'triage',
        to: 'billing',
        turn: 1,
      });
      expect(await conversationStatus(t.client, id)).toMatchObject({ agent: 'billing', state: 'idle' });
      const transcript = await readTranscript(t.client, id);
      expect(transcript.system).toBe('You are billing.');
      expect(transcript.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);

      const second = await sendMessage(t.client, id, { message: 'and a refund' }, { taskQueue });
      expect(second.content).toBe('billing here (billing-model): and a refund');
      expect(model.requests).toHaveLength(3);
      expect(system(model.requests[2])).toBe('You are billing.');
    });
  });

  it('a one-shot run is handed off too; only the first of two handoffs in one reply goes ahead', async () => {
    const shipping = defineAgent({ name: 'shipping', instructions: 'You ship.', tools: [] });
    const desk = defineAgent({ name: 'desk', instructions: 'You triage.', tools: [], handoffs: [billing, shipping] });
    const model = await startModel((req) => {
      if (system(req) === 'You triage.') return call(['transfer_to_billing', {}], ['transfer_to_shipping', {}]);
      return answer(`${system(req)} ${toolResults(req).join(' | ')}`);
    });
    const t = temporal();
    const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL, agents: [desk] });
    await worker.runUntil(async () => {
      const handle = await startAgentRun(t.client, { agent: 'desk', message: 'help' }, { taskQueue });
      const outcome = await runOutcome(handle);
      expect(outcome.content).toBe(
        'You are billing. Transferred to billing: the billing agent takes it from here. | Error: only one handoff per reply; the conversation went to billing.',
      );
      expect(await readStatus(t.client, handle.workflowId)).toMatchObject({ agent: 'billing' });
    });
  });
});
