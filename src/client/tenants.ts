import { WithStartWorkflowOperation, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { fairnessWeightProblem, tenantProblem } from '../core/fleet/tenants';
import { tenantBudgetProblem, type TenantBudget, type TenantUsage } from '../core/fleet/tenant-ledger';
import {
  setTenantBudgetUpdate,
  TENANT_LEDGER_WORKFLOW_TYPE,
  tenantLedgerId,
  tenantUsageQuery,
} from '../contracts/tenant-ledger';
import { DEFAULT_FLEET_TASK_QUEUE } from '../contracts/fleet-queue';
import { ClientError } from './client-error';
import { lookupWorkflow, withinQueryWait } from './workflow-lookup';
import { requireWorker } from './task-queue-workers';

/**
 * Tenants' budgets, usage and shares, for operators (`durable-agents tenants`, the HTTP API's
 * `/tenants` routes). A tenant's budget and usage live in its ledger workflow (see
 * `tenantLedgerWorkflow`), which runs on the fleet's task queue (every agents worker serves it;
 * see contracts/fleet-queue.ts); its share of a backed-up task queue is a fairness weight
 * Temporal keeps on the queue itself.
 */

function checkTenant(tenant: string): void {
  const problem = tenantProblem(tenant, 'the tenant');
  if (problem) throw new ClientError('invalid', problem);
}

/**
 * Sets a tenant's budget per day or month (tokens and/or dollars), or removes it (`undefined`).
 * Runs of the tenant are refused model calls once the period's spending reaches it (they end
 * `budget_exceeded`); the spending so far in the period counts. Starts the tenant's ledger on
 * the fleet's task queue (`fleetTaskQueue`, default `durable-agents-fleet`, as the workers'
 * `AGENT_FLEET_TASK_QUEUE`) when it has none.
 */
export async function setTenantBudget(
  client: Client,
  tenant: string,
  budget: TenantBudget | undefined,
  options: { fleetTaskQueue?: string } = {},
): Promise<TenantUsage> {
  checkTenant(tenant);
  const problem = budget === undefined ? undefined : tenantBudgetProblem(budget);
  if (problem) throw new ClientError('invalid', problem);
  const fleetTaskQueue = options.fleetTaskQueue ?? DEFAULT_FLEET_TASK_QUEUE;
  // The ledger answers from a worker on the fleet's queue: without one the Update would wait for
  // good (a caller's fleetTaskQueue that is not the workers' AGENT_FLEET_TASK_QUEUE, say). A worker
  // just started (the CLI's own, embedded) serves it within seconds.
  await requireWorker(client, fleetTaskQueue, '', 10_000).catch((err: unknown) => {
    if (!(err instanceof ClientError)) throw err;
    throw new ClientError(
      'no_worker',
      `no worker polls the fleet's task queue "${fleetTaskQueue}", where tenants' ledgers run (every agents worker serves it): start a worker, or give this the workers' AGENT_FLEET_TASK_QUEUE (fleetTaskQueue in code), then set the budget again`,
    );
  });
  try {
    return await client.workflow.executeUpdateWithStart(setTenantBudgetUpdate, {
      args: [budget === undefined ? {} : { budget }],
      startWorkflowOperation: new WithStartWorkflowOperation(TENANT_LEDGER_WORKFLOW_TYPE, {
        workflowId: tenantLedgerId(tenant),
        taskQueue: fleetTaskQueue,
        args: [{ tenant }],
        workflowIdConflictPolicy: 'USE_EXISTING',
        staticSummary: `ledger of tenant ${tenant}`,
      }),
    });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError)
      throw new ClientError('rejected', (err.cause as Error | undefined)?.message ?? err.message);
    throw err;
  }
}

/** A tenant's usage and budget, or undefined when it has no ledger yet (no budget set, no model call made). */
export async function readTenantUsage(client: Client, tenant: string): Promise<TenantUsage | undefined> {
  checkTenant(tenant);
  const found = await lookupWorkflow(client, tenantLedgerId(tenant));
  if (!found || !found.running) return undefined;
  return withinQueryWait(client, () => client.workflow.getHandle(tenantLedgerId(tenant)).query(tenantUsageQuery));
}

/** How long `listTenantUsage` waits for each ledger's worker to answer. */
const LIST_WAIT_MS = 3_000;

/**
 * Every tenant's usage: one per ledger (tenants whose runs made a model call, or that have a
 * budget), asked all at once. A ledger no worker answers for (its task queue has none now) is
 * listed with `unavailable` and its tenant only.
 */
export async function listTenantUsage(
  client: Client,
): Promise<(TenantUsage | { tenant: string; unavailable: string })[]> {
  const ids: string[] = [];
  for await (const w of client.workflow.list({
    query: `WorkflowType = '${TENANT_LEDGER_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'`,
  }))
    ids.push(w.workflowId);
  const read = await Promise.all(
    ids.map(async (id) => {
      const tenant = id.slice(tenantLedgerId('').length);
      try {
        return await client.withDeadline(Date.now() + LIST_WAIT_MS, () =>
          client.workflow.getHandle(id).query(tenantUsageQuery),
        );
      } catch {
        return { tenant, unavailable: 'no worker answered for its ledger (its task queue has none running now)' };
      }
    }),
  );
  return read.sort((a, b) => a.tenant.localeCompare(b.tenant));
}

/**
 * Sets a tenant's share of a backed-up task queue (its fairness weight; default 1), on the queue
 * itself (Temporal's task queue config, for its workflow and activity tasks), where it outranks
 * the weight runs start with; `undefined` removes it.
 */
export async function setTenantWeight(
  client: Client,
  tenant: string,
  weight: number | undefined,
  options: { taskQueue: string },
): Promise<void> {
  checkTenant(tenant);
  const problem = fairnessWeightProblem(weight);
  if (problem) throw new ClientError('invalid', problem);
  const { TaskQueueType } = temporal.api.enums.v1;
  for (const taskQueueType of [TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW, TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY])
    await client.workflowService.updateTaskQueueConfig({
      namespace: client.options.namespace,
      identity: client.options.identity,
      taskQueue: options.taskQueue,
      taskQueueType,
      ...(weight === undefined
        ? { unsetFairnessWeightOverrides: [tenant] }
        : { setFairnessWeightOverrides: { [tenant]: weight } }),
    });
}
