import { condition, sleep } from '@temporalio/workflow';
import {
  endWaiting,
  planWait,
  startWaiting,
  waitOutcome,
  waitSummary,
  type DeliveredEvent,
  type PlannedToolCall,
  type ToolOutcome,
} from '../core';
import type { RunContext, RunRef } from './run-context';

/**
 * Carries out a durable wait the model asked for: `sleep` as a workflow timer (its reason the
 * timer's summary in the Temporal UI), `wait_for_event` as a condition on the run's event inbox,
 * with the timeout as its timer. No activity, no worker held; a restart resumes the wait. While it
 * lasts, `status` and `AgentStatus` say `waiting`, and the time limit's clock stops unless the run
 * counts waits.
 */
export async function runWait(planned: PlannedToolCall, run: RunRef, ctx: RunContext): Promise<ToolOutcome> {
  const planning = planWait(planned.call.function.name, planned.arguments, Date.now(), run.state.limits.maxWaitMs);
  if ('resolved' in planning) return planning.resolved;
  const { plan } = planning;
  const callId = planned.call.id;
  run.state = startWaiting(run.state, callId, plan);
  ctx.events.emit(ctx.turn, {
    type: 'wait_started',
    callId,
    kind: plan.kind,
    ...(plan.kind === 'event' ? { name: plan.name } : { reason: plan.reason }),
    until: plan.until,
  });
  const countsToward = run.state.limits.waitsCountTowardTimeLimit === true;
  if (!countsToward) ctx.timeLimit?.pause();
  let event: DeliveredEvent | undefined;
  let outcome: 'elapsed' | 'event' | 'timed_out' = 'elapsed';
  try {
    if (plan.kind === 'sleep') {
      if (plan.ms > 0) await sleep(plan.ms, { summary: waitSummary(plan) });
    } else {
      const inbox = ctx.inbox;
      const arrived = inbox
        ? await condition(() => inbox.has(plan.name), plan.timeoutMs, { summary: waitSummary(plan) })
        : false;
      event = arrived ? inbox?.take(plan.name) : undefined;
      outcome = event ? 'event' : 'timed_out';
    }
  } finally {
    if (!countsToward) ctx.timeLimit?.resume();
    run.state = endWaiting(run.state, callId);
  }
  ctx.events.emit(ctx.turn, { type: 'wait_ended', callId, kind: plan.kind, outcome });
  return waitOutcome(plan, event);
}
