import { carriedIn, carryVersion } from '../core/state/carry-versions';
import { allHandlersFinished, condition, continueAsNew, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  newTenantLedger,
  reserve,
  setTenantBudget,
  settle,
  tenantBudgetProblem,
  tenantUsage,
  type TenantLedgerState,
} from '../core/fleet/tenant-ledger';
import {
  reserveBudgetsUpdate,
  setTenantBudgetUpdate,
  settleUsageSignal,
  tenantUsageQuery,
} from '../contracts/tenant-ledger';

/** Updates a ledger run takes before it continues as new (Temporal refuses more than 2,000 a run). */
export const MAX_UPDATES_PER_RUN = 1_500;

/** What the ledger starts from: its tenant, and (after continue-as-new) the state it carries. */
export interface TenantLedgerInput {
  tenant: string;
  carry?: TenantLedgerState;
  /** The version of `carry`'s shape (see core/state/carry-versions.ts); none: version 1. */
  carryVersion?: number;
}

/**
 * One tenant's ledger, shared by every worker of the fleet: model calls of the tenant's runs
 * reserve an estimate before they ask the provider (`reserveBudget`, an Update) and settle what
 * the reply cost after (`settleUsage`, a Signal); `tenants budget` sets the budget and `tenants
 * usage` reads it. The decisions are the core's (tenant-ledger.ts); this only carries them out,
 * in workflow time, and continues as new when Temporal suggests it, carrying the ledger (never
 * more than its reservations, the last settled keys and twelve periods). It never ends: a
 * tenant's ledger lives as long as the tenant.
 */
export async function tenantLedgerWorkflow(input: TenantLedgerInput): Promise<never> {
  // A continued run's carry, read in this build's shape (core/state/carry-versions.ts).
  input = carriedIn('tenantLedger', input);
  let state = input.carry ?? newTenantLedger(input.tenant, Date.now());
  // Temporal takes at most 2,000 Updates a workflow run: continue as new well before.
  let updates = 0;
  setHandler(reserveBudgetsUpdate, (requests) => {
    updates++;
    return requests.map((request) => {
      const next = reserve(state, request, Date.now());
      state = next.state;
      return next.answer;
    });
  });
  setHandler(settleUsageSignal, (request) => {
    state = settle(state, request, Date.now());
  });
  setHandler(
    setTenantBudgetUpdate,
    ({ budget }) => {
      state = setTenantBudget(state, budget, Date.now());
      return tenantUsage(state, Date.now());
    },
    {
      validator: ({ budget }) => {
        const problem = budget === undefined ? undefined : tenantBudgetProblem(budget);
        if (problem) throw new Error(problem);
      },
    },
  );
  setHandler(tenantUsageQuery, () => tenantUsage(state, Date.now()));
  await condition(
    () => (workflowInfo().continueAsNewSuggested || updates >= MAX_UPDATES_PER_RUN) && allHandlersFinished(),
  );
  return continueAsNew<typeof tenantLedgerWorkflow>({
    tenant: input.tenant,
    carry: state,
    carryVersion: carryVersion('tenantLedger'),
  });
}
