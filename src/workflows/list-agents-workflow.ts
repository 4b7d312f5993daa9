import { proxyLocalActivities } from '@temporalio/workflow';
import type { AgentActivities } from '../contracts/activity-interface';
import type { AgentSummary } from '../contracts/activity-interface';

const { listAgents } = proxyLocalActivities<AgentActivities>({
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 3 },
});

/**
 * Answers which named agents the workers of this task queue serve. A client cannot ask a worker
 * directly; this short workflow is run by one of them (see `listAgents` on the client side).
 */
export async function listAgentsWorkflow(): Promise<AgentSummary[]> {
  return listAgents();
}
