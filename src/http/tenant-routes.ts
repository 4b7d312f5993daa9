import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import { tenantProblem, type TenantBudget, type TenantScope } from '../core';
import { ClientError } from '../client/client-error';
import { listTenantUsage, readTenantUsage, setTenantBudget, setTenantWeight } from '../client/tenants';
import { allow, HttpError, readJson, sendJson } from './http-io';

/**
 * `/tenants`: budgets, usage and shares (see `client/tenants.ts`).
 *
 *   GET    /tenants                    every tenant's usage this period (a tenant's token: its own)
 *   GET    /tenants/:tenant            one tenant's usage and budget
 *   PUT    /tenants/:tenant/budget     {"tokens"?, "usd"?, "per": "day"|"month"}; DELETE removes it
 *   PUT    /tenants/:tenant/weight     {"weight"}: its share of a backed-up task queue; DELETE removes it
 *
 * Setting needs an admin token; a tenant's token reads its own tenant only (another is 404).
 */
export async function tenantRoute(
  req: IncomingMessage,
  res: ServerResponse,
  client: Client,
  queues: { taskQueue: string; fleetTaskQueue?: string },
  parts: string[],
  method: string,
  scope: TenantScope,
): Promise<void> {
  if (parts.length === 1) {
    allow(method, 'GET');
    // A tenant's token: its own ledger only (never asks the others').
    if (scope.tenant !== undefined) {
      const own = await readTenantUsage(client, scope.tenant);
      return sendJson(res, 200, { tenants: own ? [own] : [] });
    }
    return sendJson(res, 200, { tenants: await listTenantUsage(client) });
  }
  const tenant = parts[1];
  const problem = tenantProblem(tenant, 'the tenant');
  if (problem) throw new HttpError(400, problem);
  if (scope.tenant !== undefined && scope.tenant !== tenant)
    throw new ClientError('not_found', `no tenant "${tenant}" exists`, tenant);
  if (parts.length === 2) {
    allow(method, 'GET');
    const usage = await readTenantUsage(client, tenant);
    return sendJson(res, 200, usage ?? { tenant, spent: { tokens: 0, usd: 0, calls: 0 }, held: { tokens: 0, usd: 0 } });
  }
  if (parts.length === 3 && (parts[2] === 'budget' || parts[2] === 'weight')) {
    if (method !== 'DELETE') allow(method, 'PUT');
    if (scope.tenant !== undefined)
      throw new HttpError(403, "a tenant's budget and share are set with an admin token", 'Http.Forbidden');
    if (parts[2] === 'budget') {
      const budget = method === 'DELETE' ? undefined : ((await readJson(req)) as unknown as TenantBudget);
      return sendJson(
        res,
        200,
        await setTenantBudget(client, tenant, budget, { fleetTaskQueue: queues.fleetTaskQueue }),
      );
    }
    const weight = method === 'DELETE' ? undefined : (await readJson(req)).weight;
    if (weight !== undefined && typeof weight !== 'number') throw new HttpError(400, '"weight" must be a number');
    const { taskQueue } = queues;
    await setTenantWeight(client, tenant, weight, { taskQueue });
    return sendJson(res, 200, { tenant, taskQueue, weight: weight ?? null });
  }
  throw new HttpError(404, `no route ${method} /${parts.join('/')}`, 'Http.NotFound');
}
