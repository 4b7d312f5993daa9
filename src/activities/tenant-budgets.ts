import { ApplicationFailure, Context } from '@temporalio/activity';
import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import type { ReserveAnswer, ReserveRequest, TenantBudgetReport } from '../core/fleet/tenant-ledger';
import { UpdateBatcher } from './update-batcher';
import {
  reserveBudgetsUpdate,
  settleUsageSignal,
  TENANT_LEDGER_WORKFLOW_TYPE,
  tenantLedgerId,
} from '../contracts/tenant-ledger';

/** How long a model call waits for its tenant's ledger to answer a reservation. */
export const LEDGER_WAIT_MS = 10_000;

/** How long a tenant found without a budget skips the reservation before asking again. */
export const NO_BUDGET_RECHECK_MS = 10_000;

/**
 * A model call's side of the tenants' ledgers (see `tenantLedgerWorkflow`): before it asks the
 * provider, a call of a tenant's run reserves an estimate (an Update-with-Start of the tenant's
 * ledger, which the first call of a tenant starts); after the reply, it settles what the reply
 * cost (a Signal-with-Start). The call's key is its workflow, run and activity id, the same on
 * every attempt; the settlement is keyed by attempt too, so each reply is charged once.
 * A tenant with no budget costs a model call one reservation every {@link NO_BUDGET_RECHECK_MS},
 * and the settlement (its usage is still counted).
 */
export class TenantBudgets {
  /** Tenants known to have no budget, until when. */
  private readonly unlimited = new Map<string, number>();
  /** Per tenant: this worker's calls reserve together. */
  private readonly batchers = new Map<string, UpdateBatcher<ReserveRequest, ReserveAnswer>>();

  /**
   * @param fleetTaskQueue Where the ledgers run (see contracts/fleet-queue.ts): a ledger started
   *   by a call runs there, never on the queue of the run that first met its tenant.
   */
  constructor(
    private readonly client: () => Client,
    private readonly fleetTaskQueue: string,
  ) {}

  /**
   * Reserves `estimate` for this call (the activity's) in `tenant`'s ledger; throws a
   * non-retryable `Budget.TenantExceeded` (with the tenant's figures as details) when the
   * tenant's budget for the period is spent.
   */
  async reserve(tenant: string, estimate: { tokens: number; usd?: number }, call = 0): Promise<void> {
    const known = this.unlimited.get(tenant);
    if (known !== undefined && known > Date.now()) return;
    const { info } = Context.current();
    const key = callKey(info, call);
    let answer: ReserveAnswer;
    try {
      answer = await this.batcher(tenant).ask({
        key,
        tokens: estimate.tokens,
        ...(estimate.usd !== undefined ? { usd: estimate.usd } : {}),
      });
    } catch (err) {
      if (!/deadline/i.test(`${(err as Error).message} ${String((err as Error).cause ?? '')}`)) throw err;
      // Retried by Temporal: the ledger may be back (its worker restarting) by the next attempt.
      throw ApplicationFailure.create({
        message: `the budget ledger of tenant "${tenant}" (workflow ${tenantLedgerId(tenant)}) did not answer within ${LEDGER_WAIT_MS / 1000} s: no worker serves the task queue it runs on now (the fleet's, "${this.fleetTaskQueue}", which every agents worker serves; a ledger started by an older version runs on the queue of its tenant's first model call); give every worker the same AGENT_FLEET_TASK_QUEUE, or terminate the ledger to start it again there`,
        type: 'Budget.LedgerUnavailable',
      });
    }
    if (answer.granted) {
      if (answer.unlimited) this.unlimited.set(tenant, Date.now() + NO_BUDGET_RECHECK_MS);
      else this.unlimited.delete(tenant);
      return;
    }
    this.unlimited.delete(tenant);
    throw ApplicationFailure.create({
      message: tenantBudgetSentence(answer.report),
      type: 'Budget.TenantExceeded',
      nonRetryable: true,
      details: [answer.report],
    });
  }

  /** Charges this attempt's reply to `tenant` (once, whatever repeats it); `call`: see {@link callKey}. */
  async settle(tenant: string, usage: { totalTokens: number; costUsd?: number }, call = 0): Promise<void> {
    const { info } = Context.current();
    await this.client().workflow.signalWithStart(TENANT_LEDGER_WORKFLOW_TYPE, {
      workflowId: tenantLedgerId(tenant),
      taskQueue: this.fleetTaskQueue,
      args: [{ tenant }],
      signal: settleUsageSignal,
      signalArgs: [
        {
          key: callKey(info, call),
          attempt: info.attempt,
          tokens: usage.totalTokens,
          ...(usage.costUsd !== undefined ? { usd: usage.costUsd } : {}),
        },
      ],
    });
  }

  /** The tenant's batcher: this worker's calls of the tenant reserve together (see `UpdateBatcher`). */
  private batcher(tenant: string): UpdateBatcher<ReserveRequest, ReserveAnswer> {
    let batcher = this.batchers.get(tenant);
    if (batcher) return batcher;
    batcher = new UpdateBatcher((requests) => {
      const client = this.client();
      // Bounded: a ledger whose task queue has no worker must not hold the calls for their whole timeout.
      return client.withDeadline(Date.now() + LEDGER_WAIT_MS, () =>
        client.workflow.executeUpdateWithStart(reserveBudgetsUpdate, {
          args: [requests],
          updateId: `reserve-${randomUUID()}`,
          startWorkflowOperation: this.ledger(tenant),
        }),
      );
    });
    this.batchers.set(tenant, batcher);
    return batcher;
  }

  private ledger(tenant: string) {
    return new WithStartWorkflowOperation(TENANT_LEDGER_WORKFLOW_TYPE, {
      workflowId: tenantLedgerId(tenant),
      taskQueue: this.fleetTaskQueue,
      args: [{ tenant }],
      workflowIdConflictPolicy: 'USE_EXISTING',
      staticSummary: `ledger of tenant ${tenant}`,
    });
  }
}

/**
 * A model call's key: the same on every attempt, different for every other call. An activity that
 * makes several (an extraction's model call, then the embeddings of the facts it keeps) numbers
 * them in the order it makes them (`call`), the first keyed by the activity alone.
 */
function callKey(info: Context['info'], call: number): string {
  const execution = info.workflowExecution ?? { workflowId: '', runId: '' };
  return `${execution.workflowId}/${execution.runId}/${info.activityId}${call ? `#${call}` : ''}`;
}

/** Why a tenant's call was refused, with its figures. */
export function tenantBudgetSentence(r: TenantBudgetReport): string {
  const limits = [
    ...(r.limit.tokens !== undefined ? [`${r.spent.tokens} of ${r.limit.tokens} tokens`] : []),
    ...(r.limit.usd !== undefined ? [`$${r.spent.usd.toFixed(4)} of $${r.limit.usd}`] : []),
  ];
  return `the budget of tenant "${r.tenant}" for ${r.period} is spent (${limits.join(', ')}; per ${r.limit.per}): raise it with "durable-agents tenants budget ${r.tenant}", or wait for the next ${r.limit.per}`;
}
