/** Workflow entry point for the worker's bundler (`workflowsPath`). Workflow-safe code only. */
import { setWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import { agentWorkflow } from './agent-workflow';
import { conversationWorkflow } from './conversation-workflow';
import { listAgentsWorkflow } from './list-agents-workflow';
import { scheduledTurnWorkflow } from './scheduled-turn-workflow';
import { a2aTaskWorkflow } from './a2a-task-workflow';
import { tenantLedgerWorkflow } from './tenant-ledger-workflow';
import { rateGovernorWorkflow } from './rate-governor-workflow';
import { memoryAdminWorkflow } from './memory-admin-workflow';

// Worker Versioning: on a versioned worker every agent workflow is Pinned, finishing on the build
// it started on, tools and instructions included, whatever the worker's default behaviour for the
// user's workflows. A conversation moves to a new build itself, by continue-as-new at a turn
// boundary (see conversation-workflow). Unversioned workers must not name a behaviour (the server
// refuses the workflow task), hence the getter, asked as the workflow starts.
const pinned = [
  agentWorkflow,
  conversationWorkflow,
  listAgentsWorkflow,
  scheduledTurnWorkflow,
  a2aTaskWorkflow,
  memoryAdminWorkflow,
];
for (const workflow of pinned as ((...args: never[]) => Promise<unknown>)[])
  setWorkflowOptions(
    () => (workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior: 'PINNED' } : {}),
    workflow,
  );

// A tenant's ledger and a model's governor never end: on a versioned worker they move to each new
// build (their state is plain JSON, and they hold no agent code).
for (const workflow of [tenantLedgerWorkflow, rateGovernorWorkflow] as ((...args: never[]) => Promise<unknown>)[])
  setWorkflowOptions(
    () => (workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior: 'AUTO_UPGRADE' } : {}),
    workflow,
  );

export {
  agentWorkflow,
  conversationWorkflow,
  listAgentsWorkflow,
  scheduledTurnWorkflow,
  a2aTaskWorkflow,
  tenantLedgerWorkflow,
  rateGovernorWorkflow,
  memoryAdminWorkflow,
};
