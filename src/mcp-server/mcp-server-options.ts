import type { Client } from '@temporalio/client';
import type { AgentSummary } from '../contracts/activity-interface';
import type { TenantScope } from '../core/fleet/tenants';
import type { McpServerExtension } from './mcp-server-extension';

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
  /**
   * Whom this session acts for (over HTTP: the tenant its token is bound to): a tenant's session
   * sees only its tenant's runs, conversations and tasks, and starts work as that tenant.
   */
  scope?: TenantScope;
  /**
   * The key (at least 32 characters) that signs a 2026-07-28 call's `requestState` between its
   * rounds (an approval asked as `input_required`). Give every replica behind one URL the same
   * key (`durable-agents mcp` reads `AGENT_MCP_STATE_KEY`). Default: a random key of this process.
   */
  requestStateKey?: string;
  /** Tools, resources and prompts of the application's own, served beside the agents (see {@link McpServerExtension}). */
  extend?: McpServerExtension;
}
