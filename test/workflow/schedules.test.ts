import { randomUUID } from 'node:crypto';
import { readTranscript } from '../../src/client/workflow-controls';
import { ClientError } from '../../src/client/client-error';
import { conversationStatus } from '../../src/client/conversations';
import {
  deleteSchedule,
  describeSchedule,
  listSchedules,
  pauseSchedule,
  scheduleAgent,
  triggerSchedule,
  unpauseSchedule,
} from '../../src/client/schedules';
import { answer, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/**
 * Schedules on Temporal Schedules, against a real dev server: scheduled runs are ordinary agent
 * runs (found by `TemporalScheduledById`), and a schedule may send turns to one conversation.
 */
const temporal = useTestTemporal();

async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, ms = 20_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > until) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
}

it('starts ordinary agent runs on an interval; list, pause, trigger and delete work on it', async () => {
  const model = await startModel(() => answer('Digest: all quiet.'));
  const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL });
  const client = temporal().client;
  const scheduleId = `digest-${randomUUID().slice(0, 8)}`;
  await worker.runUntil(async () => {
    const created = await scheduleAgent(
      client,
      { scheduleId, every: '2s', message: 'Write the digest.', note: 'daily digest', options: { maxIterations: 3 } },
      { taskQueue },
    );
    expect(created).toMatchObject({ scheduleId, target: 'run', every: '2s', paused: false, note: 'daily digest' });
    expect(created.overlap).toBe('skip');
    // Missed times within a minute still run; the server's own default would be a year.
    const raw = (await client.schedule.getHandle(scheduleId).describe()).raw;
    expect(Number(raw.schedule?.policies?.catchupWindow?.seconds)).toBe(60);
    const runs = await eventually(
      () => client.workflow.count(`TemporalScheduledById = '${scheduleId}' AND ExecutionStatus = 'Completed'`),
      (c) => c.count >= 1,
    );
    expect(runs.count).toBeGreaterThanOrEqual(1);
    const described = await describeSchedule(client, scheduleId);
    const first = described.recentRuns[0];
    expect(first.workflowId.startsWith(`${scheduleId}-run-`)).toBe(true);
    const result = await client.workflow.getHandle(first.workflowId).result();
    expect(result).toMatchObject({ status: 'completed', content: 'Digest: all quiet.' });
    // A one-shot run's id is no conversation to send scheduled turns to.
    await expect(
      scheduleAgent(
        client,
        { scheduleId: `${scheduleId}-x`, every: '1h', message: 'hi', conversationId: first.workflowId },
        { taskQueue },
      ),
    ).rejects.toMatchObject({
      kind: 'wrong_kind',
      message: expect.stringMatching(/is a one-shot run, not a conversation/),
    });
    expect((await listSchedules(client)).map((s) => s.scheduleId)).toContain(scheduleId);

    const paused = await pauseSchedule(client, scheduleId, 'holiday');
    expect(paused).toMatchObject({ paused: true, note: 'holiday' });
    // An action the server had begun just before the pause may still be counted: let it settle, so the
    // count that follows is the trigger's alone (the server says nothing of an action under way:
    // a window, not a state).
    await new Promise((r) => setTimeout(r, 2_500));
    const before = (await describeSchedule(client, scheduleId)).actionsTaken!;
    await triggerSchedule(client, scheduleId);
    const after = await eventually(
      () => describeSchedule(client, scheduleId),
      (d) => d.actionsTaken! > before,
    );
    expect(after.actionsTaken).toBe(before + 1);
    expect((await unpauseSchedule(client, scheduleId)).paused).toBe(false);
    await deleteSchedule(client, scheduleId);
    await expect(describeSchedule(client, scheduleId)).rejects.toMatchObject({ kind: 'not_found' });
    // Delete stops new runs: none start after it.
    const count = (await client.workflow.count(`TemporalScheduledById = '${scheduleId}'`)).count;
    // A window of one and a half of its 2 s intervals, in which a run would have started: what
    // did not happen has no state to wait for.
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await client.workflow.count(`TemporalScheduledById = '${scheduleId}'`)).count).toBe(count);
  });
});

it('sends scheduled turns to one conversation, which keeps its memory', async () => {
  const model = await startModel((req) =>
    answer(`turn with ${req.messages.filter((m) => m.role === 'user').length} user messages`),
  );
  const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL });
  const client = temporal().client;
  const scheduleId = `standup-${randomUUID().slice(0, 8)}`;
  const conversationId = `conv-${randomUUID().slice(0, 8)}`;
  await worker.runUntil(async () => {
    await scheduleAgent(
      client,
      { scheduleId, every: '1h', message: 'Time for the standup.', conversationId, paused: true },
      { taskQueue },
    );
    await triggerSchedule(client, scheduleId);
    await eventually(
      () => conversationStatus(client, conversationId).catch(() => undefined),
      (s) => (s?.turns ?? 0) >= 1 && !s?.currentTurn,
    );
    // The first firing's workflow has closed (else the default overlap policy, skip, drops the next).
    await eventually(
      () => describeSchedule(client, scheduleId),
      (d) => d.running!.length === 0,
    );
    await triggerSchedule(client, scheduleId);
    const status = await eventually(
      () => conversationStatus(client, conversationId),
      (s) => s.turns >= 2 && !s.currentTurn,
    );
    expect(status.turns).toBe(2);
    // The second turn's model call saw the first: the conversation's memory.
    const { messages } = await readTranscript(client, conversationId);
    expect(messages.filter((m) => m.role === 'assistant').map((m) => m.content)).toEqual([
      'turn with 1 user messages',
      'turn with 2 user messages',
    ]);
    const described = await describeSchedule(client, scheduleId);
    expect(described).toMatchObject({ target: 'conversation', conversationId, message: 'Time for the standup.' });
    await deleteSchedule(client, scheduleId);
  });
});

it('refuses a bad request before anything reaches the server, naming every problem', async () => {
  const client = temporal().client;
  const err = await scheduleAgent(
    client,
    { scheduleId: 'bad', every: '5', cron: '* *', message: '' },
    { taskQueue: 'x' },
  ).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ClientError);
  expect((err as ClientError).kind).toBe('invalid');
  expect((err as Error).message).toMatch(/exactly one of "every"/);
  expect((err as Error).message).toMatch(/add a unit/);
  await expect(deleteSchedule(client, 'no-such-schedule')).rejects.toMatchObject({ kind: 'not_found' });
  // Well formed, out of range: the server refuses it, and the error still says which field and why.
  const range = await scheduleAgent(
    client,
    { scheduleId: `range-${randomUUID().slice(0, 8)}`, cron: '61 * * * *', message: 'hi' },
    { taskQueue: 'x' },
  ).catch((e: unknown) => e);
  expect(range).toMatchObject({ kind: 'invalid' });
  expect((range as Error).message).toMatch(/cron "61 \* \* \* \*"/);
});
