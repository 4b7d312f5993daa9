import { policyStep } from './policy-step';
import { recallForTurn } from './memory-steps';
import { budgetLeft, budgetSpent } from '../core/state/limits';
import { forgetInRun } from '../core/conversation/forgetting';
import { nextStep } from '../core/run/agent-loop';
import { withSteering } from '../core/conversation/busy';
import type { NextStep, RunState } from '../core/state/run-state';
import { approvalStep } from './approvals';
import { compactStep, guardrailStep, modelStep } from './model-steps';
import type { RunContext, RunRef } from './run-context';
import { toolStep } from './tool-step';

export type { RunContext, RunRef } from './run-context';
export { handleApprovals } from './approvals';
export { handleEvents } from './events';
export { MODEL_CALL_ATTEMPTS } from './activity-proxies';

/**
 * Drives one run of the agent loop to its end: asks the core for the next step, carries it out,
 * and keeps the state the step returns. Shared by one-shot runs and conversation turns.
 * Cancellation of the enclosing scope (time limit, a cancelled turn) propagates out.
 */
export async function runLoop(run: RunRef, ctx: RunContext): Promise<void> {
  // Awaited only with memory: runs without it keep the commands they recorded, in their order.
  if (ctx.memory) await recallForTurn(run, ctx);
  for (let step = nextStep(run.state); step.type !== 'finish'; step = nextStep(run.state)) {
    // Messages that steer the turn join it before a model call; the step is decided again with them.
    const steering = step.type === 'call_model' ? ctx.steering?.() : undefined;
    if (steering?.length) {
      run.state = withSteering(
        run.state,
        steering.map((m) => m.message),
      );
      for (const m of steering)
        ctx.events.emit(ctx.turn, {
          type: 'message_steered',
          message: m.message,
          ...(m.messageId !== undefined ? { messageId: m.messageId } : {}),
        });
      continue;
    }
    // Awaited only when the run continues as new (it never returns): an extra await between
    // steps would reorder the commands of recorded runs.
    const continuing = ctx.beforeStep?.(run.state);
    if (continuing) await continuing;
    // The run's observers (its search attributes) see each step begin.
    ctx.events.stepStarted(ctx.turn, step);
    run.state = await takeStep(run, step, ctx);
    if (run.forgotten) run.state = forgetInRun(run.state, run.forgotten).state;
  }
}

/**
 * Carries out one step and returns the run's next state. Most steps are state in, state out; a
 * step that waits (approvals, durable waits) also shows its progress in `run.state` meanwhile,
 * since queries and handlers read it there.
 */
function takeStep(run: RunRef, step: Exclude<NextStep, { type: 'finish' }>, ctx: RunContext): Promise<RunState> {
  // A model call and a summary read the messages from their worker's cache (a sink, not a query).
  if (step.type === 'call_model' || step.type === 'compact') ctx.shared.share(run.state.messages, run.state.revision);
  switch (step.type) {
    case 'call_model':
      return modelStep(run.state, step, ctx);
    case 'compact':
      return compactStep(run.state, step, ctx);
    case 'check_guardrails':
      return guardrailStep(run.state, step, ctx);
    case 'check_policies':
      return policyStep(run.state, step, ctx);
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
