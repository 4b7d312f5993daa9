/**
 * durable-agents: tool-calling AI agents as durable Temporal workflows.
 *
 * This entry point is for workers and clients (Node.js). Workflow code imports
 * `durable-agents/workflow` instead, which holds only deterministic code. README.md lists every
 * export with its purpose.
 */

// Tools and agents (worker side).
export {
  defineTool,
  defineJsonSchemaTool,
  ToolRegistry,
  ToolError,
  type AnyToolDefinition,
  type JsonSchemaToolDefinition,
  type ToolContext,
  type ToolDefinition,
  type ToolSettings,
  type ReturnBehavior,
  type ToolProvider,
  type ToolProviderRequest,
  type OpenAIToolSpec,
  type RegisterOptions,
} from './worker/tools';
export { defineAgent, type AgentDefinition, type AgentRef, type ToolRef } from './worker/agents/define-agent';
export { AgentRegistry, type AgentSummary } from './worker/agents/agent-registry';

// MCP servers whose tools agents use (worker side).
export { loadMcpConfig, mcpServersFromEnv, parseMcpServers, type McpServers, type McpServerConfig, type McpStdioServer, type McpHttpServer } from './worker/mcp/mcp-config';

// Agents served to MCP clients.
export { createAgentMcpServer, type AgentMcpServerOptions } from './mcp-server/agent-mcp-server';

// Confidential content: payload encryption and the codec server for the Temporal UI and CLI.
export { EncryptionCodec, encryptingDataConverter, parseEncryptionKeys, encryptionKeysFromEnv, encodedFailureConverterPath, type EncryptionKey } from './codec/encryption-codec';
export { createCodecServer, type CodecServerOptions } from './codec-server/codec-server';

// Traces (OpenTelemetry, GenAI spans) for workers and clients.
export { installTracing, tracingFromEnv, flushTracing, type TracingOptions } from './telemetry/tracing';

// Workers.
export { AgentsPlugin, type AgentsPluginOptions } from './worker/agents-plugin';
export { createAgentWorker, type AgentWorkerOptions } from './worker/create-agent-worker';
export { defaultTaskQueue } from './connection/task-queue';
export { createActivities, modelConfigFromEnv, type ModelConfig, type AgentActivities, type StreamingOptions } from './worker/activities';

// Clients: runs.
export { startAgentRun, runOutcome, type AgentRunHandle, type AgentRunWorkflow, type RunOutcome, type RunRequest, type StartRunOptions } from './client/run-agent';
export { restoreToolResults, toolOutcomesInHistory } from './client/tool-results';
export { listAgents } from './client/list-agents';
export { listAgentRuns, type AgentRunSummary } from './client/list-runs';
// Clients: conversations.
export {
  sendMessage,
  startMessage,
  queueMessage,
  conversationStatus,
  cancelTurn,
  endConversation,
  newConversationId,
  type ConversationStart,
  type SentMessage,
} from './client/conversations';
// Clients: any run or conversation id.
export { readStatus, readTranscript, decideApproval, cancelWork, type StatusReport, type RunStatusReport } from './client/agent-workflows';
export { ClientError, type ClientErrorKind } from './client/client-error';
// Clients: live events of any run or conversation.
export { streamEvents, isTurnEnd, type StreamEventsOptions } from './client/event-stream';
export { connectTemporal, workflowUrl, type TemporalEnv } from './connection/temporal-env';
export { createHttpApi, httpApiHandler, type HttpApiOptions } from './http/http-api';
export { httpAccessFromEnv, type HttpAccessOptions } from './http/access';

// Low level: your own loop, outside any workflow.
export { chatModel, executeToolCall, type ChatModel, type GenerateOptions, type ToolSpec } from './worker/models/low-level';

// Shared helpers and types.
export { LIMIT_STOP_MESSAGE, DEFAULT_MAX_ITERATIONS, validateAgentInput, parseDuration } from './core';
export { parseReActOutput, ReActParseError, type ReActAction, type ReActFinish } from './core/react-parser';
export type * from './core/types';
export type { AgentSettings, ResolvedAgent } from './core/agents';
export type { ConversationOptions, ConversationResult, ConversationStatus, TurnInput, TranscriptPage } from './core/conversation';
export type { ConversationTurnResult } from './core/types';
export type { AgentEvent, AgentEventBody, EventPage, EventsRequest, TextBatch } from './core/agent-events';
export { AGENT_EVENT_TYPES } from './core/agent-events';
export { AGENT_SEARCH_ATTRIBUTES, AGENT_SEARCH_STATUSES, agentListQuery, type AgentSearchStatus, type AgentListFilter, type SearchAttributeUpdates } from './core/search-attributes';
export { statusQuery, messagesQuery, eventsQuery, AGENT_WORKFLOW_TYPE, CONVERSATION_WORKFLOW_TYPE } from './common/definitions';
