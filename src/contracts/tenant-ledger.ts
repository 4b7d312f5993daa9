import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  ReserveAnswer,
  ReserveRequest,
  SettleRequest,
  TenantBudget,
  TenantUsage,
} from '../core/fleet/tenant-ledger';

/**
 * The tenant ledger workflow's names (one workflow per tenant, see `tenantLedgerWorkflow`):
 * shared by the workflow, the model-call activities that reserve and settle, and the clients that
 * set budgets and read usage.
 */

/** The tenant ledger workflow's type name. */
export const TENANT_LEDGER_WORKFLOW_TYPE = 'tenantLedgerWorkflow';

/** The workflow id of a tenant's ledger. */
export function tenantLedgerId(tenant: string): string {
  return `tenant-ledger-${tenant}`;
}

/** Model calls of one worker ask to go ahead, together (an Update: each gets its answer, in order). */
export const reserveBudgetsUpdate = defineUpdate<ReserveAnswer[], [ReserveRequest[]]>('reserveBudgets');
/** A provider's reply is charged (a Signal: never waits for the ledger's worker). */
export const settleUsageSignal = defineSignal<[SettleRequest]>('settleUsage');
/** Sets (or with `budget` absent, removes) the tenant's budget; answers with its usage then. */
export const setTenantBudgetUpdate = defineUpdate<TenantUsage, [{ budget?: TenantBudget }]>('setTenantBudget');
/** The tenant's usage: this period's, the budget, and earlier periods'. */
export const tenantUsageQuery = defineQuery<TenantUsage>('tenantUsage');
