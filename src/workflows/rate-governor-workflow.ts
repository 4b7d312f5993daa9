import { allHandlersFinished, condition, continueAsNew, setHandler, workflowInfo } from '@temporalio/workflow';
import { newRateGovernor, pauseFor429, rateGovernorStatus, settleTokens, takeTurn } from '../core';
import {
  pauseModelSignal,
  rateGovernorQuery,
  settleTokensSignal,
  takeTurnUpdate,
  type RateGovernorInput,
} from '../contracts/rate-governor';

/**
 * One model's rate governor, shared by every worker of the fleet: each call of the model asks for
 * its turn (`takeTurn`, an Update answered at once with how long to wait), so the fleet's calls
 * together keep to the provider's requests and tokens per minute, however many workers make them;
 * a 429 pauses the model for all (`pauseModel`). The decisions are the core's (rate-governor.ts);
 * this carries them out in workflow time, and continues as new when Temporal suggests it. It
 * never ends: it lives as long as the model is limited.
 */
export async function rateGovernorWorkflow(input: RateGovernorInput): Promise<never> {
  let state = input.carry ?? newRateGovernor(input.model, input.limit, Date.now());
  setHandler(takeTurnUpdate, (request) => {
    const next = takeTurn(state, request, Date.now());
    state = next.state;
    return next.answer;
  });
  setHandler(settleTokensSignal, ({ estimated, actual }) => {
    state = settleTokens(state, estimated, actual);
  });
  setHandler(pauseModelSignal, ({ until }) => {
    state = pauseFor429(state, until);
  });
  setHandler(rateGovernorQuery, () => rateGovernorStatus(state, Date.now()));
  await condition(() => workflowInfo().continueAsNewSuggested && allHandlersFinished());
  return continueAsNew<typeof rateGovernorWorkflow>({ model: input.model, limit: state.limit, carry: state });
}
