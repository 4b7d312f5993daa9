import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpApi } from '../../src/http/http-api';
import type { HttpAccessOptions } from '../../src/http/access';
import { signBody } from '../../src/http/webhook-signature';
import { waitForEvent } from '../../src/core/time/durable-waits';
import { defineAgent } from '../../src/agents/define-agent';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { eventually } from '../helpers/processes';
import { answer, call, lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/**
 * The HTTP routes of backend agents: events delivered to waiting runs (signed webhooks with a
 * secret, size and name checks) and `/schedules`, over real HTTP against a real worker and server.
 */
const temporal = useTestTemporal();

const SECRET = 'whsec-0123456789abcdef';
const TOKEN = 'token-0123456789abcdef';

function model(req: ChatRequest) {
  if (req.messages.some((m) => m.role === 'tool')) return answer(`Paid: ${lastOf(req, 'tool')}`);
  if (/payment/.test(lastOf(req, 'user'))) return call(['wait_for_event', { name: 'payment_received' }]);
  return answer('Digest: nothing new.');
}

async function withApi(access: HttpAccessOptions, body: (base: string) => Promise<void>): Promise<void> {
  const m = await startModel(model);
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: m.baseURL, agents: [payments] });
  const server: Server = createHttpApi({ client: t.client, taskQueue, access });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    await worker.runUntil(body(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  } finally {
    server.close();
  }
}

/** A conversation's tools are its agent's: this one waits for payments. */
const payments = defineAgent({ name: 'payments', instructions: 'You collect payments.', tools: [waitForEvent] });

const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

async function waitingRun(base: string): Promise<string> {
  const started = await fetch(`${base}/runs?wait=1s`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ message: 'Wait for the payment.', tools: ['wait_for_event'] }),
  });
  expect(started.status).toBe(202);
  const { workflowId } = await started.json();
  let status: any;
  await eventually(async () => {
    status = await (await fetch(`${base}/runs/${workflowId}`, { headers: auth })).json();
    return status.state === 'waiting';
  }, 15_000);
  expect(status.waits).toEqual([expect.objectContaining({ kind: 'event', name: 'payment_received' })]);
  return workflowId;
}

it('takes a signed webhook without a token, refuses a bad signature, a bad name and a payload too large', async () => {
  await withApi({ tokens: [TOKEN], webhookSecret: SECRET }, async (base) => {
    const id = await waitingRun(base);
    const url = `${base}/runs/${id}/events/payment_received`;
    const body = JSON.stringify({ amount: 42, currency: 'EUR' });
    const forged = await fetch(url, {
      method: 'POST',
      headers: { 'x-signature-256': signBody('wrong-secret-xxxxxx', body) },
      body,
    });
    expect(forged.status).toBe(401);
    expect(await forged.json()).toMatchObject({ errorType: 'Http.BadSignature' });
    // Unsigned and without a token: the token check answers.
    expect((await fetch(url, { method: 'POST', body })).status).toBe(401);
    const badName = await fetch(`${base}/runs/${id}/events/bad%20name`, { method: 'POST', headers: auth, body });
    expect(badName.status).toBe(400);
    const big = JSON.stringify({ blob: 'x'.repeat(300_000) });
    const tooLarge = await fetch(url, {
      method: 'POST',
      headers: { 'x-signature-256': signBody(SECRET, big) },
      body: big,
    });
    expect(tooLarge.status).toBe(413);
    const missing = await fetch(`${base}/runs/agent-nope-${randomUUID()}/events/payment_received`, {
      method: 'POST',
      headers: auth,
      body,
    });
    expect(missing.status).toBe(404);

    const signed = await fetch(url, { method: 'POST', headers: { 'x-signature-256': signBody(SECRET, body) }, body });
    expect(signed.status).toBe(202);
    expect(await signed.json()).toEqual({ workflowId: id, name: 'payment_received', kind: 'run' });
    let run: any;
    await eventually(async () => {
      run = await (await fetch(`${base}/runs/${id}`, { headers: auth })).json();
      return run.state === 'completed';
    }, 15_000);
    expect(run.messages.at(-1).content).toMatch(/^Paid: .*"amount":42/);
    // The run has ended: a late delivery is refused, not lost silently.
    const late = await fetch(url, { method: 'POST', headers: { 'x-signature-256': signBody(SECRET, body) }, body });
    expect(late.status).toBe(409);
  });
});

it('delivers events to conversations with a token, and manages schedules under /schedules', async () => {
  await withApi({ tokens: [TOKEN] }, async (base) => {
    const conversationId = `conv-${randomUUID().slice(0, 8)}`;
    const turn = await fetch(`${base}/conversations/${conversationId}/messages?wait=1s`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ message: 'Wait for the payment.', agent: 'payments' }),
    });
    expect(turn.status).toBe(202);
    const delivered = await fetch(`${base}/conversations/${conversationId}/events/payment_received`, {
      method: 'POST',
      headers: auth,
      body: '{"amount":7}',
    });
    expect(delivered.status).toBe(202);
    let conv: any;
    await eventually(async () => {
      conv = await (await fetch(`${base}/conversations/${conversationId}`, { headers: auth })).json();
      return conv.turns === 1 && !conv.currentTurn;
    }, 15_000);
    expect(conv.messages.at(-1).content).toMatch(/"amount":7/);

    const scheduleId = `http-${randomUUID().slice(0, 8)}`;
    const bad = await fetch(`${base}/schedules`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ scheduleId, every: 'often', message: 'x' }),
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatch(/"every"/);
    const created = await fetch(`${base}/schedules`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ scheduleId, every: '1h', message: 'Write the digest.', paused: true }),
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ scheduleId, every: '1h', paused: true, target: 'run' });
    expect((await fetch(`${base}/schedules`)).status).toBe(401);
    const listed = await (await fetch(`${base}/schedules`, { headers: auth })).json();
    expect(listed.schedules.map((s: { scheduleId: string }) => s.scheduleId)).toContain(scheduleId);
    expect((await fetch(`${base}/schedules/${scheduleId}/trigger`, { method: 'POST', headers: auth })).status).toBe(
      202,
    );
    let described: any;
    await eventually(async () => {
      described = await (await fetch(`${base}/schedules/${scheduleId}`, { headers: auth })).json();
      return described.recentRuns.length === 1;
    }, 15_000);
    expect(described.recentRuns[0].workflowId).toMatch(new RegExp(`^${scheduleId}-run-`));
    const unpaused = await fetch(`${base}/schedules/${scheduleId}/unpause`, { method: 'POST', headers: auth });
    expect(await unpaused.json()).toMatchObject({ paused: false });
    // A note is optional; a body that is not one is refused, not dropped (the schedule stays as it was).
    const garbled = await fetch(`${base}/schedules/${scheduleId}/pause`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: '{"note":',
    });
    expect(garbled.status).toBe(400);
    expect((await (await fetch(`${base}/schedules/${scheduleId}`, { headers: auth })).json()).paused).toBe(false);
    const removed = await fetch(`${base}/schedules/${scheduleId}`, { method: 'DELETE', headers: auth });
    expect(await removed.json()).toEqual({ scheduleId, deleted: true });
    expect((await fetch(`${base}/schedules/${scheduleId}`, { headers: auth })).status).toBe(404);
  });
});
