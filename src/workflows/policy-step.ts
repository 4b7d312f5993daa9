import { isCancellation } from '@temporalio/workflow';
import { applyPolicyCheck, mergeDecisions, undecided } from '../core/policies/policies';
import type { PolicyCheck } from '../core/state/policy-types';
import type { NextStep, RunState } from '../core/state/run-state';
import { decidePolicies } from './activity-proxies';
import { failureInfo } from './failure-info';
import type { RunContext } from './run-context';

/**
 * Asks the worker's policies about a reply's tool calls (a recorded local activity: a replay reads
 * the decisions, never asks again), tells subscribers each call a policy forbade or sent to a
 * person, and returns the run with the decisions applied (see `applyPolicyCheck`). Policies that
 * cannot answer forbid (in `log` mode, let go) with why.
 */
export async function policyStep(
  state: RunState,
  step: Extract<NextStep, { type: 'check_policies' }>,
  ctx: RunContext,
): Promise<RunState> {
  const mode = state.policies?.mode ?? 'enforce';
  let check: PolicyCheck;
  try {
    check = await decidePolicies({ requests: step.requests });
  } catch (err) {
    if (isCancellation(err)) throw err;
    check = undecided(step.requests, mode, failureInfo(err).error);
  }
  // One event per call, whoever's policies decided it (the run's agent, the agents it works for),
  // and one per host a call was not granted.
  const seen = new Set<string>();
  const hosts = check.decisions.filter(
    (d) =>
      d.action === 'grantNetwork' &&
      d.decision !== 'permit' &&
      !seen.has(`${d.callId} ${d.host}`) &&
      seen.add(`${d.callId} ${d.host}`),
  );
  for (const d of [...mergeDecisions(check.decisions), ...hosts]) {
    if (d.decision === 'permit') continue;
    ctx.events.emit(ctx.turn, {
      type: 'policy_decided',
      callId: d.callId,
      tool: d.tool,
      decision: d.decision,
      policies: d.policies,
      enforced: check.mode === 'enforce',
      policySet: check.setHash,
      ...(d.host !== undefined ? { host: d.host } : {}),
    });
  }
  return applyPolicyCheck(state, check);
}
