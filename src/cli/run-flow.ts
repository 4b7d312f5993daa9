import { temporal } from '@temporalio/proto';
import type { Worker } from '@temporalio/worker';
import type { ModelConfig } from '../activities';
import type { AgentInput } from '../core';
import { createAgentWorker } from '../runtime/agent-worker';
import { runOutcome, startAgentRun, type RunOutcome } from '../runtime/run-agent';
import { connectTemporal, workflowUrl, type TemporalEnv } from '../runtime/temporal-env';

export interface RunFlowOptions {
  input: AgentInput;
  workflowId?: string;
  taskQueue: string;
  /** Model for the in-process worker (default: from the environment). */
  model?: ModelConfig;
  /** Progress notes for people; commands send them to stderr. */
  note: (line: string) => void;
}

/**
 * Runs one agent conversation from a command line. Against a configured cluster it is a pure
 * client (workers run elsewhere). With the embedded server it also runs a worker in this process,
 * so `client.ts run` works on its own and alongside `npm start`.
 */
export async function runFromCommandLine(options: RunFlowOptions): Promise<{ outcome: RunOutcome; uiLink?: string }> {
  const temporal = await connectTemporal({ persistent: true });
  let worker: Worker | undefined;
  try {
    describeConnection(temporal, options.note);
    if (temporal.mode === 'configured') await warnIfNoWorker(temporal, options.taskQueue, options.note);
    else {
      worker = await createAgentWorker({
        connection: temporal.nativeConnection,
        client: temporal.client,
        namespace: temporal.namespace,
        taskQueue: options.taskQueue,
        model: options.model,
      });
    }
    const handle = await startAgentRun(temporal.client, options.input, { taskQueue: options.taskQueue, workflowId: options.workflowId });
    const uiLink = workflowUrl(temporal.uiUrl, temporal.namespace, handle.workflowId);
    options.note(`Started ${handle.workflowId}${uiLink ? ` (${uiLink})` : ''}`);
    const outcome = worker ? await worker.runUntil(runOutcome(handle)) : await runOutcome(handle);
    return { outcome, uiLink };
  } finally {
    await temporal.close();
  }
}

function describeConnection(temporal: TemporalEnv, note: (line: string) => void): void {
  if (temporal.mode === 'configured') note(`Temporal: ${temporal.address}, namespace ${temporal.namespace}`);
  else if (temporal.mode === 'embedded-reused') note(`Temporal: the local dev server at ${temporal.address}`);
  else {
    note(
      `Temporal: started an embedded dev server at ${temporal.address} (data in ${temporal.dbFilename ?? 'memory'}). ` +
        'It stops when this command ends; run `npm start` in another terminal to keep it and the Web UI up.',
    );
  }
}

async function warnIfNoWorker(env: TemporalEnv, taskQueue: string, note: (line: string) => void): Promise<void> {
  try {
    const { pollers } = await env.client.workflowService.describeTaskQueue({
      namespace: env.namespace,
      taskQueue: { name: taskQueue },
      taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    });
    if (!pollers?.length) note(`Warning: no worker is polling task queue "${taskQueue}"; the run waits until one starts (npm start).`);
  } catch {
    // Only a hint; missing permissions to describe the queue must not stop the run.
  }
}
