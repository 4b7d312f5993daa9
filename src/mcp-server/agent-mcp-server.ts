import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CompleteRequestSchema, SetLevelRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { AgentMcpServerOptions } from './mcp-server-options';
import { registerAgentTools, toolResult, type Session } from './mcp-agent-tools';
import { complete, registerPrompts } from './mcp-prompts';
import { registerResources } from './mcp-resources';
import { TemporalMcpTaskStore } from './mcp-tasks';

export { progressText, toolResult } from './mcp-agent-tools';
export type { AgentMcpServerOptions } from './mcp-server-options';

/**
 * An MCP server whose tools are durable agents: any MCP client (an IDE, a desktop assistant,
 * another agent) can call them. Each agent is a tool named after it, taking `message` and an
 * optional `conversationId`: without one a call starts a run, with one it sends the message to
 * that conversation (starting it with this agent when it is not open). While the agent works, the
 * client gets MCP progress notifications (when it asked for them with a progress token) and log
 * messages at its level: model calls, tool calls, approvals. The result is the answer, with the
 * workflow id in its text and in `structuredContent`. A client cancelling the request cancels the
 * run (or the turn); a client that merely goes away leaves it running in Temporal. A client may
 * ask for a task instead (MCP tasks): the run's workflow id is the task's id, and the task answers
 * from Temporal. Runs and conversations are resources, each agent a prompt; see docs/mcp.md.
 */
export function createAgentMcpServer(options: AgentMcpServerOptions): McpServer {
  const server = new McpServer(
    { name: options.name ?? 'durable-agents', version: '0.1.0' },
    {
      instructions:
        'Each tool is a durable agent that runs as a Temporal workflow; results name the workflow id. Runs and conversations are resources (durable-agents://runs/{id}, durable-agents://conversations/{id}); each agent has a prompt with its examples.',
      capabilities: {
        logging: {},
        completions: {},
        prompts: {},
        resources: { subscribe: true },
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      },
      taskStore: new TemporalMcpTaskStore(
        options.client,
        (result, workflowId) => toolResult(result, workflowId, options.workflowUrl?.(workflowId)),
        options.scope,
      ),
    },
  );
  // The client's log level (this server is one client's session): run progress is logged at `info`.
  const session: Session = { level: 'info', elicits: () => !!server.server.getClientCapabilities()?.elicitation };
  server.server.setRequestHandler(SetLevelRequestSchema, (request) => {
    session.level = request.params.level;
    return {};
  });
  registerResources(server, options.client, options.taskQueue, options.scope);
  registerPrompts(server, options.agents);
  server.server.setRequestHandler(CompleteRequestSchema, async (request) => ({
    completion: await complete(options, request.params),
  }));
  // Before the agents: the SDK's handler calls the extension's tools, and ours hands their calls to it.
  options.extend?.legacy?.(server);
  registerAgentTools(server, options, session);
  return server;
}
