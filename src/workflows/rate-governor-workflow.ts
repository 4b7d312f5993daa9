import { allHandlersFinished, condition, continueAsNew, setHandler, workflowInfo } from '@temporalio/workflow';
import { newRateGovernor, pauseFor429, rateGovernorStatus, settleTokens, takeTurns } from '../core/fleet/rate-governor';
import { carriedIn, carryVersion } from '../core/state/carry-versions';
import {
  pauseModelSignal,
  rateGovernorQuery,
  settleTokensSignal,
  takeTurnsUpdate,
  type RateGovernorInput,
} from '../contracts/rate-governor';

/** Updates a governor run takes before it continues as new (Temporal refuses more than 2,000 a run). */
export const MAX_UPDATES_PER_RUN = 1_500;

/**
 * One model's rate governor, shared by every worker of the fleet: each call of the model asks for
 * its turn (`takeTurn`, an Update answered at once with how long to wait), so the fleet's calls
 * together keep to the provider's requests and tokens per minute, however many workers make them;
 * a 429 pauses the model for all (`pauseModel`). The decisions are the core's (rate-governor.ts);
 * this carries them out in workflow time, and continues as new when Temporal suggests it. It
 * never ends: it lives as long as the model is limited.
 */
export async function rateGovernorWorkflow(input: RateGovernorInput): Promise<never> {
  // A continued run's carry, read in this build's shape (core/state/carry-versions.ts).
  input = carriedIn('rateGovernor', input);
  let state = input.carry ?? newRateGovernor(input.model, input.limit, Date.now());
  // Temporal takes at most 2,000 Updates a workflow run: continue as new well before.
  let updates = 0;
  setHandler(takeTurnsUpdate, (requests) => {
    updates++;
    const next = takeTurns(state, requests, Date.now());
    state = next.state;
    return next.answers;
  });
  setHandler(settleTokensSignal, ({ estimated, actual }) => {
    state = settleTokens(state, estimated, actual);
  });
  setHandler(pauseModelSignal, ({ until }) => {
    state = pauseFor429(state, until);
  });
  setHandler(rateGovernorQuery, () => rateGovernorStatus(state, Date.now()));
  await condition(
    () => (workflowInfo().continueAsNewSuggested || updates >= MAX_UPDATES_PER_RUN) && allHandlersFinished(),
  );
  return continueAsNew<typeof rateGovernorWorkflow>({
    model: input.model,
    limit: state.limit,
    carry: state,
    carryVersion: carryVersion('rateGovernor'),
  });
}
