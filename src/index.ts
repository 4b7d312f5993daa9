/**
 * durable-agents: tool-calling AI agents as durable Temporal workflows.
 *
 * This entry point holds what both sides need: agents, tools and guardrails to define, the plugin
 * that serves them, the connection to Temporal, and the calls that start and follow runs and
 * conversations, with their types. The rest is by side: `durable-agents/worker` (registries,
 * models, MCP, stores, replay), `durable-agents/client` (everything a service or script calls:
 * schedules, evals, re-runs, listing), `durable-agents/workflow` (deterministic code for your own
 * workflows), and the surfaces: `/http`, `/mcp`, `/codec`, `/testing`. docs/api.md lists every
 * export.
 */

// Define: agents, tools, guardrails, and the built-in durable waits.
export { defineAgent, type AgentDefinition } from './agents/define-agent';
export { defineTool, type ToolDefinition, type ToolContext } from './tools/define-tool';
export { ToolError } from './tools/tool-error';
export { toolOutput } from './tools/tool-output';
export { defineGuardrail, type GuardrailDefinition } from './agents/define-guardrail';
export { sleep, waitForEvent } from './core/time/durable-waits';
export { memoryTools } from './core/facts/memory-tools';
export type { AgentMemory } from './core/facts/memory-options';
// Workspaces: the tools that run commands and edit files, and the sandbox they run in.
export { workspaceTools } from './core/workspace/workspace-tools';
export type { WorkspaceOptions } from './core/state/workspace-types';
export type { ToolWorkspace } from './workspace/workspace-host';

// Serve them: the plugin for your workers, or a worker of our own.
export { AgentsPlugin, type AgentsPluginOptions } from './worker/agents-plugin';
export { createAgentWorker, type AgentWorkerOptions } from './worker/create-agent-worker';

// Reach Temporal: TEMPORAL_* settings, or the embedded dev server.
export { connectTemporal, type TemporalEnv } from './connection/temporal-env';

// Run them: one-shot runs, conversations, and any run or conversation by its id.
export {
  startAgentRun,
  runOutcome,
  type AgentRunHandle,
  type RunOutcome,
  type RunRequest,
  type StartRunOptions,
} from './client/run-agent';
export {
  sendMessage,
  startMessage,
  endConversation,
  type ConversationStart,
  type MessageRequest,
} from './client/conversations';
export { forkConversation, type ForkOptions, type ForkResult } from './client/branches';
export { readStatus, decideApproval, type StatusReport } from './client/workflow-controls';
export { streamEvents } from './client/event-stream';
export { deliverEvent } from './client/deliver-event';
export { ClientError, type ClientErrorKind } from './client/client-error';

// The shapes that cross between them.
export type { AgentInput, ModelSettings, RunOptions } from './core/state/run-options';
export type { AgentResult, ConversationTurnResult } from './core/state/run-results';
export type { AgentEvent } from './core/events/agent-events';
export type { Budget } from './core/state/limits';
export type { ChatMessage, Usage } from './core/messages/chat-message';
export type { ConversationOptions } from './core/conversation/conversation-state';
export type { PendingApproval, RunStatus } from './core/state/run-state';
export type { ToolExecution } from './core/messages/tool-results';
