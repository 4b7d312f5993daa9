import type { Client } from '@temporalio/client';
import type { AgentSummary } from '../contracts/activity-interface';

/** Options of `createAgentMcpServer`. */
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
