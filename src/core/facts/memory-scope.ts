import { tenantProblem } from '../fleet/tenants';

/**
 * Memory across conversations is kept per person: the `user` a run or conversation works for,
 * within its tenant, and (when an agent keeps its own) per agent. Pure: clients, the HTTP layer,
 * the workflows and the store all check scopes with these.
 */

/**
 * Letters, digits and `_ . - @ + :`, at most 128: an account id or an email address, nothing
 * that needs quoting in a workflow id or a URL path segment.
 */
export const USER_PATTERN = /^[A-Za-z0-9_.@+:-]{1,128}$/;

/** Why `user` is not a user id, or undefined when it is (or is absent). */
export function userProblem(user: unknown, what = '"user"'): string | undefined {
  if (user === undefined) return undefined;
  if (typeof user !== 'string' || !USER_PATTERN.test(user))
    return `${what} must be a user id (letters, digits, _ . - @ + :, at most 128), got ${JSON.stringify(user)}`;
  return undefined;
}

/**
 * Whose memory: a user, within a tenant (absent: the fleet's users without one), and, for an
 * agent that keeps its own (`memory: { scope: 'agent' }`), that agent's share of it.
 */
export interface MemoryScope {
  tenant?: string;
  user: string;
  /** Facts only this agent recalls; absent: facts every agent of the tenant recalls for the user. */
  agent?: string;
}

/** Why `scope` is not a memory scope, or undefined when it is. */
export function memoryScopeProblem(scope: Partial<MemoryScope>): string | undefined {
  if (scope.user === undefined) return 'memory needs a user: start the run or conversation with "user"';
  return (
    userProblem(scope.user) ??
    tenantProblem(scope.tenant) ??
    (scope.agent !== undefined && (typeof scope.agent !== 'string' || !scope.agent)
      ? `"agent" must be an agent name, got ${JSON.stringify(scope.agent)}`
      : undefined)
  );
}

/** Which facts a person's control reaches (`memory list|delete`): a tenant's, a user's, or both. */
export interface MemoryFilter {
  tenant?: string;
  user?: string;
  agent?: string;
}

/** The most facts one page of a memory listing holds (`--limit`, `?limit=`). */
export const MAX_MEMORY_PAGE = 1000;

/** Why `filter` cannot select facts: a bad name, or nothing at all to narrow by. */
export function memoryFilterProblem(filter: MemoryFilter, allowEverything = false): string | undefined {
  const bad =
    userProblem(filter.user, '--user') ??
    tenantProblem(filter.tenant, '--tenant') ??
    (filter.agent !== undefined && (typeof filter.agent !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(filter.agent))
      ? `--agent must be an agent name (letters, digits, _ and -, at most 64), got ${JSON.stringify(filter.agent)}`
      : undefined);
  if (bad) return bad;
  if (!allowEverything && filter.user === undefined && filter.tenant === undefined)
    return 'say whose memory: --user U, --tenant T, or both';
  return undefined;
}

/** Why `id` is not a fact's id (`f_` and 20 hex digits, as the store makes them), or undefined. */
export function factIdProblem(id: unknown): string | undefined {
  if (typeof id !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(id))
    return `${JSON.stringify(id)} is not a fact id (as memory list shows them: f_ and 20 letters and digits)`;
  return undefined;
}
