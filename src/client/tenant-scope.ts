import { status } from '@grpc/grpc-js';
import type { Client } from '@temporalio/client';
import { inScope, tenantWorkflowId, type TenantScope } from '../core/fleet/tenants';
import { searchAttributeCreateCommands } from '../core/run/search-attributes';
import { ClientError } from './client-error';
import { lookupWorkflow } from './workflow-lookup';

export { TENANT_KEY, tenantStartOptions } from '../contracts/tenant-start';

/**
 * The error for a start the server refused because the namespace has no `AgentTenant` search
 * attribute (with the command that adds it), or `err` as it was.
 */
export function explainTenantStart(client: Client, err: unknown): unknown {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code;
    const text = `${e.message} ${(e as { details?: unknown }).details ?? ''}`;
    if ((code === undefined || code === status.INVALID_ARGUMENT) && /AgentTenant/.test(text))
      return new ClientError(
        'invalid',
        `the namespace "${client.options.namespace}" has no AgentTenant search attribute, which runs with a tenant need; add it with: ${searchAttributeCreateCommands(client.options.namespace, [{ name: 'AgentTenant', type: 'Keyword' }])[0]}`,
      );
  }
  return err;
}

/** How long the tenant of a workflow id is remembered (a workflow's tenant never changes; an id can be reused). */
const OWNER_CACHE_MS = 60_000;
const owners = new WeakMap<Client, Map<string, { owner: string | undefined; at: number }>>();

/**
 * The tenant a workflow belongs to (its `AgentTenant`), `undefined` for one without a tenant, or
 * `null` when no workflow has the id. Remembered per client for a minute, so a tenant's chat does
 * not pay a describe per message.
 */
export async function workflowOwner(client: Client, workflowId: string): Promise<string | undefined | null> {
  let cache = owners.get(client);
  if (!cache) owners.set(client, (cache = new Map()));
  const now = Date.now();
  const known = cache.get(workflowId);
  if (known && now - known.at < OWNER_CACHE_MS) return known.owner;
  const found = await lookupWorkflow(client, workflowId);
  if (!found) return null;
  const owner = found.tenant;
  if (cache.size > 10_000) for (const [id, e] of cache) if (now - e.at >= OWNER_CACHE_MS) cache.delete(id);
  cache.set(workflowId, { owner, at: now });
  return owner;
}

/**
 * The workflow id a caller in `scope` means by `id`, checked: an admin's id as it is; a tenant's
 * in the tenant's own id space (`chat-1` → `acme:chat-1`, see `tenantWorkflowId`), so what the
 * caller starts under it is its own, and another tenant's id answers exactly as an id no workflow
 * has (both name an id of the caller's space that does not exist). A tenant's workflow started
 * under a plain id (by an admin for the tenant, or before ids had spaces) is still found by it.
 * A workflow in the caller's space that another tenant owns (an admin's doing) is refused with
 * the words of a missing one (`not_found`).
 */
export async function scopedWorkflowId(
  client: Client,
  scope: TenantScope,
  id: string,
  what: 'run' | 'conversation' | 'run or conversation' = 'run or conversation',
): Promise<string> {
  if (scope.tenant === undefined) return id;
  const own = tenantWorkflowId(scope.tenant, id);
  const owner = await workflowOwner(client, own);
  if (owner === null && own !== id && (await workflowOwner(client, id)) === scope.tenant) return id;
  if (owner !== null && !inScope(scope, owner)) throw new ClientError('not_found', `no ${what} "${own}" exists`, own);
  return own;
}
