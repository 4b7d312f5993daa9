import type { IncomingMessage } from 'node:http';
import type { ServerCallContext, User } from '@a2a-js/sdk/server';
import type { TenantScope } from '../core/fleet/tenants';

/**
 * The A2A SDK's caller, with the tenant its token acts for: the task store and the executor read
 * it from the call's context, so a tenant's token reaches only its tenant's tasks and
 * conversations. (A2A's own `tenant`, a path segment some servers route by, is another thing.)
 */
export class TenantUser implements User {
  constructor(readonly scope: TenantScope) {}

  get isAuthenticated(): boolean {
    return this.scope.tenant !== undefined;
  }

  get userName(): string {
    return this.scope.tenant ?? '';
  }
}

/** The SDK's `userBuilder` for requests whose scope `scopeOf` knows (every tenant's without it). */
export function tenantUserBuilder(
  scopeOf: ((req: IncomingMessage) => TenantScope) | undefined,
): (req: IncomingMessage) => Promise<User> {
  return async (req) => new TenantUser(scopeOf ? scopeOf(req) : {});
}

/** The scope of an A2A call: its caller's tenant, or every tenant's. */
export function callScope(context: ServerCallContext | undefined): TenantScope {
  const user = context?.user;
  return user instanceof TenantUser ? user.scope : {};
}
