import type { Client } from '@temporalio/client';
import { agentListFilterProblem, type AgentListFilter } from '../core/run/search-attributes';
import type { TenantScope } from '../core/fleet/tenants';
import { listAgentRuns } from '../client/list-runs';
import { HttpError, tenantOf } from './http-io';

/** The most a list answers at once. */
const MAX_LIMIT = 100;

/**
 * `GET /runs` and `GET /conversations`: the newest first (`kind` says which), filtered by
 * `?status=`, `?agent=`, `?agentVersion=`, `?tenant=` and a visibility `?query=`, at most
 * `?limit=` (default 20, at most 100). A tenant's token lists its tenant's only, whatever it asks.
 */
export async function listRoute(
  client: Client,
  url: URL,
  scope: TenantScope,
  what: 'runs' | 'conversations',
): Promise<{ query: string; runs: Awaited<ReturnType<typeof listAgentRuns>>['runs'] }> {
  const param = (name: string) => url.searchParams.get(name) ?? undefined;
  const filter: AgentListFilter & { limit?: number } = {};
  for (const key of ['status', 'agent', 'agentVersion', 'query'] as const) {
    const value = param(key);
    if (value !== undefined) filter[key] = value;
  }
  const tenant = tenantOf(scope, param('tenant'));
  if (tenant !== undefined) filter.tenant = tenant;
  const limit = param('limit');
  if (limit !== undefined) {
    if (!/^\d+$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_LIMIT)
      throw new HttpError(400, `"limit" must be a whole number from 1 to ${MAX_LIMIT}, got "${limit}"`);
    filter.limit = Number(limit);
  }
  const problem = agentListFilterProblem(filter);
  if (problem) throw new HttpError(400, problem);
  return listAgentRuns(client, { ...filter, only: what === 'runs' ? 'run' : 'conversation', queryName: '"query"' });
}
