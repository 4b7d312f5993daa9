import type { Client } from '@temporalio/client';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { z } from 'zod';
import type { AgentSummary } from '../common/activity-interface';
import { MAX_MESSAGE_CHARS, type AgentEvent, type TurnResult } from '../core';
import { cancelWork } from '../client/agent-workflows';
import { startMessage } from '../client/conversations';
import { isTurnEnd, streamEvents } from '../client/event-stream';
import { runOutcome, startAgentRun } from '../client/run-agent';

/** Options of {@link createAgentMcpServer}. */
export interface AgentMcpServerOptions {
  client: Client;
  /** Where runs and conversations start; the workers there must serve the agents. */
  taskQueue: string;
  /** The agents to offer (e.g. from `listAgents`): one MCP tool each. */
  agents: readonly AgentSummary[];
  /** The Temporal UI link of a workflow, when a UI is known. */
  workflowUrl?: (workflowId: string) => string | undefined;
  /** Server name reported to MCP clients (default `durable-agents`). */
  name?: string;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * An MCP server whose tools are durable agents: any MCP client (an IDE, a desktop assistant,
 * another agent) can call them. Each agent is a tool named after it, taking `message` and an
 * optional `conversationId`: without one a call starts a run, with one it sends the message to
 * that conversation (starting it with this agent when it is not open). While the agent works, the
 * client gets MCP progress notifications (when it asked for them with a progress token): model
 * calls, tool calls, approvals. The result is the answer, with the workflow id in its text and in
 * `structuredContent`. A client cancelling the request cancels the run (or the turn); a client
 * that merely goes away leaves it running in Temporal.
 */
export function createAgentMcpServer(options: AgentMcpServerOptions): McpServer {
  const server = new McpServer(
    { name: options.name ?? 'durable-agents', version: '0.1.0' },
    { instructions: 'Each tool is a durable agent that runs as a Temporal workflow; results name the workflow id.' },
  );
  for (const agent of options.agents) {
    server.registerTool(
      agent.name,
      {
        title: agent.name,
        description: `${agent.description ?? `The ${agent.name} agent.`} A durable agent (a Temporal workflow${agent.tools.length ? `; tools: ${agent.tools.join(', ')}` : ''}). Pass conversationId to keep talking in one conversation.`,
        inputSchema: {
          message: z.string().min(1).max(MAX_MESSAGE_CHARS).describe('What to ask the agent'),
          conversationId: z
            .string()
            .min(1)
            .optional()
            .describe('Continue (or start) this conversation instead of a one-off run'),
        },
      },
      async ({ message, conversationId }, extra) => {
        try {
          return await callAgent(options, agent.name, message, conversationId, extra);
        } catch (err) {
          return { isError: true, content: [{ type: 'text', text: err instanceof Error ? err.message : String(err) }] };
        }
      },
    );
  }
  return server;
}

async function callAgent(
  options: AgentMcpServerOptions,
  agent: string,
  message: string,
  conversationId: string | undefined,
  extra: Extra,
): Promise<CallToolResult> {
  const { client, taskQueue } = options;
  let workflowId: string;
  let outcome: Promise<TurnResult>;
  if (conversationId) {
    const sent = await startMessage(client, conversationId, { message }, { taskQueue, options: { agent } });
    workflowId = conversationId;
    outcome = sent.result();
  } else {
    const handle = await startAgentRun(client, { agent, message }, { taskQueue });
    workflowId = handle.workflowId;
    outcome = runOutcome(handle);
  }
  // A cancelled MCP request cancels the work it started.
  const cancel = () => void cancelWork(client, workflowId).catch(() => undefined);
  extra.signal.addEventListener('abort', cancel);
  const progress = reportProgress(client, workflowId, extra);
  try {
    const result = await outcome;
    return toolResult(result, workflowId, options.workflowUrl?.(workflowId));
  } finally {
    extra.signal.removeEventListener('abort', cancel);
    progress.stop();
  }
}

/** Sends the run's events as MCP progress notifications, when the client asked for them. */
function reportProgress(client: Client, workflowId: string, extra: Extra): { stop: () => void } {
  const token = extra._meta?.progressToken;
  const stopped = new AbortController();
  if (token === undefined) return { stop: () => undefined };
  void (async () => {
    let step = 0;
    try {
      for await (const event of streamEvents(client, workflowId, { until: isTurnEnd, signal: stopped.signal })) {
        const text = progressText(event);
        if (text === undefined) continue;
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
