/**
 * durable-agents: tool-calling AI agents as durable Temporal workflows.
 *
 * This entry point holds what worker and client authors need (Node.js). Workflow code imports
 * `durable-agents/workflow`, which holds only deterministic code. The rest has entry points of
 * its own: `durable-agents/http` (the HTTP API), `/mcp` (agents as an MCP server), `/codec`
 * (payload encryption and the codec server), `/testing` (a scripted model for tests) and
 * `/examples` (the example tools and agents). docs/api.md lists every export.
 */

// Agents and tools, declared on the worker side.
export { defineAgent, type AgentDefinition, type AgentRef, type ToolRef } from './agents/define-agent';
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
  type CheckedArguments,
  type ToolRoute,
} from './tools';
export { toolOutput, type ToolOutput, type ToolImage } from './tools/tool-output';
export {
  loadMcpConfig,
  mcpServersFromEnv,
  parseMcpServers,
  type McpServers,
  type McpServerConfig,
  type McpStdioServer,
  type McpHttpServer,
} from './tools/mcp/mcp-config';

// Workers.
export { AgentsPlugin, type AgentsPluginOptions } from './worker/agents-plugin';
export { createAgentWorker, type AgentWorkerOptions } from './worker/create-agent-worker';
export {
  defineGuardrail,
  GuardrailRegistry,
  type GuardrailDefinition,
  type GuardrailInput,
  type GuardrailResult,
  type GuardrailRef,
} from './agents/define-guardrail';
export {
  GUARDRAIL_ACTIONS,
  type GuardrailKind,
  type GuardrailVerdict,
  type GuardrailCheck,
  type GuardrailTrip,
} from './core/guardrails';
export {
  replayAgentHistories,
  replayQuery,
  REPLAYED_WORKFLOW_TYPES,
  type ReplayReport,
  type ReplaySource,
} from './worker/replay-histories';
export { modelConfigFromEnv, type ModelConfig, type NamedModels, type StreamingOptions } from './activities';
export type { AiSdkLanguageModel } from './models/ai-sdk/ai-sdk-model';
export { DEFAULT_PRICES, DEFAULT_PRICES_DATE, type ModelPrice } from './models/prices';

// Reaching Temporal: TEMPORAL_* settings, or the embedded dev server.
export { connectTemporal, workflowUrl, type EmbeddedOptions, type TemporalEnv } from './connection/temporal-env';
export { defaultTaskQueue } from './connection/task-queue';

// Clients: runs.
export {
  startAgentRun,
  runOutcome,
  type AgentRunHandle,
  type AgentRunWorkflow,
  type NamedAgent,
  type RunOutcome,
  type RunRequest,
  type StartRunOptions,
} from './client/run-agent';
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
  type MessageRequest,
  type SentMessage,
} from './client/conversations';
// Images by reference: the blob store clients write and workers read.
export { FileBlobStore, BlobNotFoundError, defaultBlobDir, type BlobStore } from './storage/blob-store';
export { blobStoreFromEnv } from './storage/blob-store-from-env';
export { CodecBlobStore } from './storage/codec-blob-store';
// Payloads too large for a history (Temporal's External Storage): files, or S3.
export {
  payloadStorageFromEnv,
  defaultPayloadDir,
  DEFAULT_PAYLOAD_THRESHOLD,
  type PayloadStore,
} from './storage/payload-storage';
export { FileStorageDriver } from './storage/file-storage-driver';
export { storeImages, ImageInputError, MAX_IMAGE_BYTES, type ImageInput } from './storage/images';
// Clients: any run or conversation id.
export {
  readStatus,
  readTranscript,
  decideApproval,
  cancelWork,
  type StatusReport,
  type RunStatusReport,
} from './client/agent-workflows';
export { ClientError, type ClientErrorKind } from './client/client-error';
export { streamEvents, isTurnEnd, type StreamEventsOptions } from './client/event-stream';
export { restoreToolResults, toolOutcomesInHistory } from './client/tool-results';
export { deliverEvent } from './client/deliver-event';

// Re-running recorded runs with a change.
export {
  startRerun,
  rerunResult,
  divergence,
  messagesBefore,
  type Rerun,
  type RerunOptions,
  type Divergence,
} from './client/rerun';
export { casesFromRuns } from './client/eval-from-runs';

// Evals: datasets of cases run as real agent runs and scored.
export {
  parseDataset,
  expectationFailures,
  type EvalCase,
  type EvalExpectation,
  type NumberedCase,
  type ScoredOutcome,
} from './client/eval-cases';
export {
  runEval,
  newEvalId,
  summarize as summarizeEval,
  EVAL_SEARCH_ATTRIBUTE,
  type EvalOptions,
  type EvalReport,
  type EvalCaseResult,
  type EvalSummary,
} from './client/run-eval';

// Schedules (Temporal Schedules) of agent runs and conversation turns.
export {
  scheduleAgent,
  listSchedules,
  describeSchedule,
  pauseSchedule,
  unpauseSchedule,
  triggerSchedule,
  deleteSchedule,
  type AgentSchedule,
  type ScheduleAgentOptions,
} from './client/schedules';
export { SCHEDULE_OVERLAPS, type AgentScheduleRequest, type ScheduleOverlap } from './core/schedules';

// Durable waits as built-in tools: name them in an agent's or run's tools.
export {
  sleep,
  waitForEvent,
  SLEEP,
  WAIT_FOR_EVENT,
  DEFAULT_MAX_WAIT_MS,
  MAX_EVENT_PAYLOAD_BYTES,
  type DeliveredEvent,
} from './core/durable-waits';

// Traces (OpenTelemetry, GenAI spans) for workers and clients.
export { installTracing, tracingFromEnv, flushTracing, type TracingOptions } from './telemetry/tracing';

// Low level: one model call, one tool call, for a loop of your own outside any workflow.
export { executeToolCall } from './tools/tool-call';
export { chatModel, type ChatModel, type GenerateOptions, type ToolSpec } from './models/low-level';

// Types shared by workers, clients and workflows.
export type * from './core/types';
export type { AgentSettings, ResolvedAgent } from './core/agents';
export type {
  CloseReason,
  ConversationOptions,
  ConversationResult,
  ConversationStatus,
  RejectedMessages,
  TurnInput,
  TranscriptPage,
} from './core/conversation';
export type { AgentEvent, AgentEventBody, EventPage, EventsRequest, TextBatch } from './core/agent-events';
export type {
  AgentActivities,
  AgentSummary,
  ModelCallInput,
  ScheduledTurnInput,
  ScheduledTurnResult,
  GuardrailCheckInput,
  ResolveAgentInput,
  ResolveToolsInput,
  ToolCallInput,
  WorkerDescription,
} from './common/activity-interface';
export type { JsonSchema } from './models/json-schema';
export type { OutageOptions } from './client/outages';
export { AGENT_EVENT_TYPES } from './core/agent-events';
export {
  AGENT_SEARCH_ATTRIBUTES,
  AGENT_SEARCH_STATUSES,
  agentListQuery,
  type AgentSearchStatus,
  type AgentListFilter,
  type SearchAttributeUpdates,
  type SearchAttributeSettings,
} from './core/search-attributes';
export {
  DEFAULT_MAX_ITERATIONS,
  DEFAULT_MAX_TOOL_RESULT_TOKENS,
  READ_TOOL_OUTPUT,
  parseDuration,
  validateAgentInput,
} from './core';
