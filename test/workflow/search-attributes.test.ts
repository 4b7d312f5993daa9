import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { findTemporalCli } from '../../src/connection/temporal-cli';
import { AGENT_SEARCH_ATTRIBUTES } from '../../src/core/run/search-attributes';
import { Client } from '@temporalio/client';
import { defineAgent } from '../../src/agents/define-agent';
import { decideApproval } from '../../src/client/workflow-controls';
import { endConversation, sendMessage } from '../../src/client/conversations';
import { listAgentRuns } from '../../src/client/list-runs';
import { startAgentRun, runOutcome } from '../../src/client/run-agent';
import { z } from 'zod';
import { add } from '../../scripts/demo-agents';
import { defineTool, ToolRegistry } from '../../src/tools';
import { defineGuardrail } from '../../src/agents/define-guardrail';
import type { AgentInput } from '../../src/core/state/run-options';
import { eventually } from '../helpers/processes';
import { answer, call, lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, createTestWorkerInNewNamespace, useTestTemporal } from '../helpers/temporal';

/** The agent search attributes, upserted by the workflows, found with visibility queries (client.ts list, the UI). */
const temporal = useTestTemporal();

const clerk = defineAgent({
  name: 'clerk',
  instructions: 'You are a clerk.',
  tools: [add],
  approvalTools: [add],
  model: 'clerk-model',
});

/** The upserts of agent attributes in a workflow's history (`patched` upserts TemporalChangeVersion too, which is not billed). */
async function agentUpserts(client: Client, workflowId: string): Promise<Record<string, unknown>[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return history
    .events!.map((e) =>
      Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}).filter((k) =>
        k.startsWith('Agent'),
      ),
    )
    .filter((keys) => keys.length > 0)
    .map((keys) => Object.fromEntries(keys.map((k) => [k, true])));
}

/** The search attributes Temporal holds for a workflow. */
async function attributesOf(workflowId: string): Promise<Record<string, unknown>> {
  const { searchAttributes } = await temporal().client.workflow.getHandle(workflowId).describe();
  return Object.fromEntries(
    Object.entries(searchAttributes)
      .filter(([k]) => k.startsWith('Agent'))
      .map(([k, v]) => [k, (v as unknown[])[0]]),
  );
}

describe('agent search attributes', () => {
  it('follow a run: awaiting_approval while it waits (found by status and agent), then completed with calls, tokens and model', async () => {
    const model = await startModel((req) =>
      req.messages[req.messages.length - 1].role === 'user'
        ? call(['add', { a: 2, b: 3 }])
        : answer(`it is ${lastOf(req, 'tool')}`),
    );
    const t = temporal();
    const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL, agents: [clerk] });
    const workflowId = `sa-${randomUUID()}`;
    await worker.runUntil(async () => {
      const run = await startAgentRun(t.client, { agent: 'clerk', message: 'add 2 and 3' }, { taskQueue, workflowId });
      // Visibility is eventually consistent: the list shows the run once the upsert is indexed.
      const waiting = async () =>
        (await listAgentRuns(t.client, { status: 'awaiting_approval', agent: 'clerk', limit: 100 })).runs.find(
          (r) => r.workflowId === workflowId,
        );
      expect(await eventually(async () => (await waiting()) !== undefined, 20_000)).toBe(true);
      expect(await waiting()).toMatchObject({
        kind: 'run',
        agentStatus: 'awaiting_approval',
        agent: 'clerk',
        model: 'clerk-model',
        iterations: 1,
        executionStatus: 'RUNNING',
      });
      const status = await t.client.workflow
        .getHandle(workflowId)
        .query<{ pendingApprovals: { callId: string }[] }>('status');
      await decideApproval(t.client, workflowId, { callId: status.pendingApprovals[0].callId, approve: true });
      expect(await runOutcome(run)).toMatchObject({ status: 'completed', content: 'it is 5' });
    });
    expect(await attributesOf(workflowId)).toEqual({
      AgentName: 'clerk',
      AgentVersion: expect.stringMatching(/^av-[0-9a-f]{16}$/),
      AgentStatus: 'completed',
      AgentIterations: 2,
      AgentTotalTokens: expect.any(Number),
      AgentModel: 'clerk-model',
    });
    expect((await attributesOf(workflowId)).AgentTotalTokens).toBeGreaterThan(0);
    // One upsert per change of status: thinking, awaiting_approval, running_tools, thinking, completed.
    expect(await agentUpserts(t.client, workflowId)).toHaveLength(5);
    const listed = await eventually(
      async () =>
        (await listAgentRuns(t.client, { status: 'completed', agent: 'clerk', limit: 100 })).runs.some(
          (r) => r.workflowId === workflowId,
        ),
      20_000,
    );
    expect(listed).toBe(true);
  });

  it("with 'milestones', upserts only at the start, approvals and the end", async () => {
    const model = await startModel((req) =>
      req.messages[req.messages.length - 1].role === 'user' ? call(['add', { a: 1, b: 1 }]) : answer('two'),
    );
    const t = temporal();
    const { worker, taskQueue } = await createTestWorker(t, {
      baseURL: model.baseURL,
      registry: new ToolRegistry([add]),
      searchAttributes: 'milestones',
    });
    const workflowId = `sa-${randomUUID()}`;
    await worker.runUntil(async () =>
      runOutcome(await startAgentRun(t.client, { message: 'add 1 and 1' }, { taskQueue, workflowId })),
    );
    expect(await agentUpserts(t.client, workflowId)).toHaveLength(2); // thinking, completed
    expect(await attributesOf(workflowId)).toEqual({
      AgentStatus: 'completed',
      AgentIterations: 2,
      AgentTotalTokens: expect.any(Number),
      // A run without a named agent has a version too: its definition with the tools as resolved.
      AgentVersion: expect.stringMatching(/^av-[0-9a-f]{16}$/),
      AgentModel: 'scripted',
    });
  });

  it('cost no upsert for a step whose tools run locally (the server never sees it), and show a step running activity tools', async () => {
    const quote = defineTool({
      name: 'quote',
      description: 'A price',
      parameters: z.object({ symbol: z.string() }),
      execute: ({ symbol }) => `${symbol}: 42`,
      local: true,
    });
    const model = await startModel((req) => {
      const done = req.messages.filter((m) => m.role === 'tool').length;
      if (done === 3) return answer('done');
      return lastOf(req, 'user') === 'quotes'
        ? call(['quote', { symbol: `S${done}` }])
        : call(['add', { a: done, b: 1 }]);
    });
    const t = temporal();
    const { worker, taskQueue } = await createTestWorker(t, {
      baseURL: model.baseURL,
      registry: new ToolRegistry([quote, add]),
    });
    const localId = `sa-${randomUUID()}`;
    const activityId = `sa-${randomUUID()}`;
    await worker.runUntil(async () => {
      expect(
        await runOutcome(
          await startAgentRun(t.client, { message: 'quotes', tools: ['quote'] }, { taskQueue, workflowId: localId }),
        ),
      ).toMatchObject({ status: 'completed' });
      expect(
        await runOutcome(
          await startAgentRun(t.client, { message: 'sums', tools: ['add'] }, { taskQueue, workflowId: activityId }),
        ),
      ).toMatchObject({ status: 'completed' });
    });
    // Local tool: thinking at the start, completed at the end, whatever the steps in between.
    const statusAndCounters = { AgentStatus: true, AgentIterations: true, AgentTotalTokens: true };
    expect(await agentUpserts(t.client, localId)).toEqual([
      { ...statusAndCounters, AgentModel: true, AgentVersion: true },
      statusAndCounters,
    ]);
    expect(await attributesOf(localId)).toMatchObject({ AgentStatus: 'completed', AgentIterations: 4 });
    // Activity tool: thinking, then running_tools and thinking for each of its three steps, then completed.
    expect(await agentUpserts(t.client, activityId)).toHaveLength(8);
    expect(await attributesOf(activityId)).toMatchObject({ AgentStatus: 'completed', AgentIterations: 4 });
  });

  it('mark a run that fails as failed, and a cancelled one as cancelled', async () => {
    const model = await startModel((req) =>
      lastOf(req, 'user') === 'fail'
        ? { http: { status: 401, body: { error: { message: 'bad key' } } } }
        : call(['add', { a: 1, b: 1 }]),
    );
    const t = temporal();
    const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL, agents: [clerk] });
    const failedId = `sa-${randomUUID()}`;
    const cancelledId = `sa-${randomUUID()}`;
    await worker.runUntil(async () => {
      expect(
        await runOutcome(await startAgentRun(t.client, { message: 'fail' }, { taskQueue, workflowId: failedId })),
      ).toMatchObject({ status: 'failed', errorType: 'ModelCall.Auth' });
      const waiting = await startAgentRun(
        t.client,
        { agent: 'clerk', message: 'add please' },
        { taskQueue, workflowId: cancelledId },
      );
      expect(
        await eventually(async () => (await attributesOf(cancelledId)).AgentStatus === 'awaiting_approval', 10_000),
      ).toBe(true);
      await waiting.cancel();
      expect(await runOutcome(waiting)).toMatchObject({ status: 'cancelled' });
    });
    expect(await attributesOf(failedId)).toMatchObject({ AgentStatus: 'failed', AgentIterations: 0 });
    expect(await attributesOf(cancelledId)).toMatchObject({
      AgentStatus: 'cancelled',
      AgentName: 'clerk',
      AgentIterations: 1,
    });
  });

  it('leave every run at its final status, whichever way it ends, so list --status finds it', async () => {
    // The model always calls a tool (a run never answers unless told), and says hello when asked to.
    const model = await startModel((req) => {
      if (lastOf(req, 'user') === 'hello') return answer('hello');
      return req.tools?.some((tool) => tool.function.name === 'slow')
        ? call(['slow', {}])
        : call(['add', { a: 1, b: 1 }]);
    });
    const slow = defineTool({
      name: 'slow',
      description: 'Takes its time',
      parameters: z.object({}),
      execute: () => new Promise<string>((resolve) => setTimeout(() => resolve('done'), 4000)),
    });
    const t = temporal();
    const tripwire = defineGuardrail({ name: 'tripwire', check: () => 'never' });
    const { worker, taskQueue } = await createTestWorker(t, {
      baseURL: model.baseURL,
      registry: new ToolRegistry([add, slow]),
      guardrails: [tripwire],
    });
    const runs: Record<string, Omit<AgentInput, 'message'> & { message?: string }> = {
      completed: { message: 'hello' },
      immediate: { immediateTools: ['add'] },
      max_iterations: { maxIterations: 2 },
      budget_exceeded: { budget: { tokens: 1 } },
      time_limit: { maxExecutionTime: '1s', tools: ['slow'] },
      guardrail_tripped: { inputGuardrails: ['tripwire'] },
    };
    const ids = Object.fromEntries(Object.keys(runs).map((status) => [status, `sa-end-${status}-${randomUUID()}`]));
    await worker.runUntil(async () => {
      for (const [status, { message = 'go', ...options }] of Object.entries(runs)) {
        const input = { message, tools: ['add'], ...options };
        const run = await startAgentRun(t.client, input, { taskQueue, workflowId: ids[status] });
        expect(await runOutcome(run)).toMatchObject({ status });
      }
    });
    for (const [status, workflowId] of Object.entries(ids)) {
      expect({ status, attributes: await attributesOf(workflowId) }).toMatchObject({
        status,
        attributes: { AgentStatus: status },
      });
      const listed = async () =>
        (await listAgentRuns(t.client, { status, limit: 100 })).runs.some((r) => r.workflowId === workflowId);
      expect({ status, listed: await eventually(listed, 20_000) }).toEqual({ status, listed: true });
    }
  });

  it('mark a conversation that is cancelled as cancelled', async () => {
    const model = await startModel(() => answer('hi'));
    const t = temporal();
    const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL });
    const id = `sa-conv-cancel-${randomUUID()}`;
    await worker.runUntil(async () => {
      await sendMessage(t.client, id, { message: 'hi' }, { taskQueue });
      expect(await eventually(async () => (await attributesOf(id)).AgentStatus === 'idle', 10_000)).toBe(true);
      const handle = t.client.workflow.getHandle(id);
      await handle.cancel();
      await handle.result().catch(() => undefined);
    });
    expect(await attributesOf(id)).toMatchObject({ AgentStatus: 'cancelled' });
  });

  it('show a conversation idle between turns and closed at the end', async () => {
    const model = await startModel((req) => answer(`you said ${lastOf(req, 'user')}`));
    const t = temporal();
    const { worker, taskQueue } = await createTestWorker(t, {
      baseURL: model.baseURL,
      registry: new ToolRegistry([add]),
    });
    const id = `sa-conv-${randomUUID()}`;
    await worker.runUntil(async () => {
      await sendMessage(t.client, id, { message: 'hi' }, { taskQueue });
      expect(await eventually(async () => (await attributesOf(id)).AgentStatus === 'idle', 10_000)).toBe(true);
      expect(await attributesOf(id)).toMatchObject({ AgentStatus: 'idle', AgentIterations: 1, AgentModel: 'scripted' });
      const idle = await eventually(
        async () =>
          (await listAgentRuns(t.client, { status: 'idle', limit: 100 })).runs.some(
            (r) => r.workflowId === id && r.kind === 'conversation',
          ),
        20_000,
      );
      expect(idle).toBe(true);
      await endConversation(t.client, id);
    });
    expect(await attributesOf(id)).toMatchObject({ AgentStatus: 'closed' });
  });

  it('a namespace without the attributes: the worker says which commands add them, and runs complete without them', async () => {
    const t = temporal();
    const model = await startModel(() => answer('fine'));
    const warnings: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    const spy = jest
      .spyOn(process.stderr, 'write')
      .mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
        if (String(chunk).startsWith('durable-agents:')) warnings.push(String(chunk));
        else return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
        return true;
      });
    try {
      const { worker, taskQueue, namespace, client } = await createTestWorkerInNewNamespace(t, {
        baseURL: model.baseURL,
        registry: new ToolRegistry([add]),
      });
      const workflowId = `sa-bare-${randomUUID()}`;
      const outcome = await worker.runUntil(async () =>
        runOutcome(await startAgentRun(client, { message: 'hi' }, { taskQueue, workflowId })),
      );
      expect(outcome).toMatchObject({ status: 'completed', content: 'fine' });
      expect(warnings.join('')).toContain(`namespace "${namespace}" lacks search attributes`);
      const printed = /temporal operator search-attribute create .*/.exec(warnings.join(''))?.[0];
      expect(printed).toBe(
        `temporal operator search-attribute create --namespace ${namespace} --name AgentName --type Keyword --name AgentStatus --type Keyword --name AgentIterations --type Int --name AgentTotalTokens --type Int --name AgentModel --type Keyword --name AgentVersion --type Keyword --name AgentTenant --type Keyword`,
      );
      // The printed command, run as a user would, adds every one (the CLI takes a type per name).
      const [, ...args] = printed!.split(' ');
      execFileSync(findTemporalCli(process.env), [...args, '--address', process.env.TEST_TEMPORAL_ADDRESS!]);
      const { customAttributes } = await t.client.connection.operatorService.listSearchAttributes({ namespace });
      const added = Object.keys(customAttributes ?? {}).filter((k) => k.startsWith('Agent'));
      expect(added.sort()).toEqual(Object.keys(AGENT_SEARCH_ATTRIBUTES).sort());
      expect(await agentUpserts(client, workflowId)).toHaveLength(0);
    } finally {
      spy.mockRestore();
    }
  });
});
