import type { Client } from '@temporalio/client';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CompleteRequestSchema,
  LoggingLevelSchema,
  SetLevelRequestSchema,
  type CallToolResult,
  type LoggingLevel,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { z } from 'zod';
import type { AgentSummary } from '../common/activity-interface';
import { MAX_MESSAGE_CHARS, type AgentEvent, type TurnResult } from '../core';
import { cancelWork } from '../client/agent-workflows';
import { startMessage } from '../client/conversations';
import { isTurnEnd, streamEvents } from '../client/event-stream';
import { runOutcome, startAgentRun } from '../client/run-agent';
import { listAgentRuns } from '../client/list-runs';
import { registerResources } from './mcp-resources';

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
    {
      instructions:
        'Each tool is a durable agent that runs as a Temporal workflow; results name the workflow id. Runs and conversations are resources (durable-agents://runs/{id}, durable-agents://conversations/{id}); each agent has a prompt with its examples.',
      capabilities: { logging: {}, completions: {}, prompts: {}, resources: { subscribe: true } },
    },
  );
  // The client's log level (this server is one client's session): run progress is logged at `info`.
  const session: Session = { level: 'info' };
  server.server.setRequestHandler(SetLevelRequestSchema, (request) => {
    session.level = request.params.level;
    return {};
  });
  registerResources(server, options.client);
  registerPrompts(server, options.agents);
  server.server.setRequestHandler(CompleteRequestSchema, async (request) => ({
    completion: await complete(options, request.params),
  }));
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
          return await callAgent(options, agent.name, message, conversationId, extra, session);
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
  session: Session,
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
  if (token === undefined && !logs(session, 'warning')) return { stop: () => undefined };
  void (async () => {
    let step = 0;
    try {
      for await (const event of streamEvents(client, workflowId, { until: isTurnEnd, signal: stopped.signal })) {
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
interface Session {
  level: LoggingLevel;
}

const LEVELS = LoggingLevelSchema.options;

/** Whether the session's client wants messages of `level`. */
function logs(session: Session, level: LoggingLevel): boolean {
  return LEVELS.indexOf(level) >= LEVELS.indexOf(session.level);
}

function levelOf(event: AgentEvent): LoggingLevel {
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

/**
 * Each agent as a prompt: its description and examples, and an optional `message` (completed from
 * the examples) that asks the agent, through its tool, what the person wants.
 */
function registerPrompts(server: McpServer, agents: readonly AgentSummary[]): void {
  for (const agent of agents) {
    const examples = agent.examples ?? [];
    server.registerPrompt(
      agent.name,
      {
        title: `Ask ${agent.name}`,
        description: `${agent.description ?? `The ${agent.name} agent.`}${examples.length ? ` For example: ${examples.map((e) => JSON.stringify(e)).join(', ')}.` : ''}`,
        argsSchema: { message: z.string().max(MAX_MESSAGE_CHARS).optional().describe('What to ask the agent') },
      },
      ({ message }) => {
        const ask = message?.trim() || examples[0] || `What can you do?`;
        return {
          description: `Ask the ${agent.name} agent`,
          messages: [
            {
              role: 'user',
              content: { type: 'text', text: `Ask the ${agent.name} agent (the tool "${agent.name}"): ${ask}` },
            },
          ],
        };
      },
    );
  }
}

/**
 * Completions: an agent prompt's `message` from the agent's examples, a run's or conversation's
 * id from the recent ones (open first). Anything else completes to nothing.
 */
async function complete(
  options: AgentMcpServerOptions,
  params: { ref: { type: string; name?: string; uri?: string }; argument: { name: string; value: string } },
): Promise<{ values: string[]; total?: number; hasMore?: boolean }> {
  const { ref, argument } = params;
  const prefix = argument.value.toLowerCase();
  let values: string[] = [];
  if (ref.type === 'ref/prompt' && argument.name === 'message') {
    const agent = options.agents.find((a) => a.name === ref.name);
    values = (agent?.examples ?? []).filter((e) => e.toLowerCase().startsWith(prefix));
  } else if (ref.type === 'ref/resource' && argument.name === 'id' && ref.uri) {
    const kind = ref.uri.startsWith('durable-agents://runs/')
      ? 'run'
      : ref.uri.startsWith('durable-agents://conversations/')
        ? 'conversation'
        : undefined;
    // The template itself (`durable-agents://runs/{id}`): its id completes.
    if (kind && ref.uri.endsWith('{id}')) {
      const { runs } = await listAgentRuns(options.client, { limit: 100 }).catch(() => ({ runs: [] }));
      values = runs
        .filter((r) => r.kind === kind && r.workflowId.toLowerCase().startsWith(prefix))
        .sort((a, b) => Number(!!a.closeTime) - Number(!!b.closeTime))
        .map((r) => r.workflowId);
    }
  }
  // The protocol's limit: 100 values a reply.
  return { values: values.slice(0, 100), total: values.length, hasMore: values.length > 100 };
}
