import type { WorkerDeploymentOptions } from '@temporalio/worker';

/**
 * Worker Versioning (Temporal's Worker Deployments): a worker that names its deployment and build
 * serves only the runs of its build. One-shot runs are Pinned (they finish on the build they
 * started on); conversations are Pinned between turns and move to the deployment's current build
 * at a turn boundary, by continue-as-new. See docs/deploying.md.
 */
export interface AgentDeployment {
  /** The Worker Deployment (one per service: `support-agents`); all its builds share task queues. */
  name: string;
  /** This build (a git sha, an image tag): each deploy a new one. */
  buildId: string;
  /**
   * How workflows of the worker's own that set no behaviour (`setWorkflowOptions`) are versioned:
   * `'PINNED'` (default: a workflow never meets code it did not start on) or `'AUTO_UPGRADE'` (it
   * moves to the current build at its next workflow task; its code changes need a Temporal patch, `patched` in `@temporalio/workflow`).
   * The agent workflows set theirs.
   */
  defaultVersioningBehavior?: 'PINNED' | 'AUTO_UPGRADE';
}

/** A build id as Temporal accepts it (no `:`). */
const BUILD_ID = /^[A-Za-z0-9_.\-/@+]{1,255}$/;
/** A deployment name as Temporal accepts it: no `.` either (it joins a name and a build in a version string). */
const DEPLOYMENT_NAME = /^[A-Za-z0-9_\-/@+]{1,255}$/;

/** Why a deployment cannot be used (naming the option or variable), or undefined. */
export function deploymentProblem(d: AgentDeployment, source: string): string | undefined {
  if (!DEPLOYMENT_NAME.test(d.name))
    return `${source}: the deployment name "${d.name}" must be 1-255 letters, digits or _ - / @ + (no "." or ":")`;
  if (!BUILD_ID.test(d.buildId))
    return `${source}: the build id "${d.buildId}" must be 1-255 letters, digits or _ . - / @ + (no ":")`;
  if (d.defaultVersioningBehavior !== undefined && !['PINNED', 'AUTO_UPGRADE'].includes(d.defaultVersioningBehavior))
    return `${source}: defaultVersioningBehavior must be "PINNED" or "AUTO_UPGRADE"`;
  return undefined;
}

/**
 * The deployment `AGENT_DEPLOYMENT_NAME` and `AGENT_BUILD_ID` name, or undefined when neither is
 * set. One without the other is an error: a worker that meant to be versioned must not start unversioned.
 */
export function deploymentFromEnv(env: NodeJS.ProcessEnv): AgentDeployment | undefined {
  const name = env.AGENT_DEPLOYMENT_NAME?.trim();
  const buildId = env.AGENT_BUILD_ID?.trim();
  if (!name && !buildId) return undefined;
  if (!name || !buildId)
    throw new Error(
      `${name ? 'AGENT_BUILD_ID' : 'AGENT_DEPLOYMENT_NAME'} is not set: Worker Versioning needs both AGENT_DEPLOYMENT_NAME (the deployment) and AGENT_BUILD_ID (this build)`,
    );
  const deployment = { name, buildId };
  const problem = deploymentProblem(deployment, 'AGENT_DEPLOYMENT_NAME/AGENT_BUILD_ID');
  if (problem) throw new Error(problem);
  return deployment;
}

/** The SDK's worker options for a deployment. */
export function workerDeploymentOptions(d: AgentDeployment): WorkerDeploymentOptions {
  return {
    version: { deploymentName: d.name, buildId: d.buildId },
    useWorkerVersioning: true,
    defaultVersioningBehavior: d.defaultVersioningBehavior ?? 'PINNED',
  };
}
