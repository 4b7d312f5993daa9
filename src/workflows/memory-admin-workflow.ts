import { proxyActivities } from '@temporalio/workflow';
import type { AgentActivities } from '../contracts/activity-interface';
import type { MemoryAdminRequest, MemoryAdminResult } from '../contracts/memory-admin';

const { administerMemory } = proxyActivities<AgentActivities>({
  startToCloseTimeout: '2m',
  retry: { maximumAttempts: 5 },
});

/**
 * Carries out a person's request about memory on a worker of the agents' task queue, which holds
 * the store (see contracts/memory-admin.ts). Its history records the request: a deletion's who,
 * when and whose stay in Temporal as long as the namespace keeps closed workflows.
 */
export async function memoryAdminWorkflow(request: MemoryAdminRequest): Promise<MemoryAdminResult> {
  return administerMemory(request);
}
