import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createHttpApi } from '../../src/http/http-api';
import { readStatus } from '../../src/client/workflow-controls';
import { deliverEvent } from '../../src/client/deliver-event';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { sendMessage } from '../../src/client/conversations';
import { streamEvents } from '../../src/client/event-stream';
import type { AgentEvent } from '../../src/core/events/agent-events';
import type { ChatRequest } from '../../src/testing/chat-request';
import { answer, call, lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/**
 * Durable waits as tools, in real runs: `sleep` is a workflow timer (no activity), and
 * `wait_for_event` a condition the event's delivery (a signal) satisfies.
 */
const temporal = useTestTemporal();

/** A model that calls the wait once, then answers with what the wait returned. */
function waitingModel(name: string, args: Record<string, unknown>) {
  return startModel((req: ChatRequest) =>
    req.messages.some((m) => m.role === 'tool') ? answer(`got: ${lastOf(req, 'tool')}`) : call([name, args]),
  );
}

/** Polls `check` until it holds (a status the workflow reaches soon). */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > until) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

it('sleeps on a workflow timer with the reason as its summary, no activity, and completes after it', async () => {
  const model = await waitingModel('sleep', { duration: '3s', reason: 'give the user time' });
  const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL });
  const started = Date.now();
  const outcome = await worker.runUntil(async () => {
    const handle = await startAgentRun(temporal().client, { message: 'Wait a bit.', tools: ['sleep'] }, { taskQueue });
    return runOutcome(handle);
  });
  expect(outcome.status).toBe('completed');
  expect(Date.now() - started).toBeGreaterThanOrEqual(3_000);
  expect(outcome.content).toMatch(/^got: Slept 3s; it is now \d{4}-/);
  const history = await temporal().client.workflow.getHandle(outcome.workflowId).fetchHistory();
  const timers = history.events!.filter((e) => e.timerStartedEventAttributes);
  expect(timers).toHaveLength(1);
  expect(Number(timers[0].timerStartedEventAttributes!.startToFireTimeout!.seconds)).toBe(3);
  // The Temporal UI shows the timer with the reason.
  const summary = timers[0].userMetadata?.summary?.data;
  expect(summary && JSON.parse(Buffer.from(summary).toString())).toBe('sleep 3s: give the user time');
  const activities = history.events!.filter((e) => e.activityTaskScheduledEventAttributes);
  expect(activities.map((e) => e.activityTaskScheduledEventAttributes!.activityType!.name)).not.toContain(
    'executeTool',
  );
  expect(outcome.toolExecutions[0]).toMatchObject({ name: 'sleep', error: false });
});

it('waits for an event: status says so, the payload is the tool result, and the run completes', async () => {
  const model = await waitingModel('wait_for_event', { name: 'payment_received' });
  const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL });
  const client = temporal().client;
  await worker.runUntil(async () => {
    const handle = await startAgentRun(
      client,
      { message: 'Wait for the payment.', tools: ['wait_for_event'] },
      { taskQueue },
    );
    const waiting = await eventually(
      () => readStatus(client, handle.workflowId),
      (s) => s.state === 'waiting',
    );
    expect(waiting).toMatchObject({
      state: 'waiting',
      waits: [{ kind: 'event', name: 'payment_received', until: expect.any(String) }],
    });
    const listed = await eventually(
      () => client.workflow.count(`WorkflowId = '${handle.workflowId}' AND AgentStatus = 'waiting'`),
      (c) => c.count === 1,
    );
    expect(listed.count).toBe(1);
    await expect(deliverEvent(client, handle.workflowId, 'bad name!', {})).rejects.toThrow(/event name must be/);
    await deliverEvent(client, handle.workflowId, 'payment_received', { amount: 42 });
    const outcome = await runOutcome(handle);
    expect(outcome).toMatchObject({ status: 'completed', content: 'got: {"amount":42}' });
    expect(outcome.toolExecutions[0]).toMatchObject({ name: 'wait_for_event', value: { amount: 42 } });
    const events: AgentEvent[] = [];
    for await (const e of streamEvents(client, handle.workflowId, { after: -1 })) events.push(e);
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['wait_started', 'event_received', 'wait_ended', 'turn_completed']),
    );
    expect(events.find((e) => e.type === 'wait_ended')).toMatchObject({ outcome: 'event' });
  });
});

it('keeps an event that arrives before the wait, and times out with a note the model reads', async () => {
  const client = temporal().client;
  // The model first waits until the event is delivered (so it arrives before the run asks), then
  // waits for two events.
  let delivered!: () => void;
  const early = new Promise<void>((r) => (delivered = r));
  const model = await startModel(async (req: ChatRequest) => {
    const results = req.messages.filter((m) => m.role === 'tool').length;
    if (results === 0) {
      await early;
      return call(['wait_for_event', { name: 'early' }]);
    }
    if (results === 1) return call(['wait_for_event', { name: 'never', timeout: '1s' }]);
    return answer(`got: ${lastOf(req, 'tool')}`);
  });
  const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL });
  const outcome = await worker.runUntil(async () => {
    const handle = await startAgentRun(client, { message: 'Go.', tools: ['wait_for_event'] }, { taskQueue });
    await deliverEvent(client, handle.workflowId, 'early', 'already here');
    delivered();
    return runOutcome(handle);
  });
  expect(outcome.toolExecutions.map((e) => e.result)).toEqual([
    '"already here"',
    expect.stringMatching(/^No "never" event arrived within 1s/),
  ]);
  expect(outcome.status).toBe('completed');
});

it('starts a run turn before an event delivered before any worker ran it: turn_started comes first', async () => {
  const client = temporal().client;
  const model = await startModel((req: ChatRequest) =>
    req.messages.some((m) => m.role === 'tool')
      ? answer(`got: ${lastOf(req, 'tool')}`)
      : call(['wait_for_event', { name: 'early' }]),
  );
  const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL });
  // Started and given its event before the worker runs: both are in the run's first workflow task.
  const handle = await startAgentRun(client, { message: 'Go.', tools: ['wait_for_event'] }, { taskQueue });
  await deliverEvent(client, handle.workflowId, 'early', 'with the start');
  const { outcome, events } = await worker.runUntil(async () => {
    const outcome = await runOutcome(handle);
    const events: AgentEvent[] = [];
    for await (const e of streamEvents(client, handle.workflowId, { after: -1 })) events.push(e);
    return { outcome, events };
  });
  expect(outcome).toMatchObject({ status: 'completed', content: 'got: "with the start"' });
  expect(events.slice(0, 2).map((e) => e.type)).toEqual(['turn_started', 'event_received']);
});

it('does not count waits toward maxExecutionTime unless the run asks, and refuses waits over maxWait', async () => {
  const client = temporal().client;
  const model = await waitingModel('sleep', { duration: '3s', reason: 'wait' });
  const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL });
  await worker.runUntil(async () => {
    const base = { message: 'Wait.', tools: ['sleep'], maxExecutionTime: '2s' };
    const free = runOutcome(await startAgentRun(client, base, { taskQueue }));
    const counted = runOutcome(
      await startAgentRun(client, { ...base, waitsCountTowardTimeLimit: true }, { taskQueue }),
    );
    const capped = runOutcome(await startAgentRun(client, { ...base, maxWait: '1s' }, { taskQueue }));
    expect((await free).status).toBe('completed');
    expect((await counted).status).toBe('time_limit');
    const refused = await capped;
    expect(refused.toolExecutions[0]).toMatchObject({ error: true });
    expect(refused.toolExecutions[0].result).toMatch(
      /cannot sleep 3s: sleeps may last at most 1s \(the run's maxWait\)/,
    );
  });
});

it('keeps an event delivered to a conversation between turns for the turn that waits for it', async () => {
  const client = temporal().client;
  const model = await startModel((req: ChatRequest) => {
    const question = lastOf(req, 'user');
    const answered = req.messages.at(-1)?.role === 'tool';
    if (question === 'wait for the order' && !answered) return call(['wait_for_event', { name: 'order' }]);
    return answer(answered ? `order: ${lastOf(req, 'tool')}` : 'hello');
  });
  const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL });
  const id = `waits-conv-${randomUUID()}`;
  await worker.runUntil(async () => {
    const start = { taskQueue, options: { tools: ['wait_for_event'] } };
    expect((await sendMessage(client, id, { message: 'hi' }, start)).content).toBe('hello');
    await deliverEvent(client, id, 'order', { sku: 'A1' });
    const turn = await sendMessage(client, id, { message: 'wait for the order' }, start);
    expect(turn.content).toBe('order: {"sku":"A1"}');
  });
});

it('drops an event delivered again under the same id (a webhook retry): it reaches one wait', async () => {
  const client = temporal().client;
  let delivered!: () => void;
  const deliveries = new Promise<void>((r) => (delivered = r));
  const model = await startModel(async (req: ChatRequest) => {
    const results = req.messages.filter((m) => m.role === 'tool').length;
    // First the three deliveries, so they arrive before the first wait.
    if (results === 0) await deliveries;
    if (results < 2) return call(['wait_for_event', { name: 'payment' }]);
    if (results === 2) return call(['wait_for_event', { name: 'payment', timeout: '1s' }]);
    return answer('done');
  });
  const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL });
  const api = createHttpApi({ client, taskQueue });
  api.listen(0, '127.0.0.1');
  await once(api, 'listening');
  const base = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  try {
    const { outcome, events } = await worker.runUntil(async () => {
      const handle = await startAgentRun(client, { message: 'Go.', tools: ['wait_for_event'] }, { taskQueue });
      const id = handle.workflowId;
      expect(await deliverEvent(client, id, 'payment', { amount: 1 }, { eventId: 'evt_1' })).toMatchObject({
        eventId: 'evt_1',
      });
      // The sender retries the same delivery (Standard Webhooks' id header), then sends another.
      const retry = await fetch(`${base}/runs/${id}/events/payment`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'webhook-id': 'evt_1' },
        body: JSON.stringify({ amount: 1 }),
      });
      expect(retry.status).toBe(202);
      expect(await retry.json()).toMatchObject({ eventId: 'evt_1' });
      await deliverEvent(client, id, 'payment', { amount: 2 }, { eventId: 'evt_2' });
      delivered();
      const outcome = await runOutcome(handle);
      const events: AgentEvent[] = [];
      for await (const e of streamEvents(client, id)) events.push(e);
      return { outcome, events };
    });
    expect(outcome.toolExecutions.map((e) => e.result)).toEqual([
      '{"amount":1}',
      '{"amount":2}',
      expect.stringMatching(/^No "payment" event arrived within 1s/),
    ]);
    expect(events.filter((e) => e.type === 'event_received')).toEqual([
      expect.objectContaining({ name: 'payment', id: 'evt_1' }),
      expect.objectContaining({ name: 'payment', id: 'evt_1', duplicate: true }),
      expect.objectContaining({ name: 'payment', id: 'evt_2' }),
    ]);
    const bad = await fetch(`${base}/runs/anything/events/payment`, {
      method: 'POST',
      headers: { 'idempotency-key': 'has spaces' },
      body: '{}',
    });
    expect(bad.status).toBe(400);
  } finally {
    api.close();
  }
});
