import { status } from '@grpc/grpc-js';
import type { Client } from '@temporalio/client';
import { inScope, searchAttributeCreateCommands, type TenantScope } from '../core';
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
 * Refuses a caller in `scope` a workflow of another tenant, as if it did not exist (`not_found`,
 * the same words as for an id no workflow has): a tenant learns nothing of another's ids. An
 * admin scope (no tenant) is never refused and costs nothing. An id no workflow has passes: what
 * the caller asked for then says so itself (or starts it, as a message to a new conversation does).
 */
export async function checkInScope(
  client: Client,
  scope: TenantScope,
  workflowId: string,
  what: 'run' | 'conversation' | 'run or conversation' = 'run or conversation',
): Promise<void> {
  if (scope.tenant === undefined) return;
  const owner = await workflowOwner(client, workflowId);
  if (owner === null || inScope(scope, owner)) return;
  throw new ClientError('not_found', `no ${what} "${workflowId}" exists`, workflowId);
}
