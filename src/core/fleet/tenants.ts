/**
 * Tenants: the customers one fleet serves. A tenant is a name on every run and conversation it
 * starts (the `AgentTenant` search attribute, and the fairness key Temporal dispatches by), and
 * the scope of what a token bound to it may see. Pure: used by clients, the HTTP layer and
 * workflow code alike.
 */

/**
 * Letters, digits, `_`, `.` and `-`, at most 64: Temporal's limit on a fairness key (64 bytes),
 * and nothing that needs quoting in a visibility query (`AgentTenant = 'acme'`) or a workflow id.
 */
export const TENANT_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/** Why `tenant` is not a tenant name, or undefined when it is (or is absent). */
export function tenantProblem(tenant: unknown, what = '"tenant"'): string | undefined {
  if (tenant === undefined) return undefined;
  if (typeof tenant !== 'string' || !TENANT_PATTERN.test(tenant))
    return `${what} must be a tenant name (letters, digits, _ . -, at most 64), got ${JSON.stringify(tenant)}`;
  return undefined;
}

/** One bearer token of `AGENT_HTTP_TOKENS`: bound to a tenant, or (without one) an admin token. */
export interface TenantToken {
  token: string;
  /** The tenant the token acts for; absent: an admin token, which sees every tenant. */
  tenant?: string;
}

/**
 * Reads one entry of `AGENT_HTTP_TOKENS`: `<token>` (admin) or `<token>=<tenant>`. The tenant is
 * what follows the last `=`, when that is a tenant name: a base64 token's padding (`abc==`) is
 * part of the token, not an empty tenant.
 */
export function parseTenantToken(entry: string): TenantToken {
  const at = entry.lastIndexOf('=');
  if (at > 0) {
    const tenant = entry.slice(at + 1);
    if (TENANT_PATTERN.test(tenant)) return { token: entry.slice(0, at), tenant };
  }
  return { token: entry };
}

/**
 * Who is asking: a tenant's caller (`{ tenant }`) or an admin (`{}`: a token without a tenant, the
 * CLI and library with no tenant named, a server without tokens).
 */
export interface TenantScope {
  tenant?: string;
}

/** What separates a tenant from the id it named, in its id space (`acme:chat-1`); no tenant name holds it. */
export const TENANT_ID_SEPARATOR = ':';

/**
 * The workflow (or schedule) id that a tenant's caller means by `id`: each tenant names ids in
 * an id space of its own (`chat-1` is `acme:chat-1` in Temporal), so two tenants naming the same
 * new id never meet in one workflow, and another tenant's id is, to a caller, exactly an id no
 * workflow has. An id already in the tenant's space is taken as it is (answers may carry it);
 * another tenant's (`globex:x`) is one more id in the caller's own (`acme:globex:x`).
 */
export function tenantWorkflowId(tenant: string, id: string): string {
  const prefix = `${tenant}${TENANT_ID_SEPARATOR}`;
  return id.startsWith(prefix) ? id : `${prefix}${id}`;
}

/** `id` as its tenant named it: without the tenant's prefix (see {@link tenantWorkflowId}). */
export function tenantLocalId(tenant: string | undefined, id: string): string {
  const prefix = `${tenant}${TENANT_ID_SEPARATOR}`;
  return tenant !== undefined && id.startsWith(prefix) ? id.slice(prefix.length) : id;
}

/**
 * Whether a caller in `scope` may see (and act on) a workflow of `owner` (its `AgentTenant`,
 * undefined for one started without a tenant): an admin sees everything; a tenant's caller only
 * its own tenant's, never one without a tenant.
 */
export function inScope(scope: TenantScope, owner: string | undefined): boolean {
  return scope.tenant === undefined || scope.tenant === owner;
}

/**
 * The tenant a caller in `scope` starts work as, given what its request asked for: a tenant's
 * caller always as its own (asking for another is refused with the reason); an admin as the one
 * it names, or none.
 */
export function tenantFor(scope: TenantScope, requested: string | undefined): string | undefined {
  const problem = tenantProblem(requested);
  if (problem) throw new Error(problem);
  if (scope.tenant === undefined) return requested;
  if (requested !== undefined && requested !== scope.tenant)
    throw new Error(`this token acts for tenant "${scope.tenant}" and cannot start work for "${requested}"`);
  return scope.tenant;
}

/** Temporal's task priority (`@temporalio/common`'s `Priority`, written out: core imports no SDK). */
export interface TaskPriority {
  /** 1 (first) to 5 (last); 3 when unset. */
  priorityKey?: number;
  /** Tasks are shared out by this key when the queue backs up: the tenant. */
  fairnessKey?: string;
  /** This key's share against others (default 1; Temporal clamps to 0.001–1000). */
  fairnessWeight?: number;
}

/** What sets a workflow's priority: its tenant and weight, and a priority key of its own. */
export interface PriorityRequest {
  tenant?: string;
  /** The tenant's share (default 1); a task queue's weight override (`tenants weight`) takes precedence. */
  fairnessWeight?: number;
  /** 1 (first) to 5 (last). */
  priorityKey?: number;
}

/** Why `priorityKey` is not one, or undefined. */
export function priorityKeyProblem(priorityKey: unknown): string | undefined {
  if (priorityKey === undefined) return undefined;
  if (!Number.isInteger(priorityKey) || (priorityKey as number) < 1 || (priorityKey as number) > 5)
    return `"priority" must be a whole number from 1 (first) to 5 (last), got ${JSON.stringify(priorityKey)}`;
  return undefined;
}

/** Why `weight` is not a fairness weight, or undefined. */
export function fairnessWeightProblem(weight: unknown): string | undefined {
  if (weight === undefined) return undefined;
  if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0.001 || weight > 1000)
    return `a fairness weight must be a number from 0.001 to 1000, got ${JSON.stringify(weight)}`;
  return undefined;
}

/**
 * The priority a workflow starts with, or undefined when nothing sets one (Temporal's default).
 * The fairness key is the tenant: when the task queue backs up, the server gives each tenant its
 * share, by weight, instead of first come first served. Activities and child workflows inherit
 * it field by field, and continue-as-new keeps it.
 */
export function workflowPriority(request: PriorityRequest): TaskPriority | undefined {
  const priority: TaskPriority = {};
  if (request.tenant !== undefined) priority.fairnessKey = request.tenant;
  if (request.fairnessWeight !== undefined) priority.fairnessWeight = request.fairnessWeight;
  if (request.priorityKey !== undefined) priority.priorityKey = request.priorityKey;
  return Object.keys(priority).length > 0 ? priority : undefined;
}
