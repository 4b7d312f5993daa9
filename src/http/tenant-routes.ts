import { tenantProblem } from '../core/fleet/tenants';
import type { TenantBudget } from '../core/fleet/tenant-ledger';
import { ClientError } from '../client/client-error';
import { listTenantUsage, readTenantUsage, setTenantBudget, setTenantWeight } from '../client/tenants';
import { HttpError, readJson, sendJson } from './http-io';
import type { RequestContext, Route } from './route-table';

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
export const tenantRoutes: Route[] = [
  { method: 'GET', path: '/tenants', handle: listTenants },
  {
    method: 'GET',
    path: '/tenants/:tenant',
    handle: async (c) => {
      const tenant = tenantOf(c);
      const usage = await readTenantUsage(c.client, tenant);
      return sendJson(
        c.res,
        200,
        usage ?? { tenant, spent: { tokens: 0, usd: 0, calls: 0 }, held: { tokens: 0, usd: 0 } },
      );
    },
  },
  ...(['PUT', 'DELETE'] as const).flatMap((method): Route[] => [
    { method, path: '/tenants/:tenant/budget', handle: setBudget },
    { method, path: '/tenants/:tenant/weight', handle: setWeight },
  ]),
];

async function listTenants({ res, client, scope }: RequestContext): Promise<void> {
  // A tenant's token: its own ledger only (never asks the others').
  if (scope.tenant !== undefined) {
    const own = await readTenantUsage(client, scope.tenant);
    return sendJson(res, 200, { tenants: own ? [own] : [] });
  }
  return sendJson(res, 200, { tenants: await listTenantUsage(client) });
}

async function setBudget(c: RequestContext): Promise<void> {
  const tenant = settable(c);
  const budget = c.method === 'DELETE' ? undefined : ((await readJson(c.req)) as unknown as TenantBudget);
  return sendJson(c.res, 200, await setTenantBudget(c.client, tenant, budget, { fleetTaskQueue: c.o.fleetTaskQueue }));
}

async function setWeight(c: RequestContext): Promise<void> {
  const tenant = settable(c);
  const weight = c.method === 'DELETE' ? undefined : (await readJson(c.req)).weight;
  if (weight !== undefined && typeof weight !== 'number') throw new HttpError(400, '"weight" must be a number');
  const { taskQueue } = c.o;
  await setTenantWeight(c.client, tenant, weight, { taskQueue });
  return sendJson(c.res, 200, { tenant, taskQueue, weight: weight ?? null });
}

/** The path's tenant, checked: a tenant's token reads its own tenant only (another is 404). */
function tenantOf({ params, scope }: RequestContext): string {
  const { tenant } = params;
  const problem = tenantProblem(tenant, 'the tenant');
  if (problem) throw new HttpError(400, problem);
  if (scope.tenant !== undefined && scope.tenant !== tenant)
    throw new ClientError('not_found', `no tenant "${tenant}" exists`, tenant);
  return tenant;
}

/** The path's tenant, for setting its budget or share: an admin's act. */
function settable(c: RequestContext): string {
  const tenant = tenantOf(c);
  if (c.scope.tenant !== undefined)
    throw new HttpError(403, "a tenant's budget and share are set with an admin token", 'Http.Forbidden');
  return tenant;
}
