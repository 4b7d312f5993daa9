import { readdirSync, readFileSync } from 'node:fs';
import { PATCHES } from '../../src/workflows/patches';
import { join } from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { defaultDataConverter } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { toolOutcomesInHistory } from '../../src/client/tool-results';
import { installRuntimeLogging } from '../../src/telemetry/logging';

/**
 * Replays recorded histories against today's workflow code. A failure here means a change would
 * break runs already in flight (non-determinism): version the change instead of re-recording.
 */
const dir = join(__dirname, '..', 'histories');
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
const load = (file: string) => historyFromJSON(JSON.parse(readFileSync(join(dir, file), 'utf8')));

beforeAll(() => installRuntimeLogging('ERROR'));

it('has recorded histories to replay', () => {
  expect(files.length).toBeGreaterThanOrEqual(5);
});

/**
 * The id each history was recorded under (see record-histories.ts): workflows that derive ids
 * from their own (agents called as tools name their child runs after it) replay only under it.
 */
function recordedId(file: string): string {
  const name = file.replace(/\.json$/, '');
  return name.startsWith('conversation-') ? `replay-${name.replace(/-run\d+$|-legacy$/, '')}` : `agent-replay-${name}`;
}

it('replays every recorded history without non-determinism', async () => {
  const histories = files.map((file) => ({ workflowId: recordedId(file), history: load(file) }));
  const results = [];
  for await (const result of Worker.runReplayHistories(
    { workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! } },
    histories,
  )) {
    results.push({ workflowId: result.workflowId, error: result.error?.message });
  }
  expect(results).toEqual(files.map((f) => ({ workflowId: recordedId(f), error: undefined })));
});

it('detects a history the code no longer produces (the check can fail)', async () => {
  const history = load('calculator-chain.json');
  const scheduled = history.events!.find((e) => e.activityTaskScheduledEventAttributes)!;
  scheduled.activityTaskScheduledEventAttributes!.activityType = { name: 'someOtherActivity' };
  await expect(
    Worker.runReplayHistory({ workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! } }, history),
  ).rejects.toThrow(/[Nn]ondetermin/);
});

it('has conversation histories that exercise updates, signals, approvals, cancel and continue-as-new', () => {
  const events = (file: string) => load(file).events ?? [];
  const updates = (file: string) =>
    events(file)
      .map((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name)
      .filter(Boolean);
  expect(
    events('conversation-continue-as-new-run1.json').some((e) => e.workflowExecutionContinuedAsNewEventAttributes),
  ).toBe(true);
  expect(updates('conversation-approvals-run1.json').filter((n) => n === 'decideApproval')).toHaveLength(2);
  expect([
    ...updates('conversation-cancel-signal-dynamic-run1.json'),
    ...updates('conversation-cancel-signal-dynamic-run2.json'),
  ]).toEqual(expect.arrayContaining(['sendMessage', 'cancelTurn', 'end']));
  expect(
    events('conversation-cancel-signal-dynamic-run1.json').some(
      (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'queueMessage',
    ),
  ).toBe(true);
  // A fork (a message with "fork") and a switch of branches.
  expect(updates('conversation-branches.json')).toEqual([
    'sendMessage',
    'sendMessage',
    'switchBranch',
    'sendMessage',
    'end',
  ]);
});

it('has a run whose answer was streamed: text batches (signals) arrive while its model call runs', () => {
  const events = load('streamed-answer.json').events ?? [];
  const signals = events
    .map((e, i) => (e.workflowExecutionSignaledEventAttributes?.signalName === 'agentText' ? i : -1))
    .filter((i) => i >= 0);
  const modelCalls = events
    .map((e, i) => (e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel' ? i : -1))
    .filter((i) => i >= 0);
  const lastResult = events
    .map((e, i) => (e.activityTaskCompletedEventAttributes ? i : -1))
    .filter((i) => i >= 0)
    .pop()!;
  expect(signals.length).toBeGreaterThan(1);
  expect(signals.every((i) => i > modelCalls[1] && i < lastResult)).toBe(true);
});

it('has histories of named agents and structured output', () => {
  // The agent is resolved once, by a local activity recorded as a marker, before the timer starts.
  const events = load('agent-structured-output.json').events ?? [];
  const localActivity = (e: (typeof events)[number]) => {
    const data = e.markerRecordedEventAttributes?.details?.data?.payloads?.[0]?.data;
    return data ? (JSON.parse(Buffer.from(data).toString()) as { activity_type?: string }).activity_type : undefined;
  };
  const marker = events.findIndex((e) => localActivity(e) === 'resolveAgent');
  const timer = events.findIndex((e) => e.timerStartedEventAttributes);
  expect(marker).toBeGreaterThan(0);
  expect(timer).toBeGreaterThan(marker);
  expect(events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')).toHaveLength(
    3,
  );
  const turns = (load('conversation-agent-run1.json').events ?? [])
    .map((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.args?.payloads?.[0]?.data)
    .filter(Boolean);
  expect(turns.map((d) => JSON.parse(Buffer.from(d!).toString()))).toContainEqual({
    message: 'add 3 and 4',
    approvalTools: ['add'],
    messageId: expect.any(String),
  });
});

it('has a run with a local tool whose result leaves the outputs to its history, and they can be read back', async () => {
  const history = load('local-tool-results-in-history.json');
  const events = history.events ?? [];
  const markers = events.map((e) => e.markerRecordedEventAttributes?.markerName).filter(Boolean);
  // describeWorker, resolveTools and stock_quote run locally.
  expect(markers).toEqual(['core_local_activity', 'core_local_activity', 'core_local_activity']);
  const completed = events.at(-1)!.workflowExecutionCompletedEventAttributes!;
  const result = JSON.parse(Buffer.from(completed.result!.payloads![0].data!).toString());
  expect(result.toolExecutions.map((e: Record<string, unknown>) => [e.name, e.result, e.resultInHistory])).toEqual([
    ['stock_quote', undefined, true],
    ['add', undefined, true],
  ]);
  const outcomes = await toolOutcomesInHistory(history, defaultDataConverter);
  expect([...outcomes.values()].map((o) => [o.result, o.value])).toEqual([
    ['{"symbol":"ACME","price":42.5}', { symbol: 'ACME', price: 42.5 }],
    ['43', 43],
  ]);
  expect([...outcomes.keys()]).toEqual(result.toolExecutions.map((e: { id: string }) => e.id));
});

it('has a conversation that could not start: its first message is told why, then it fails', () => {
  const events = load('conversation-unknown-agent.json').events ?? [];
  const outcome = events.find((e) => e.workflowExecutionUpdateCompletedEventAttributes)
    ?.workflowExecutionUpdateCompletedEventAttributes?.outcome;
  expect(outcome?.failure?.message).toMatch(
    /^no agent named "nobody" on task queue "record-conversation-unknown-agent"/,
  );
  expect(events.at(-1)?.workflowExecutionFailedEventAttributes?.failure?.message).toMatch(/no agent named "nobody"/);
});

it('keeps histories recorded at the replay floor for every workflow type, with markers only of the patches in force, each replayed', () => {
  const typeOf = (file: string) => load(file).events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name;
  expect(new Set(files.map(typeOf))).toEqual(
    new Set([
      'agentWorkflow',
      'conversationWorkflow',
      'a2aTaskWorkflow',
      'scheduledTurnWorkflow',
      'listAgentsWorkflow',
      'tenantLedgerWorkflow',
      'rateGovernorWorkflow',
    ]),
  );
  // A patch marker's details name its id (the SDK writes it as a JSON payload).
  const markers = files.flatMap((file) =>
    (load(file).events ?? [])
      .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
      .map((e) => {
        const data = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
        const id = data ? (JSON.parse(Buffer.from(data).toString()) as { id?: string }).id : undefined;
        return { file, id };
      }),
  );
  // No marker of a retired patch (or of none at all), and every patch in force has a history on its new path.
  expect(markers.filter((m) => !m.id || !(m.id in PATCHES))).toEqual([]);
  expect(Object.keys(PATCHES).filter((id) => !markers.some((m) => m.id === id))).toEqual([]);
});

it('has a run stopped at its limit and a cancelled conversation whose last upsert is their final status', () => {
  const lastStatus = (file: string) => {
    const upserts = (load(file).events ?? [])
      .map((e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.AgentStatus?.data)
      .filter(Boolean);
    return JSON.parse(Buffer.from(upserts.at(-1)!).toString());
  };
  expect(lastStatus('search-attributes-end-status.json')).toBe('max_iterations');
  expect(lastStatus('conversation-cancelled.json')).toBe('cancelled');
});
