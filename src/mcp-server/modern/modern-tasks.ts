import type { Delegation } from '../mcp-agent-tools';
import {
  CLIENT_CAPABILITIES_META_KEY,
  inputRequired,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { readStatus } from '../../client/workflow-controls';
import { runOutcome } from '../../client/run-agent';
import { approvalAsk, approvalForm } from '../approval-form';
import { toolResult } from '../mcp-agent-tools';
import type { AgentMcpServerOptions } from '../mcp-server-options';
import { startTaskRun, TemporalMcpTaskStore } from '../mcp-tasks';
import { applyAnswers, approvalKey, envelope } from './modern-calls';

/**
 * MCP tasks on the 2026-07-28 revision: the `io.modelcontextprotocol/tasks` extension (SEP-2663).
 * Tasks moved out of the core into it, and creating one is the server's choice: an agent tool
 * called without `conversationId` by a client that declares the extension answers at once with a
 * task (`resultType: 'task'`), whose id is the run's workflow id. `tasks/get` reads the task from
 * Temporal (working; `input_required` with the approvals it waits for as input requests;
 * completed with the tool result; failed; cancelled), `tasks/update` answers those approvals and
 * `tasks/cancel` cancels the run. Nothing is kept in this process, so any replica answers.
 *
 * Hand-written: the SDK's v2 server has no runtime for the extension yet (its `ext-tasks`
 * package serves requesters and the 2025 receiver); the wire shapes follow the extension's
 * 2026-07-28 schema, which the tests check our answers against.
 */

/** The extension's identifier. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** How often a client should ask how a task goes (ms). */
const POLL_INTERVAL_MS = 1000;

/** Whether the request's client declared the tasks extension. */
export function clientTakesTasks(ctx: ServerContext): boolean {
  const capabilities = envelope(ctx)[CLIENT_CAPABILITIES_META_KEY] as
    { extensions?: Record<string, unknown> } | undefined;
  return !!capabilities?.extensions && TASKS_EXTENSION in capabilities.extensions;
}

/** Starts a run as a task and answers with its handle. */
export async function startModernTask(
  options: AgentMcpServerOptions & Delegation,
  agent: string,
  message: string,
): Promise<Record<string, unknown>> {
  const workflowId = await startTaskRun(
    options,
    agent,
    message,
    (m) => new ProtocolError(ProtocolErrorCode.InvalidParams, m),
  );
  const now = new Date().toISOString();
  return {
    resultType: 'task',
    taskId: workflowId,
    status: 'working',
    createdAt: now,
    lastUpdatedAt: now,
    ttlMs: null,
    pollIntervalMs: POLL_INTERVAL_MS,
  };
}

/** The task store that answers from Temporal (shared with 2025-11-25's tasks). */
function storeOf(options: AgentMcpServerOptions): TemporalMcpTaskStore {
  return new TemporalMcpTaskStore(
    options.client,
    (result, workflowId) => toolResult(result, workflowId, options.workflowUrl?.(workflowId)),
    options.scope,
  );
}

/** `tasks/get`: the task as the extension's detailed task. */
export async function getModernTask(options: AgentMcpServerOptions, taskId: string): Promise<Record<string, unknown>> {
  const task = await storeOf(options).getTask(taskId);
  if (!task) throw notFound(taskId);
  const base = {
    taskId,
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: null,
    pollIntervalMs: POLL_INTERVAL_MS,
    ...(task.statusMessage ? { statusMessage: task.statusMessage } : {}),
  };
  switch (task.status) {
    case 'input_required': {
      const pending = (await readStatus(options.client, taskId).catch(() => undefined))?.pendingApprovals ?? [];
      // A wait for an event needs no input from this client: the task works on, as far as it can tell.
      if (!pending.length) return { ...base, status: 'working' };
      return {
        ...base,
        status: 'input_required',
        inputRequests: Object.fromEntries(
          pending.map((p) => [approvalKey(p.callId), inputRequired.elicit(approvalForm(approvalAsk(p), taskId))]),
        ),
      };
    }
    case 'completed':
    case 'failed': {
      // A run that ended, well or not, has a tool result (a failed agent's is an error result);
      // only a workflow that ended without one (terminated, timed out) is a failed task.
      const result = await runOutcome(options.client.workflow.getHandle(taskId)).catch(() => undefined);
      if (result && result.status !== 'cancelled')
        return {
          ...base,
          status: 'completed',
          result: toolResult(result, taskId, options.workflowUrl?.(taskId)),
        };
      if (result) return { ...base, status: 'cancelled' };
      return {
        ...base,
        status: 'failed',
        error: { code: ProtocolErrorCode.InternalError, message: task.statusMessage ?? 'the run failed' },
      };
    }
    default:
      return { ...base, status: task.status };
  }
}

/** `tasks/update`: the answers to the task's input requests decide its approvals. */
export async function updateModernTask(
  options: AgentMcpServerOptions,
  taskId: string,
  inputResponses: Record<string, unknown>,
): Promise<Record<string, never>> {
  if (!(await storeOf(options).getTask(taskId))) throw notFound(taskId);
  await applyAnswers(options.client, taskId, inputResponses);
  return {};
}

/** `tasks/cancel`: cancels the run, answering once it ended (or after a few seconds, still winding down). */
export async function cancelModernTask(options: AgentMcpServerOptions, taskId: string): Promise<Record<string, never>> {
  const store = storeOf(options);
  if (!(await store.getTask(taskId))) throw notFound(taskId);
  await store.updateTaskStatus(taskId, 'cancelled');
  return {};
}

function notFound(taskId: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `Task not found: ${taskId}`);
}
