import { delegatedByOf } from '../core/policies/policies';
import type { PolicyPrincipal } from '../core/state/policy-types';
import type { Client } from '@temporalio/client';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  LoggingLevelSchema,
  McpError,
  ErrorCode,
  type CallToolResult,
  type CreateTaskResult,
  type LoggingLevel,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { z } from 'zod';
import { MAX_MESSAGE_CHARS } from '../core/run/run-input';
import type { AgentEvent } from '../core/events/agent-events';
import type { TurnResult } from '../core/state/run-results';
import { cancelWork } from '../client/workflow-controls';
import { startMessage } from '../client/conversations';
import { ACCEPT_WITHIN_MS } from '../client/accepted-within';
import { scopedWorkflowId } from '../client/tenant-scope';
import { isTurnEnd } from '../client/event-stream';
import { streamLiveEvents } from '../client/live-events';
import { runOutcome, startAgentRun } from '../client/run-agent';
import type { AgentMcpServerOptions } from './mcp-server-options';
import { askByElicitation } from './approval-elicitation';
import { startTaskRun, taskOf } from './mcp-tasks';
import { sdkToolCallHandler } from './mcp-server-extension';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** Work an agent tool started: the run, or the message sent to a conversation (its id), and its outcome. */
export interface StartedWork {
  workflowId: string;
  /** The message's id, when the work is a conversation's turn (the Update that answers it). */
  messageId?: string;
  outcome: Promise<TurnResult>;
}

/** Starts the run (or sends the message to the conversation, starting it when it is not open). */
export async function startWork(
  options: AgentMcpServerOptions & Delegation,
  agent: string,
  message: string,
  conversationId: string | undefined,
): Promise<StartedWork> {
  const { client, taskQueue } = options;
  const tenant = options.scope?.tenant;
  const delegation = options.delegatedBy ? { delegatedBy: options.delegatedBy } : {};
  if (conversationId) {
    // In the session's tenant's id space: another tenant's conversation is no conversation to it.
    const id = await scopedWorkflowId(client, options.scope ?? {}, conversationId, 'conversation');
    // No worker accepting it in time: queued, durably, and the call says so (its outcome is the
    // `queued` error) rather than waiting for a worker that may not come.
    const sent = await startMessage(
      client,
      id,
      { message },
      { taskQueue, options: { agent, ...(tenant !== undefined ? { tenant } : {}), ...delegation } },
      { acceptWithinMs: ACCEPT_WITHIN_MS },
    );
    return { workflowId: id, messageId: sent.messageId, outcome: sent.result() };
  }
  const handle = await startAgentRun(
    client,
    { agent, message, ...(tenant !== undefined ? { tenant } : {}), ...delegation },
    { taskQueue, ...(tenant !== undefined ? { idSpace: tenant } : {}) },
  );
  return { workflowId: handle.workflowId, outcome: runOutcome(handle) };
}

/** Whom a call works for, from its `_meta` (see `delegatedByOf`): its agent runs under their policies too. */
export interface Delegation {
  delegatedBy?: PolicyPrincipal[];
}

/** The server's options for one call: with whom it works for, when its `_meta` says. */
export function forCall<O extends AgentMcpServerOptions>(options: O, meta: unknown): O & Delegation {
  const delegatedBy = delegatedByOf(meta);
  return delegatedBy ? { ...options, delegatedBy } : options;
}

/** A plain call: starts the run (or sends the message to the conversation) and waits for the answer, with progress and logs. */
export async function callAgent(
  options: AgentMcpServerOptions,
  agent: string,
  message: string,
  conversationId: string | undefined,
  extra: Extra,
  session: Session,
): Promise<CallToolResult> {
  const { client } = options;
  const { workflowId, outcome } = await startWork(options, agent, message, conversationId);
  // A cancelled MCP request cancels the work it started.
  const cancel = () => void cancelWork(client, workflowId).catch(() => undefined);
  extra.signal.addEventListener('abort', cancel);
  const progress = reportProgress(client, workflowId, extra, session, agent);
  try {
    const result = await outcome;
    return toolResult(result, workflowId, options.workflowUrl?.(workflowId));
  } finally {
    extra.signal.removeEventListener('abort', cancel);
    progress.stop();
  }
}

/**
 * Sends the run's events as MCP progress notifications (when the client asked for them with a
 * progress token) and as log messages (`notifications/message`, logger: the agent) at the
 * client's log level: progress at `info`, waits for a person at `notice`, refusals and failures
 * at `warning`.
 */
function reportProgress(
  client: Client,
  workflowId: string,
  extra: Extra,
  session: Session,
  agent: string,
): { stop: () => void } {
  const token = extra._meta?.progressToken;
  const stopped = new AbortController();
  const elicits = session.elicits?.() ?? false;
  if (token === undefined && !logs(session, 'warning') && !elicits) return { stop: () => undefined };
  void (async () => {
    let step = 0;
    try {
      const progress = { until: isTurnEnd, signal: stopped.signal, showsText: false };
      for await (const event of streamLiveEvents(client, workflowId, progress)) {
        if (elicits && event.type === 'approval_requested') void askByElicitation(client, workflowId, event, extra);
        const text = progressText(event);
        if (text === undefined) continue;
        const level = levelOf(event);
        if (logs(session, level))
          await extra.sendNotification({
            method: 'notifications/message',
            params: { level, logger: agent, data: { workflowId, event: event.type, message: text } },
          });
        if (token !== undefined)
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: ++step, message: text },
          });
      }
    } catch {
      // Progress is a courtesy: the result still arrives without it.
    }
  })();
  return { stop: () => stopped.abort() };
}

/** The progress message for an event, or undefined for events too fine to report (text pieces). */
export function progressText(event: AgentEvent): string | undefined {
  switch (event.type) {
    case 'turn_started':
      return `started: ${event.message.slice(0, 120)}`;
    case 'model_call_started':
      return `thinking (model call ${event.iteration})`;
    case 'tool_call_started':
      return `calling ${event.name}${event.childWorkflowId ? ` (agent run ${event.childWorkflowId})` : ''}`;
    case 'tool_call_finished':
      return `${event.name} ${event.error ? 'failed' : 'done'}`;
    case 'mcp_elicitation':
      return `${event.server} asks: ${event.message}`;
    case 'tool_progress':
      return `${event.name}: ${event.progress}${event.total !== undefined ? ` of ${event.total}` : ''}${event.message ? ` (${event.message})` : ''}`;
    case 'approval_requested':
      return `waiting for approval: ${event.summary}${event.agent ? ` (asked by agent ${event.agent})` : ''}${event.deadline ? `, decide by ${event.deadline}` : ''}`;
    case 'approval_decided':
      return `approval ${event.approved ? 'granted' : 'refused'} (${event.callId})`;
    case 'approval_escalated':
      return `approval of ${event.callId} escalated: decide by ${event.deadline}`;
    case 'wait_started':
      return event.kind === 'sleep'
        ? `sleeping until ${event.until}${event.reason ? `: ${event.reason}` : ''}`
        : `waiting for event ${event.name} (until ${event.until} at the latest)`;
    case 'wait_ended':
      return event.outcome === 'timed_out' ? 'the wait for an event timed out' : `wait over (${event.outcome})`;
    case 'event_received':
      return `event ${event.name} arrived`;
    case 'guardrail_tripped':
      return `guardrail ${event.guardrail} refused the ${event.kind === 'tool' ? 'tool call' : event.kind === 'input' ? 'request' : 'answer'}: ${event.reason}`;
    case 'guardrail_intervened':
      return `guardrail ${event.guardrail}: ${event.action === 'retry' ? 'answer sent back' : 'approval needed'}: ${event.reason}`;
    case 'handoff':
      return `handed off to ${event.to}`;
    case 'model_retry':
      return `model call retried (attempt ${event.attempt}): ${event.error}`;
    default:
      return undefined;
  }
}

/** The MCP result of a run or turn: the answer, then where it ran. */
export function toolResult(result: TurnResult, workflowId: string, url?: string): CallToolResult {
  const answer =
    result.status === 'failed'
      ? `The agent failed (${result.errorType ?? 'error'}): ${result.error ?? 'no reason given'}`
      : result.output !== undefined
        ? JSON.stringify(result.output)
        : (result.content ?? result.toolExecutions.at(-1)?.result ?? '');
  const where = `Temporal workflow: ${workflowId}${url ? ` (${url})` : ''}; status ${result.status}, ${result.iterations} model call${result.iterations === 1 ? '' : 's'}.`;
  const structured: Record<string, unknown> = {
    workflowId,
    status: result.status,
    content: result.content,
    iterations: result.iterations,
    usage: result.usage,
  };
  if (result.output !== undefined) structured.output = result.output;
  if (result.error !== undefined) structured.error = result.error;
  return {
    isError: result.status === 'failed',
    content: [
      { type: 'text', text: answer },
      { type: 'text', text: where },
    ],
    structuredContent: structured,
  };
}

/** One client's session of the server. */
export interface Session {
  level: LoggingLevel;
  /** Whether the client declared `elicitation`: approvals are then asked of it (see askByElicitation). */
  elicits?: () => boolean;
}

const LEVELS = LoggingLevelSchema.options;

/** Whether the session's client wants messages of `level`. */
function logs(session: Session, level: LoggingLevel): boolean {
  return LEVELS.indexOf(level) >= LEVELS.indexOf(session.level);
}

/** The log level of an event's message. */
export function levelOf(event: AgentEvent): LoggingLevel {
  switch (event.type) {
    case 'approval_requested':
    case 'approval_escalated':
    case 'wait_started':
      return 'notice';
    case 'guardrail_tripped':
    case 'model_retry':
      return 'warning';
    case 'tool_call_finished':
      return event.error ? 'warning' : 'info';
    default:
      return 'info';
  }
}

/** What an agent tool takes. */
export const ARGUMENTS = {
  message: z.string().min(1).max(MAX_MESSAGE_CHARS).describe('What to ask the agent'),
  conversationId: z
    .string()
    .min(1)
    .optional()
    .describe('Continue (or start) this conversation instead of a one-off run'),
};
const Arguments = z.object(ARGUMENTS);

/** An agent tool's arguments, or what is wrong with them. */
export function agentArguments(
  agent: string,
  args: unknown,
): { message: string; conversationId?: string } | { problem: string } {
  const parsed = Arguments.safeParse(args ?? {});
  if (parsed.success) return parsed.data;
  return {
    problem: `Input validation error: Invalid arguments for tool ${agent}: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`).join('; ')}`,
  };
}

/**
 * Registers one tool per agent, each able to run as an MCP task (`execution.taskSupport:
 * optional`), and answers `tools/call` itself: a plain call waits for the answer (with progress
 * and logs), a task-augmented one starts the run and answers with its task at once. (The SDK's
 * own answer to a plain call of a task tool polls the task, which would lose the progress.)
 */
export function registerAgentTools(server: McpServer, options: AgentMcpServerOptions, session: Session): void {
  for (const agent of options.agents) {
    server.experimental.tasks.registerToolTask(
      agent.name,
      {
        title: agent.name,
        description: `${agent.description ?? `The ${agent.name} agent.`} A durable agent (a Temporal workflow${agent.tools.length ? `; tools: ${agent.tools.join(', ')}` : ''}). Pass conversationId to keep talking in one conversation.`,
        inputSchema: ARGUMENTS,
        execution: { taskSupport: 'optional' },
      },
      {
        // Not called: tools/call is answered below. Here for the SDK's listing of task tools.
        createTask: () => Promise.reject(new Error('unused')),
        getTask: (_args, extra) => taskOf(options.client, extra.taskId).then((t) => t!),
        getTaskResult: (_args, extra) =>
          runOutcome(options.client.workflow.getHandle(extra.taskId)).then((r) => toolResult(r, extra.taskId)),
      },
    );
  }
  // The SDK's own answer, for the tools an extension registered (options.extend).
  const sdkCall = sdkToolCallHandler<RequestHandlerExtra<ServerRequest, ServerNotification>>(server);
  // Without tools the SDK registers no handlers: the server still has tools (none), and answers calls.
  if (!sdkCall) {
    server.server.registerCapabilities({ tools: {} });
    server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }));
  }
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const agent = options.agents.find((a) => a.name === request.params.name);
    if (!agent && sdkCall && options.extend) return (await sdkCall(request, extra)) as CallToolResult;
    if (!agent) throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
    const parsed = agentArguments(agent.name, request.params.arguments);
    // Worded as the SDK words it for its own tools.
    if ('problem' in parsed) return errorResult(new McpError(ErrorCode.InvalidParams, parsed.problem).message);
    const { message, conversationId } = parsed;
    const call = forCall(options, request.params._meta);
    if (request.params.task) return startTask(call, agent.name, message, conversationId);
    try {
      return await callAgent(call, agent.name, message, conversationId, extra, session);
    } catch (err) {
      return errorResult(err instanceof Error ? err.message : String(err));
    }
  });
}

/**
 * A task-augmented call: the run starts under the task's id, and its task is the answer. A task
 * that cannot start is a protocol error (the result of a task-augmented call is a task).
 */
async function startTask(
  options: AgentMcpServerOptions,
  agent: string,
  message: string,
  conversationId: string | undefined,
): Promise<CreateTaskResult> {
  if (conversationId)
    throw new McpError(
      ErrorCode.InvalidParams,
      'A task is a run: call without conversationId to start one as a task, or without a task to send to the conversation',
    );
  const workflowId = await startTaskRun(options, agent, message, (m) => new McpError(ErrorCode.InvalidParams, m));
  const task = await taskOf(options.client, workflowId);
  if (!task) throw new McpError(ErrorCode.InternalError, `the run ${workflowId} started but cannot be found`);
  return { task };
}

function errorResult(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}
