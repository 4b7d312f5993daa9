import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { ClientError } from '../../src/client/client-error';
import { endConversation, queueMessage, startMessage } from '../../src/client/conversations';
import { openedBefore } from '../../src/client/opened-before';
import { startAgentRun } from '../../src/client/run-agent';
import { AGENT_WORKFLOW_TYPE, CONVERSATION_WORKFLOW_TYPE } from '../../src/contracts/definitions';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { answer, lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';
import { testRegistry } from '../helpers/test-tools';

// A message goes at once and whether its conversation was open is looked up meanwhile
// (client/opened-before.ts): these are the cases a lookup before sending decided.
const temporal = useTestTemporal();

/** A client of its own: it has sent nothing, so it knows no conversation as open. */
const freshClient = () => new Client({ connection: temporal().client.connection });

const slowly = (req: ChatRequest) =>
  lastOf(req, 'user') === 'slow'
    ? { content: 'taking my time', chunks: ['taking ', 'my ', 'time'], chunkDelayMs: 500 }
    : answer(`you said: ${lastOf(req, 'user')}`);

it('a new conversation was not open, an open one was, and a closed one starts afresh', async () => {
  const t = temporal();
  const model = await startModel(slowly);
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL, registry: testRegistry() });
  await worker.runUntil(async () => {
    const id = `lookup-${randomUUID()}`;
    const first = await startMessage(freshClient(), id, { message: 'one' }, { taskQueue });
    expect(first.wasOpen).toBe(false);
    expect((await first.result()).content).toBe('you said: one');
    // A lookup that lands even after the first turn (a loaded server) knows the run is this message's.
    await expect(openedBefore(freshClient(), id, undefined, first.messageId)).resolves.toBe(false);
    await expect(openedBefore(freshClient(), id, undefined, 'another message')).resolves.toBe(true);
    const second = await startMessage(freshClient(), id, { message: 'two' }, { taskQueue });
    expect(second.wasOpen).toBe(true);
    expect((await second.result()).content).toBe('you said: two');
    await endConversation(t.client, id);
    const again = await startMessage(freshClient(), id, { message: 'three' }, { taskQueue });
    expect(again.wasOpen).toBe(false);
    expect((await again.result()).content).toBe('you said: three');
    const described = await t.client.workflow.getHandle(id).describe();
    expect(described.type).toBe(CONVERSATION_WORKFLOW_TYPE);
    expect(described.status.name).toBe('RUNNING');
    // Closed by another process: this client still takes it for open, and the message starts it afresh.
    const mine = freshClient();
    expect((await startMessage(mine, id, { message: 'four' }, { taskQueue })).wasOpen).toBe(true);
    await endConversation(freshClient(), id);
    const reopened = await startMessage(mine, id, { message: 'five' }, { taskQueue });
    expect(reopened.wasOpen).toBe(false);
    expect((await reopened.result()).content).toBe('you said: five');
  });
});

const refused = (err: unknown) => {
  expect(err).toBeInstanceOf(ClientError);
  expect(err).toMatchObject({ kind: 'wrong_kind' });
  expect((err as Error).message).toMatch(/is a one-shot run, not a conversation/);
  return true;
};

it("a one-shot run's id is refused, running or closed, and no conversation takes it over", async () => {
  const t = temporal();
  const model = await startModel(slowly);
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL, registry: testRegistry() });
  await worker.runUntil(async () => {
    const run = await startAgentRun(t.client, { message: 'slow' }, { taskQueue });
    await expect(
      startMessage(freshClient(), run.workflowId, { message: 'hi' }, { taskQueue }).catch(refused),
    ).resolves.toBe(true);
    await run.result();
    await expect(
      startMessage(freshClient(), run.workflowId, { message: 'hi' }, { taskQueue }).catch(refused),
    ).resolves.toBe(true);
    const described = await t.client.workflow.getHandle(run.workflowId).describe();
    expect(described.type).not.toBe(CONVERSATION_WORKFLOW_TYPE);
    expect(described.status.name).toBe('COMPLETED');
  });
  // Running where no worker answers: the message, sent before the lookup said what the id is, is
  // stopped once it does, rather than waiting for an acceptance that never comes (the test's
  // time would run out).
  const stranded = await t.client.workflow.start(AGENT_WORKFLOW_TYPE, {
    workflowId: `stranded-${randomUUID()}`,
    taskQueue: `nobody-${randomUUID()}`,
    args: [{ message: 'hi' }],
  });
  await expect(
    startMessage(freshClient(), stranded.workflowId, { message: 'hi' }, { taskQueue: 'unused' }).catch(refused),
  ).resolves.toBe(true);
  await stranded.terminate('test over');
});

it('a lookup that comes after the message started the conversation does not take it for open; a queued message does', async () => {
  const t = temporal();
  // No worker on this queue: the conversations stay before their first workflow task.
  const taskQueue = `nobody-${randomUUID()}`;
  const id = `lookup-${randomUUID()}`;
  const gone = new AbortController();
  const sending = startMessage(t.client, id, { message: 'hi' }, { taskQueue }, { signal: gone.signal });
  sending.catch(() => undefined);
  for (
    let i = 0;
    i < 50 &&
    !(await t.client.workflow
      .getHandle(id)
      .describe()
      .catch(() => undefined));
    i++
  )
    await new Promise((resolve) => setTimeout(resolve, 100));
  await expect(openedBefore(freshClient(), id)).resolves.toBe(false);
  const queued = `lookup-${randomUUID()}`;
  await queueMessage(t.client, queued, { message: 'hi' }, { taskQueue });
  await expect(openedBefore(freshClient(), queued)).resolves.toBe(true);
  gone.abort();
  for (const w of [id, queued])
    await t.client.workflow
      .getHandle(w)
      .terminate('test over')
      .catch(() => undefined);
});
