import {
  budgetLeft,
  budgetSpent,
  nextStep,
  pendingApprovals,
  setApprovalDeadline,
  type NextStep,
  type RunState,
} from '../core';
import { awaitApprovals } from './approvals';
import { compactStep, guardrailStep, modelStep } from './model-steps';
import type { RunContext, RunRef } from './run-context';
import { toolStep } from './tool-step';

export type { RunContext, RunRef } from './run-context';
export { handleApprovals, handleEvents } from './approvals';
export { MODEL_CALL_ATTEMPTS, resolveAgent, resolveTools } from './activity-proxies';

/**
 * Drives one run of the agent loop to its end: asks the core for the next step, carries it out,
 * and keeps the state the step returns. Shared by one-shot runs and conversation turns.
 * Cancellation of the enclosing scope (time limit, a cancelled turn) propagates out.
 */
export async function runLoop(run: RunRef, ctx: RunContext): Promise<void> {
  for (let step = nextStep(run.state); step.type !== 'finish'; step = nextStep(run.state)) {
    // The run's observers (its search attributes) see each step begin.
    ctx.events.stepStarted(ctx.turn, step);
    run.state = await takeStep(run, step, ctx);
  }
}

/**
 * Carries out one step and returns the run's next state. Most steps are state in, state out; a
 * step that waits (approvals, durable waits) also shows its progress in `run.state` meanwhile,
 * since queries and handlers read it there.
 */
function takeStep(run: RunRef, step: Exclude<NextStep, { type: 'finish' }>, ctx: RunContext): Promise<RunState> {
  switch (step.type) {
    case 'call_model':
      return modelStep(run.state, step, ctx);
    case 'compact':
      return compactStep(run.state, step, ctx);
    case 'check_guardrails':
      return guardrailStep(run.state, step, ctx);
    case 'await_approval':
      return approvalStep(run, step, ctx);
    case 'run_tools': {
      // Agents called as tools draw from what is left of this run's budget.
      const { budget, onBudget } = run.state.limits;
      const left = budget
        ? { budget: budgetLeft(budget, budgetSpent(run.state)), ...(onBudget ? { onBudget } : {}) }
        : undefined;
      return toolStep(run, step.calls, ctx, left);
    }
  }
}

/**
 * Asks for the pending approvals (with their deadline, under an approval timeout) and waits,
 * durably, until they are decided; the decisions arrive through the approval Update's handler.
 */
async function approvalStep(
  run: RunRef,
  step: Extract<NextStep, { type: 'await_approval' }>,
  ctx: RunContext,
): Promise<RunState> {
  // With a timeout, people see when it applies (the calls keep their deadline).
  const timeoutMs = run.state.limits.approvalTimeoutMs;
  if (timeoutMs !== undefined)
    run.state = setApprovalDeadline(run.state, new Date(Date.now() + timeoutMs).toISOString());
  const pending = run.state.phase.kind === 'tools' ? pendingApprovals(run.state.phase.calls) : step.pending;
  for (const p of pending)
    ctx.events.emit(ctx.turn, {
      type: 'approval_requested',
      callId: p.callId,
      tool: p.name,
      arguments: p.arguments,
      summary: p.summary,
      ...(p.deadline ? { deadline: p.deadline } : {}),
    });
  await awaitApprovals(run, pending, ctx);
  return run.state;
}
