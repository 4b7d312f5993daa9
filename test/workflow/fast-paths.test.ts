import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { z } from 'zod';
import { AgentsPlugin } from '../../src/worker/agents-plugin';
import { endConversation, newConversationId, sendMessage } from '../../src/client/conversations';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { defineTool } from '../../src/tools';
import { answer, call, startModel, toolResults } from '../helpers/scripted-model';
import { modelAt, useTestTemporal } from '../helpers/temporal';

/**
 * What makes a step cheap, checked by behaviour: model calls read the conversation from their
 * worker's cache (filled by the workflow's sink) and query only when it lacks it; tools declared
 * `local` run as local activities; results are not stored twice, yet clients get them all.
 */
const temporal = useTestTemporal();

/** A client that counts the queries it sends: the plugin reads conversations through it. */
function countingClient(): { client: Client; queries: string[] } {
  const queries: string[] = [];
  const client = new Client({
    connection: temporal().client.connection,
    interceptors: { workflow: [{ query: (input, next) => (queries.push(input.queryType), next(input)) }] },
  });
  return { client, queries };
}

const lookups: string[] = [];
const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a key up',
  parameters: z.object({ key: z.string() }),
  local: true,
  execute: ({ key }, ctx) => {
    lookups.push(ctx.idempotencyKey);
    return { key, value: key.toUpperCase() };
  },
});
const localAttempts: number[] = [];
const brittle = defineTool({
  name: 'brittle',
  description: 'Fails',
  parameters: z.object({}),
  local: true,
  retry: { maximumAttempts: 2, initialInterval: '50ms' },
  execute: (_args, ctx) => {
    localAttempts.push(ctx.attempt);
    throw new Error('backend down');
  },
});
const remote = defineTool({
  name: 'remote',
  description: 'Echoes',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => `echo ${text}`,
});

/** Calls each of `calls` in turn, one per model call, then answers with the tool results. */
function script(calls: Array<[string, unknown]>) {
  return startModel((req) => {
    const done = req.messages.filter((m) => m.role === 'tool').length;
    return done < calls.length ? call(calls[done]) : answer(toolResults(req).join(' | '));
  });
}

it('reads the conversation from the worker, not by query; local tools leave markers, not activities; clients get every result', async () => {
  const model = await script([
    ['lookup', { key: 'a' }],
    ['remote', { text: 'hi' }],
    ['brittle', {}],
    ['lookup', { key: 'b' }],
  ]);
  const t = temporal();
  const { client, queries } = countingClient();
  const taskQueue = `fast-${randomUUID()}`;
  const plugin = new AgentsPlugin({ tools: [lookup, brittle, remote], model: modelAt(model.baseURL), client });
  const worker = await Worker.create({
    connection: t.nativeConnection,
    taskQueue,
    plugins: [plugin],
    workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! },
    shutdownGraceTime: '1s',
  });
  await worker.runUntil(async () => {
    const handle = await startAgentRun(
      t.client,
      { message: 'go', tools: ['lookup', 'brittle', 'remote'] },
      { taskQueue },
    );
    const outcome = await runOutcome(handle);
    expect(outcome.status).toBe('completed');
    expect(outcome.toolExecutions.map((e) => [e.name, e.result, e.value, e.error])).toEqual([
      ['lookup', '{"key":"a","value":"A"}', { key: 'a', value: 'A' }, false],
      ['remote', 'echo hi', undefined, false],
      ['brittle', expect.stringContaining('backend down'), undefined, true],
      ['lookup', '{"key":"b","value":"B"}', { key: 'b', value: 'B' }, false],
    ]);
    expect(outcome.toolExecutions.some((e) => 'resultInHistory' in e)).toBe(false);
    expect(outcome.content).toContain('echo hi');
    // Five model calls, and not one `messages` query: the sink handed every message over.
    expect(queries).toEqual([]);

    const events = (await handle.fetchHistory()).events ?? [];
    const activities = events.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    expect(activities).toEqual(['callModel', 'callModel', 'executeTool', 'callModel', 'callModel', 'callModel']);
    // The local calls: the two lookups and both attempts of `brittle`, retried on the worker.
    expect(
      events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length,
    ).toBeGreaterThanOrEqual(3);
    expect(localAttempts).toEqual([1, 2]);
    // Local activities are numbered apart from activities: their keys say so, and never collide.
    expect(lookups).toHaveLength(2);
    expect(lookups.every((k) => k.startsWith(`${handle.workflowId}/`) && k.includes('/local-'))).toBe(true);
  });
});

it('queries for the messages when the model call runs on a worker that did not run the workflow (workflows: false)', async () => {
  const model = await script([
    ['remote', { text: 'one' }],
    ['remote', { text: 'two' }],
  ]);
  const t = temporal();
  const taskQueue = `split-${randomUUID()}`;
  const bundle = { codePath: process.env.TEST_WORKFLOW_BUNDLE! };
  // The first worker runs workflows only; the second runs the activities only: its cache starts
  // empty and learns nothing from the sink.
  const workflows = await Worker.create({
    connection: t.nativeConnection,
    taskQueue,
    plugins: [new AgentsPlugin({ tools: [remote], model: modelAt(model.baseURL) })],
    workflowBundle: bundle,
    enableNonLocalActivities: false,
    shutdownGraceTime: '1s',
  });
  const { client, queries } = countingClient();
  await workflows.runUntil(async () => {
    const handle = await startAgentRun(t.client, { message: 'go', tools: ['remote'] }, { taskQueue });
    const activities = await Worker.create({
      connection: t.nativeConnection,
      taskQueue,
      plugins: [new AgentsPlugin({ tools: [remote], model: modelAt(model.baseURL), client, workflows: false })],
      shutdownGraceTime: '1s',
    });
    const outcome = await activities.runUntil(() => runOutcome(handle));
    expect(outcome).toMatchObject({ status: 'completed', content: 'echo one | echo two' });
    expect(queries.filter((q) => q === 'messages').length).toBeGreaterThan(0);
  });
});

it('a restarted worker gets the whole conversation from the workflow once it has replayed it, without a query', async () => {
  const model = await startModel((req) => answer(`turn ${req.messages.filter((m) => m.role === 'user').length}`));
  const t = temporal();
  const taskQueue = `restart-${randomUUID()}`;
  const conversationId = newConversationId();
  const workerWith = (client?: Client) =>
    Worker.create({
      connection: t.nativeConnection,
      taskQueue,
      plugins: [new AgentsPlugin({ tools: [remote], model: modelAt(model.baseURL), client })],
      workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! },
      shutdownGraceTime: '1s',
    });
  const first = await workerWith();
  await first.runUntil(async () =>
    expect(await sendMessage(t.client, conversationId, { message: 'one' }, { taskQueue })).toMatchObject({
      content: 'turn 1',
    }),
  );
  // A new worker (a new process, as far as its cache knows) replays the conversation first.
  const { client, queries } = countingClient();
  const second = await workerWith(client);
  await second.runUntil(async () => {
    expect(await sendMessage(t.client, conversationId, { message: 'two' }, { taskQueue })).toMatchObject({
      content: 'turn 2',
    });
    await endConversation(t.client, conversationId);
  });
  expect(queries).toEqual([]);
});
