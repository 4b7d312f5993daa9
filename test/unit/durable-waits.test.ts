import {
  endWaiting,
  eventProblem,
  MAX_EVENT_PAYLOAD_BYTES,
  planWait,
  startWaiting,
  takeEvent,
  waitOutcome,
  withEvent,
} from '../../src/core/time/durable-waits';
import { formatDuration } from '../../src/core/time/duration';
import { runStatus } from '../../src/core/run/run-result';
import { setApprovalDeadline, withChildApprovals } from '../../src/core/tool-calls/approvals';
import { startRun } from '../../src/core/run/agent-loop';
import { validateAgentInput } from '../../src/core/run/run-input';
import type { AgentEvent } from '../../src/core/events/agent-events';
import type { RunState } from '../../src/core/state/run-state';
import { EventPrinter } from '../../src/cli/event-printer';
import { progressText } from '../../src/mcp-server/agent-mcp-server';

/** Durable waits and approval deadlines as pure decisions: planning, events, status, what people read. */

const now = Date.parse('2026-11-24T10:00:00Z');

describe('planning a wait', () => {
  it('sleeps for a duration or until a time, within maxWait', () => {
    expect(planWait('sleep', { duration: '3s', reason: 'later' }, now)).toEqual({
      plan: { kind: 'sleep', ms: 3000, until: '2026-11-24T10:00:03.000Z', reason: 'later' },
    });
    expect(planWait('sleep', { until: '2026-11-24T11:00:00Z', reason: 'r' }, now)).toMatchObject({
      plan: { ms: 3_600_000 },
    });
    // A time already past sleeps not at all.
    expect(planWait('sleep', { until: '2026-11-24T09:00:00Z', reason: 'r' }, now)).toMatchObject({ plan: { ms: 0 } });
  });

  it('refuses what the model can fix, saying how', () => {
    const result = (r: ReturnType<typeof planWait>) => ('resolved' in r ? r.resolved.result : 'planned');
    expect(result(planWait('sleep', { duration: '5', reason: 'r' }, now))).toMatch(/add a unit/);
    expect(result(planWait('sleep', { reason: 'r' }, now))).toMatch(/give "duration"/);
    expect(result(planWait('sleep', { until: 'tomorrow', reason: 'r' }, now))).toMatch(/ISO 8601/);
    expect(result(planWait('sleep', { duration: '40d', reason: 'r' }, now))).toMatch(
      /cannot sleep 40d: sleeps may last at most 30d/,
    );
    expect(result(planWait('wait_for_event', { name: 'paid', timeout: '2h' }, now, 3_600_000))).toMatch(
      /cannot wait 2h: waits may last at most 1h/,
    );
    expect(result(planWait('wait_for_event', { name: 'no spaces' }, now))).toMatch(/"name" must be an event name/);
  });

  it('waits for an event up to its timeout, or the longest wait allowed', () => {
    expect(planWait('wait_for_event', { name: 'payment_received' }, now)).toMatchObject({
      plan: { kind: 'event', name: 'payment_received', timeoutMs: 30 * 86_400_000 },
    });
    expect(planWait('wait_for_event', { name: 'a.b:c-d', timeout: '90s' }, now)).toMatchObject({
      plan: { timeoutMs: 90_000, until: '2026-11-24T10:01:30.000Z' },
    });
  });
});

describe('events', () => {
  it('validates names and sizes, keeps them in order, and hands the first of a name to a wait', () => {
    expect(eventProblem('payment_received', { amount: 42 })).toBeUndefined();
    expect(eventProblem('', {})).toMatch(/event name must be/);
    expect(eventProblem('big', 'x'.repeat(MAX_EVENT_PAYLOAD_BYTES + 1))).toMatch(/send a reference/);
    let inbox = withEvent([], { name: 'a', payload: 1, at: 't1' });
    inbox = withEvent(inbox, { name: 'b', payload: 2, at: 't2' });
    inbox = withEvent(inbox, { name: 'a', payload: 3, at: 't3' });
    const taken = takeEvent(inbox, 'a')!;
    expect(taken.event.payload).toBe(1);
    expect(taken.rest.map((e) => e.payload)).toEqual([2, 3]);
    expect(takeEvent(inbox, 'c')).toBeUndefined();
    // Bounded: the oldest go first.
    let many = inbox;
    for (let i = 0; i < 150; i++) many = withEvent(many, { name: 'x', payload: i, at: 't' });
    expect(many).toHaveLength(100);
    expect(many.at(-1)?.payload).toBe(149);
  });

  it('gives the model the payload as JSON, or says the wait timed out', () => {
    const plan = { kind: 'event' as const, name: 'paid', timeoutMs: 60_000, until: '2026-11-24T10:01:00.000Z' };
    expect(waitOutcome(plan, { name: 'paid', payload: { amount: 42 }, at: 't' })).toEqual({
      result: '{"amount":42}',
      value: { amount: 42 },
      error: false,
    });
    expect(waitOutcome(plan).result).toBe('No "paid" event arrived within 1m (timed out at 2026-11-24T10:01:00.000Z).');
    expect(formatDuration(90_000)).toBe('1m 30s');
    expect(formatDuration(2 * 86_400_000 + 3_600_000 + 5_000)).toBe('2d 1h');
  });
});

describe('status', () => {
  const toolsPhase = (state: RunState): RunState => ({
    ...state,
    phase: {
      kind: 'tools',
      calls: [
        {
          call: { id: 'c1', type: 'function', function: { name: 'add', arguments: '{}' } },
          arguments: {},
          immediate: false,
          tool: { name: 'add', immediate: false, timeoutMs: 1000, retry: { maximumAttempts: 1, initialIntervalMs: 1 } },
          approval: { status: 'pending' },
        },
      ],
    },
  });

  it('says waiting, for what and until when, while a wait lasts', () => {
    const run = { ...startRun({ message: 'hi' }, []), phase: { kind: 'tools' as const, calls: [] } };
    const plan = { kind: 'sleep' as const, ms: 1000, until: '2026-11-24T10:00:01.000Z', reason: 'later' };
    const waiting = startWaiting(run, 'c1', plan);
    expect(runStatus(waiting)).toMatchObject({
      state: 'waiting',
      phase: 'wait',
      waits: [{ callId: 'c1', kind: 'sleep', reason: 'later', until: plan.until }],
    });
    const done = endWaiting(waiting, 'c1');
    expect(runStatus(done).state).toBe('running_tools');
    expect('waits' in done).toBe(false);
  });

  it('shows deadlines, escalations, and approvals of agents called as tools', () => {
    const asked = toolsPhase(startRun({ message: 'hi' }, []));
    const deadline = setApprovalDeadline(asked, '2026-11-24T11:00:00.000Z');
    expect(runStatus(deadline).pendingApprovals[0]).toMatchObject({ deadline: '2026-11-24T11:00:00.000Z' });
    const escalated = setApprovalDeadline(deadline, '2026-11-24T12:00:00.000Z', true);
    expect(runStatus(escalated)).toMatchObject({
      state: 'escalated',
      pendingApprovals: [{ escalated: true, deadline: '2026-11-24T12:00:00.000Z' }],
    });
    const caller = runStatus({ ...startRun({ message: 'hi' }, []), phase: { kind: 'tools', calls: [] } });
    const child = {
      callId: 'c9',
      name: 'add',
      arguments: {},
      summary: 'add()',
      workflowId: 'lead-clerk-c1',
      agent: 'clerk',
    };
    expect(withChildApprovals(caller, [child])).toMatchObject({
      state: 'awaiting_approval',
      pendingApprovals: [child],
    });
  });

  it('validates the new options', () => {
    expect(validateAgentInput({ message: 'x', onApprovalTimeout: 'later' })).toEqual([
      '"onApprovalTimeout" must be "reject", "approve" or "escalate", got "later"',
    ]);
    expect(validateAgentInput({ message: 'x', maxWait: '5' })[0]).toMatch(/"maxWait": invalid duration "5"/);
    expect(validateAgentInput({ message: 'x', waitsCountTowardTimeLimit: 'yes' })[0]).toMatch(/must be true or false/);
  });
});

describe('what people read', () => {
  const event = (body: Record<string, unknown>) => ({ offset: 0, turn: 1, ...body }) as AgentEvent;
  const lines = (events: AgentEvent[]) => {
    const notes: string[] = [];
    const printer = new EventPrinter({ text: () => undefined, note: (l) => notes.push(l) });
    events.forEach((e) => printer.show(e));
    return notes;
  };

  it('shows waits, events and escalations in the CLI and in MCP progress', () => {
    const events = [
      event({ type: 'wait_started', callId: 'c1', kind: 'event', name: 'paid', until: '2026-11-25T00:00:00.000Z' }),
      event({ type: 'event_received', name: 'paid' }),
      event({ type: 'approval_escalated', callId: 'c2', deadline: '2026-11-25T00:00:00.000Z' }),
      event({
        type: 'approval_requested',
        callId: 'c3',
        tool: 'add',
        arguments: {},
        summary: 'add()',
        agent: 'clerk',
        deadline: '2026-11-25T00:00:00.000Z',
      }),
    ];
    expect(lines(events)).toEqual([
      '  … waiting for event "paid" (until 2026-11-25T00:00:00.000Z at the latest)',
      '  ⚑ event "paid" arrived',
      '  ! approval of c2 escalated: no decision yet; decide by 2026-11-25T00:00:00.000Z',
      '  ? add() awaits approval [call c3] (asked by agent clerk), decide by 2026-11-25T00:00:00.000Z',
    ]);
    expect(events.map(progressText)).toEqual([
      'waiting for event paid (until 2026-11-25T00:00:00.000Z at the latest)',
      'event paid arrived',
      'approval of c2 escalated: decide by 2026-11-25T00:00:00.000Z',
      'waiting for approval: add() (asked by agent clerk), decide by 2026-11-25T00:00:00.000Z',
    ]);
  });
});
