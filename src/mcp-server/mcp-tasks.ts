import type { PolicyPrincipal } from '../core/state/policy-types';
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import type { CallToolResult, Result, Task } from '@modelcontextprotocol/sdk/types.js';
import { AGENT_WORKFLOW_TYPE } from '../contracts/definitions';
import { cancelWork, readStatus } from '../client/workflow-controls';
import { runOutcome, startAgentRun } from '../client/run-agent';
import type { AgentMcpServerOptions } from './mcp-server-options';
import { inScope, type TenantScope } from '../core/fleet/tenants';
import type { TurnResult } from '../core/state/run-results';
import { workflowOwner } from '../client/tenant-scope';

/**
 * MCP tasks on Temporal. A task-augmented `tools/call` starts a run whose workflow id is the
 * task's id, so `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` answer from Temporal:
 * a task outlives the MCP server process that created it and any reconnect of its client. The run
 * waiting for a person (an approval, a `wait_for_event`) is `input_required`.
 *
 * Hand-written on the SDK's `TaskStore` interface: the SDK's stores keep tasks in memory, and a
 * task here is a workflow, not a record of one.
 */

/** The workflow ids of runs started as MCP tasks (so `tasks/list` lists them). */
export const MCP_TASK_PREFIX = 'mcp-task-';

/** How often a client should ask how a task goes (ms). */
const POLL_INTERVAL_MS = 1000;

/** How long `tasks/cancel` waits for the cancelled run to end. */
const CANCEL_WAIT_MS = 10_000;

/** How many tasks a page of `tasks/list` has. */
const PAGE_SIZE = 50;

/**
 * Starts a run as a task (its workflow id the task's id, {@link MCP_TASK_PREFIX} and a UUID) and
 * returns the id. A run that cannot start is the client's mistake, thrown as `invalid` makes it
 * (each SDK has its own error class for -32602).
 */
export async function startTaskRun(
  options: Pick<AgentMcpServerOptions, 'client' | 'taskQueue' | 'scope'> & { delegatedBy?: PolicyPrincipal[] },
  agent: string,
  message: string,
  invalid: (message: string) => Error,
): Promise<string> {
  const workflowId = `${MCP_TASK_PREFIX}${randomUUID()}`;
  const tenant = options.scope?.tenant;
  try {
    await startAgentRun(
      options.client,
      {
        agent,
        message,
        ...(tenant !== undefined ? { tenant } : {}),
        ...(options.delegatedBy ? { delegatedBy: options.delegatedBy } : {}),
      },
      { taskQueue: options.taskQueue, workflowId },
    );
  } catch (err) {
    throw invalid(err instanceof Error ? err.message : String(err));
  }
  return workflowId;
}

/** The task store of an agent MCP server: tasks are runs (see the module's comment). */
export class TemporalMcpTaskStore implements TaskStore {
  constructor(
    private readonly client: Client,
    /** The answer as the tool's result (the same as a call without a task gets). */
    private readonly toolResult: (result: TurnResult, workflowId: string) => CallToolResult,
    /** The session's tenant: another tenant's task is, to it, no task. */
    private readonly scope: TenantScope = {},
  ) {}

  /** Whether the session may see the task (the run `taskId`). */
  private async mine(taskId: string): Promise<boolean> {
    if (this.scope.tenant === undefined) return true;
    const owner = await workflowOwner(this.client, taskId);
    return owner !== null && inScope(this.scope, owner);
  }

  /** Not used: the agent tools start their runs themselves and answer with {@link taskOf}. */
  async createTask(): Promise<Task> {
    throw new Error('an agent task is created by its tool call (see createAgentMcpServer)');
  }

  async getTask(taskId: string): Promise<Task | null> {
    return (await this.mine(taskId)) ? taskOf(this.client, taskId) : null;
  }

  /** Nothing to store: the run's result is its workflow's. */
  async storeTaskResult(): Promise<void> {}

  async getTaskResult(taskId: string): Promise<Result> {
    if (!(await this.mine(taskId))) throw new Error(`Task not found: ${taskId}`);
    const result = await runOutcome(this.client.workflow.getHandle(taskId));
    return this.toolResult(result, taskId);
  }

  /**
   * Cancelling is the only change a client can make: it cancels the run, and answers once the run
   * has ended (MCP: the task is cancelled before `tasks/cancel` answers), or after
   * {@link CANCEL_WAIT_MS}, when the run still winds down (its `tasks/get` then says so).
   */
  async updateTaskStatus(taskId: string, status: Task['status']): Promise<void> {
    if (status !== 'cancelled' || !(await this.mine(taskId))) return;
    await cancelWork(this.client, taskId);
    const ended = this.client.workflow
      .getHandle(taskId)
      .result()
      .catch(() => undefined);
    await Promise.race([ended, new Promise((r) => setTimeout(r, CANCEL_WAIT_MS).unref())]);
  }

  async listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const page = await this.client.workflowService.listWorkflowExecutions({
      namespace: this.client.options.namespace,
      query: `WorkflowType = '${AGENT_WORKFLOW_TYPE}' AND WorkflowId STARTS_WITH '${MCP_TASK_PREFIX}'${this.scope.tenant !== undefined ? ` AND AgentTenant = '${this.scope.tenant}'` : ''}`,
      pageSize: PAGE_SIZE,
      ...(cursor ? { nextPageToken: Buffer.from(cursor, 'base64url') } : {}),
    });
    const tasks: Task[] = [];
    for (const w of page.executions ?? []) {
      const task = await taskOf(this.client, w.execution?.workflowId ?? '').catch(() => null);
      if (task) tasks.push(task);
    }
    const next = page.nextPageToken?.length ? Buffer.from(page.nextPageToken).toString('base64url') : undefined;
    return next ? { tasks, nextCursor: next } : { tasks };
  }
}

/** The MCP task of a run (its workflow id), or null when there is no such run. */
export async function taskOf(client: Client, workflowId: string): Promise<Task | null> {
  let description;
  try {
    description = await client.workflow.getHandle(workflowId).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
  if (description.type !== AGENT_WORKFLOW_TYPE) return null;
  const base = {
    taskId: workflowId,
    createdAt: description.startTime.toISOString(),
    lastUpdatedAt: (description.closeTime ?? new Date()).toISOString(),
    // Kept as long as the namespace keeps closed workflows.
    ttl: null,
    pollInterval: POLL_INTERVAL_MS,
  };
  switch (description.status.name) {
    case 'RUNNING': {
      const status = await readStatus(client, workflowId).catch(() => undefined);
      const waiting = status?.pendingApprovals.length
        ? `waiting for approval: ${status.pendingApprovals.map((p) => `${p.summary} [call ${p.callId}]`).join('; ')}`
        : status?.kind === 'run' && status.waits?.some((w) => w.kind === 'event')
          ? `waiting for event ${status.waits.find((w) => w.kind === 'event')?.name}`
          : undefined;
      return waiting
        ? { ...base, status: 'input_required', statusMessage: waiting }
        : { ...base, status: 'working', ...(status ? { statusMessage: status.state } : {}) };
    }
    case 'COMPLETED': {
      const result = await runOutcome(client.workflow.getHandle(workflowId)).catch(() => undefined);
      if (result?.status === 'cancelled') return { ...base, status: 'cancelled' };
      if (!result || result.status === 'failed')
        return { ...base, status: 'failed', statusMessage: result?.error ?? 'the run failed' };
      return { ...base, status: 'completed', statusMessage: result.status };
    }
    case 'CANCELLED':
      return { ...base, status: 'cancelled' };
    default:
      return { ...base, status: 'failed', statusMessage: `the run's workflow ended ${description.status.name}` };
  }
}
