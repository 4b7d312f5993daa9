import {
  defineSearchAttributeKey,
  SearchAttributeType,
  TypedSearchAttributes,
  type Priority,
} from '@temporalio/common';
import { workflowPriority, type PriorityRequest } from '../core/fleet/tenants';

/** The `AgentTenant` search attribute's key. */
export const TENANT_KEY = defineSearchAttributeKey('AgentTenant', SearchAttributeType.KEYWORD);

/**
 * What a workflow start adds for its tenant: the `AgentTenant` search attribute (so a tenant's
 * list finds it at once, and the Temporal UI shows it) and the priority (fairness key = tenant),
 * which its activities and children inherit and continue-as-new keeps. Nothing without either.
 */
export function tenantStartOptions(request: PriorityRequest): {
  typedSearchAttributes?: TypedSearchAttributes;
  priority?: Priority;
} {
  const priority = workflowPriority(request);
  return {
    ...(request.tenant !== undefined
      ? { typedSearchAttributes: new TypedSearchAttributes([{ key: TENANT_KEY, value: request.tenant }]) }
      : {}),
    ...(priority ? { priority } : {}),
  };
}
