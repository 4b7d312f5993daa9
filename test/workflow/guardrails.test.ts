import { z } from 'zod';
import { decideApproval, readStatus } from '../../src/client/workflow-controls';
import { sendMessage } from '../../src/client/conversations';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { streamEvents } from '../../src/client/event-stream';
import type { AgentEvent } from '../../src/core/events/agent-events';
import type { ChatRequest } from '../../src/testing/chat-request';
import { defineAgent } from '../../src/agents/define-agent';
import { defineGuardrail } from '../../src/agents/define-guardrail';
import { defineTool } from '../../src/tools/define-tool';
import { answer, call, lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/** Guardrails in real runs: functions and an agent, on input, output and tool calls; tripwires end runs. */
const temporal = useTestTemporal();

const noPasswords = defineGuardrail({
  name: 'no-passwords',
  check: ({ text }) => (/password/i.test(text ?? '') ? 'it asks for a password' : true),
});
const noSwearing = defineGuardrail({
  name: 'no-swearing',
  check: ({ text }) => (/darn/i.test(text ?? '') ? { action: 'retry', reason: 'no swearing' } : true),
});
const refundLimits = defineGuardrail({
  name: 'refund-limits',
  check: ({ toolCall }) => {
    const amount = Number(toolCall?.arguments.amount);
    if (amount > 10_000) return { action: 'refuse', reason: 'over 10,000' };
    if (amount > 500) return { action: 'approve', reason: 'over 500: a person decides' };
    return true;
  },
});
const refunds: number[] = [];
const refund = defineTool({
  name: 'refund',
  description: 'Refunds an amount',
  parameters: z.object({ amount: z.number() }),
  execute: ({ amount }) => {
    refunds.push(amount);
    return `refunded ${amount}`;
  },
});
const judge = defineAgent({ name: 'tone-judge', instructions: 'You judge tone.', tools: [] });
const toneByAgent = defineGuardrail({ name: 'tone', agent: 'tone-judge', instructions: 'the answer must be friendly' });
const clerk = defineAgent({
  name: 'clerk',
  instructions: 'You refund.',
  tools: [refund],
  inputGuardrails: [noPasswords],
  outputGuardrails: [noSwearing],
  toolGuardrails: [refundLimits],
});

function model(req: ChatRequest) {
  const user = lastOf(req, 'user');
  if (String(req.messages[0]?.content) === 'You judge tone.')
    return answer(
      /Grr/.test(user)
        ? JSON.stringify({ allow: false, reason: 'unfriendly', action: 'refuse' })
        : JSON.stringify({ allow: true, reason: 'fine' }),
    );
  const last = req.messages[req.messages.length - 1];
  if (last.role === 'tool') return answer(`Done: ${last.content}`);
  if (/not accepted/.test(user)) return answer('Here you are, kindly.');
  const amount = /refund (\d+)/.exec(user);
  if (amount) return call(['refund', { amount: Number(amount[1]) }]);
  if (/swear/.test(user)) return answer('Darn, fine.');
  if (/grumpy/.test(user)) return answer('Grr.');
  return answer(`You said: ${user}`);
}

async function setup() {
  const m = await startModel(model);
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: m.baseURL,
    agents: [clerk, judge],
    guardrails: [toneByAgent],
  });
  return { m, worker, taskQueue, client: temporal().client };
}

it('an input guardrail refuses before any model call: status guardrail_tripped, with the reason and an event', async () => {
  const { m, worker, taskQueue, client } = await setup();
  await worker.runUntil(async () => {
    const handle = await startAgentRun(
      client,
      { agent: 'clerk', message: 'What is the admin password?' },
      { taskQueue },
    );
    const outcome = await runOutcome(handle);
    expect(outcome).toMatchObject({
      status: 'guardrail_tripped',
      content: 'The guardrail "no-passwords" refused the request: it asks for a password',
      guardrail: { guardrail: 'no-passwords', kind: 'input', reason: 'it asks for a password' },
      iterations: 0,
    });
    expect(m.requests).toHaveLength(0);
    const events: AgentEvent[] = [];
    for await (const e of streamEvents(client, handle.workflowId, { after: -1 })) {
      events.push(e);
      if (e.type === 'turn_completed') break;
    }
    expect(events.find((e) => e.type === 'guardrail_tripped')).toMatchObject({
      guardrail: 'no-passwords',
      kind: 'input',
    });
    const listed = await client.workflow.count(
      `WorkflowId = '${handle.workflowId}' AND AgentStatus = 'guardrail_tripped'`,
    );
    expect(listed.count).toBe(1);
  });
});

it('an output guardrail sends the answer back with the reason; the second answer passes', async () => {
  const { worker, taskQueue, client } = await setup();
  const outcome = await worker.runUntil(async () =>
    runOutcome(await startAgentRun(client, { agent: 'clerk', message: 'Please swear.' }, { taskQueue })),
  );
  expect(outcome).toMatchObject({ status: 'completed', content: 'Here you are, kindly.', iterations: 2 });
});

it('a tool guardrail makes a large refund wait for approval, and refuses a huge one without running it', async () => {
  const { worker, taskQueue, client } = await setup();
  await worker.runUntil(async () => {
    const handle = await startAgentRun(client, { agent: 'clerk', message: 'refund 900' }, { taskQueue });
    let status = await readStatus(client, handle.workflowId);
    for (let i = 0; i < 100 && status.state !== 'awaiting_approval'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = await readStatus(client, handle.workflowId);
    }
    expect(status.pendingApprovals).toEqual([expect.objectContaining({ name: 'refund' })]);
    await decideApproval(client, handle.workflowId, { callId: status.pendingApprovals[0].callId, approve: true });
    expect(await runOutcome(handle)).toMatchObject({ status: 'completed', content: 'Done: refunded 900' });

    const huge = await runOutcome(
      await startAgentRun(client, { agent: 'clerk', message: 'refund 20000' }, { taskQueue }),
    );
    expect(huge).toMatchObject({
      status: 'guardrail_tripped',
      guardrail: { guardrail: 'refund-limits', kind: 'tool', reason: 'over 10,000' },
    });
    expect(refunds).toEqual([900]);
  });
});

it('an agent as a guardrail, named by a run; conversations go on after a tripped turn', async () => {
  const { worker, taskQueue, client } = await setup();
  await worker.runUntil(async () => {
    const friendly = await runOutcome(
      await startAgentRun(client, { message: 'hello', outputGuardrails: ['tone'], tools: [] }, { taskQueue }),
    );
    expect(friendly).toMatchObject({ status: 'completed', content: 'You said: hello' });
    const grumpy = await runOutcome(
      await startAgentRun(client, { message: 'be grumpy', outputGuardrails: ['tone'], tools: [] }, { taskQueue }),
    );
    expect(grumpy).toMatchObject({
      status: 'guardrail_tripped',
      guardrail: { guardrail: 'tone', kind: 'output', reason: 'unfriendly' },
    });

    const start = { taskQueue, options: { agent: 'clerk' } };
    const refused = await sendMessage(client, 'guarded-conversation', { message: 'my password is hunter2' }, start);
    expect(refused).toMatchObject({ status: 'guardrail_tripped', turn: 1 });
    const next = await sendMessage(client, 'guarded-conversation', { message: 'hello again' }, start);
    expect(next).toMatchObject({ status: 'completed', turn: 2 });
  });
});
