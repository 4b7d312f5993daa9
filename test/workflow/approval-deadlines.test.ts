import { readStatus, decideApproval } from '../../src/client/workflow-controls';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { streamEvents } from '../../src/client/event-stream';
import type { AgentEvent } from '../../src/core/events/agent-events';
import type { PendingApproval } from '../../src/core/state/run-state';
import type { ChatRequest } from '../../src/testing/chat-request';
import { add } from '../../scripts/demo-agents';
import { defineAgent } from '../../src/agents/define-agent';
import { answer, call, lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/**
 * Approval deadlines (reject, approve, escalate) and approvals asked by agents called as tools,
 * decided through the top run's id, at any depth.
 */
const temporal = useTestTemporal();

async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > until) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function eventsOf(workflowId: string): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const e of streamEvents(temporal().client, workflowId, { after: -1 })) events.push(e);
  return events;
}

/** Calls add once, then answers with its result. */
const adder = () =>
  startModel((req: ChatRequest) =>
    req.messages.at(-1)?.role === 'tool' ? answer(`sum: ${lastOf(req, 'tool')}`) : call(['add', { a: 2, b: 3 }]),
  );

it('approves what is undecided when the timeout runs out, with onApprovalTimeout approve', async () => {
  const model = await adder();
  const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL });
  const outcome = await worker.runUntil(async () =>
    runOutcome(
      await startAgentRun(
        temporal().client,
        {
          message: 'Add.',
          tools: ['add'],
          approvalTools: ['add'],
          approvalTimeout: '1s',
          onApprovalTimeout: 'approve',
        },
        { taskQueue },
      ),
    ),
  );
  expect(outcome).toMatchObject({ status: 'completed', content: 'sum: 5' });
  expect(outcome.toolExecutions[0]).toMatchObject({ approval: 'approved' });
});

it('escalates once: an event, AgentStatus escalated, a new deadline, and a decision still counts', async () => {
  const model = await adder();
  const client = temporal().client;
  const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL });
  await worker.runUntil(async () => {
    const before = Date.now();
    const handle = await startAgentRun(
      client,
      { message: 'Add.', tools: ['add'], approvalTools: ['add'], approvalTimeout: '2s', onApprovalTimeout: 'escalate' },
      { taskQueue },
    );
    const asked = await eventually(
      () => readStatus(client, handle.workflowId),
      (s) => s.pendingApprovals.length === 1,
    );
    const first = asked.pendingApprovals[0].deadline!;
    // Two seconds after it was asked, so no earlier than two seconds after the run started.
    expect(Date.parse(first)).toBeGreaterThanOrEqual(before + 2_000 - 50);
    const escalated = await eventually(
      () => readStatus(client, handle.workflowId),
      (s) => s.state === 'escalated',
    );
    expect(escalated.pendingApprovals[0]).toMatchObject({ escalated: true });
    expect(Date.parse(escalated.pendingApprovals[0].deadline!)).toBeGreaterThan(Date.parse(first));
    const counted = await eventually(
      () => client.workflow.count(`WorkflowId = '${handle.workflowId}' AND AgentStatus = 'escalated'`),
      (c) => c.count === 1,
    );
    expect(counted.count).toBe(1);
    await decideApproval(client, handle.workflowId, { callId: asked.pendingApprovals[0].callId, approve: true });
    expect(await runOutcome(handle)).toMatchObject({ status: 'completed', content: 'sum: 5' });
    const types = (await eventsOf(handle.workflowId)).map((e) => e.type);
    expect(types.indexOf('approval_escalated')).toBeGreaterThan(types.indexOf('approval_requested'));
  });
});

it("lists a child agent's approval on its callers, at any depth, and decides it through the top run's id", async () => {
  const client = temporal().client;
  // lead -> manager -> clerk; the clerk's add needs approval.
  const model = await startModel((req: ChatRequest) => {
    const system = String(req.messages[0]?.content ?? '');
    const answered = req.messages.at(-1)?.role === 'tool';
    if (system === 'You lead.')
      return answered ? answer(`lead: ${lastOf(req, 'tool')}`) : call(['manager', { message: 'Get a sum.' }]);
    if (system === 'You manage.')
      return answered ? answer(`manager: ${lastOf(req, 'tool')}`) : call(['clerk', { message: 'Add 2 and 3.' }]);
    return answered ? answer(`clerk: ${lastOf(req, 'tool')}`) : call(['add', { a: 2, b: 3 }]);
  });
  const clerk = defineAgent({ name: 'clerk', instructions: 'You add.', tools: [add], approvalTools: [add] });
  const manager = defineAgent({ name: 'manager', instructions: 'You manage.', tools: [], agents: [clerk] });
  const lead = defineAgent({ name: 'lead', instructions: 'You lead.', tools: [], agents: [manager] });
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: model.baseURL,
    agents: [lead, manager, clerk],
  });
  await worker.runUntil(async () => {
    const handle = await startAgentRun(client, { agent: 'lead', message: 'Go.' }, { taskQueue });
    const status = await eventually(
      () => readStatus(client, handle.workflowId),
      (s) => s.pendingApprovals.length === 1,
    );
    expect(status.state).toBe('awaiting_approval');
    const pending: PendingApproval = status.pendingApprovals[0];
    expect(pending).toMatchObject({ name: 'add', agent: 'clerk', workflowId: expect.stringContaining('clerk') });
    expect(pending.workflowId).not.toBe(handle.workflowId);
    const decided = await decideApproval(client, handle.workflowId, { callId: pending.callId, approve: true });
    expect(decided).toMatchObject({ approved: true, workflowId: pending.workflowId });
    const outcome = await runOutcome(handle);
    expect(outcome).toMatchObject({ status: 'completed', content: 'lead: manager: clerk: 5' });
    const events = await eventsOf(handle.workflowId);
    expect(events.find((e) => e.type === 'approval_requested')).toMatchObject({
      agent: 'clerk',
      workflowId: pending.workflowId,
    });
    expect(events.find((e) => e.type === 'approval_decided')).toMatchObject({
      approved: true,
      workflowId: pending.workflowId,
    });
  });
});
