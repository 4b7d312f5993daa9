/**
 * `durable-agents/worker`: what runs in a worker beside `AgentsPlugin` (root): tool registries
 * and providers, MCP servers as tool sources, guardrail registries, the models and their prices,
 * the stores of large payloads and images, tracing, the activity contract, and the replay gate
 * for deploys. Node.js only; workflow code imports `durable-agents/workflow`.
 */

// Serving agents.
export { AgentsPlugin, type AgentsPluginOptions } from './agents-plugin';
export { createAgentWorker, type AgentWorkerOptions } from './create-agent-worker';
export { workerSettings, type WorkerSettings } from './settings';
export type { MemoryOptions } from './memory-settings';
export { openMemoryStore, type MemoryLocation } from '../memory-store/open-memory-store';
export type { MemoryStore, Embedder, FactHolder, MemoryDeletion, MemoryStoreInfo } from '../memory-store/memory-store';
export { openAIEmbedder, aiSdkEmbedder } from '../models/embeddings';
export type { AgentDeployment } from './deployment';
// Workspaces' sandboxes: bubblewrap (the default), an AI SDK sandbox session, or one of your own.
export { BubblewrapSandbox } from '../workspace/bubblewrap-sandbox';
export { aiSdkSandbox, type AiSdkSandboxSession } from '../workspace/ai-sdk-sandbox';
export type { PolicySettings } from '../policies/policy-set';
export type { PolicyMode } from '../core/state/policy-types';
export type { CommandSandbox, SandboxCommand, SandboxResult } from '../workspace/sandbox';

// Agents, tools and guardrails: definitions and registries.
export { defineAgent, type AgentDefinition, type AgentRef, type ToolRef } from '../agents/define-agent';
export {
  defineGuardrail,
  GuardrailRegistry,
  type GuardrailDefinition,
  type GuardrailInput,
  type GuardrailResult,
  type GuardrailRef,
} from '../agents/define-guardrail';
export {
  defineTool,
  defineJsonSchemaTool,
  a2aAgent,
  type A2AAgentOptions,
  ToolRegistry,
  ToolError,
  PersonAsked,
  type PersonAnswer,
  type PersonForm,
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
} from '../tools';
export { toolOutput, type ToolOutput, type ToolImage } from '../tools/tool-output';
export { executeToolCall } from '../tools/tool-call';
export type { JsonSchema } from '../models/json-schema';
export { sleep, waitForEvent, SLEEP, WAIT_FOR_EVENT, DEFAULT_MAX_WAIT_MS } from '../core/time/durable-waits';
export { READ_TOOL_OUTPUT, DEFAULT_MAX_TOOL_RESULT_TOKENS } from '../core/messages/tool-results';
export { DEFAULT_MAX_ITERATIONS } from '../core/state/limits';

// MCP servers as a source of tools.
export {
  loadMcpConfig,
  parseMcpServers,
  type McpServers,
  type McpServerConfig,
  type McpStdioServer,
  type McpHttpServer,
} from '../tools/mcp-client/mcp-config';

// Models: settings, the seam, one model call outside a workflow, prices.
export type { ModelConfig, NamedModels } from '../models/model-config';
export type { StreamingOptions } from '../activities/text-publisher';
export type { AiSdkLanguageModel } from '../models/ai-sdk/ai-sdk-language-model';
export { chatModel, type ChatModel, type GenerateOptions, type ToolSpec } from '../models/low-level';
export type { ModelRoute } from '../models/chat-model';
export { ModelCallError, MODEL_ERROR_KINDS, type ModelCallErrorKind } from '../models/model-error';
export type { ModelPrice } from '../models/prices';

// Large payloads and images: the stores workers and clients share.
export { FileBlobStore, BlobNotFoundError, type BlobStore } from '../storage/blob-store';
export { CodecBlobStore } from '../storage/codec-blob-store';
export { defaultPayloadDir, DEFAULT_PAYLOAD_THRESHOLD, type PayloadStore } from '../storage/payload-storage';
export { FileStorageDriver } from '../storage/file-storage-driver';

// Traces (OpenTelemetry, GenAI spans).
export { installTracing, flushTracing, type TracingOptions } from '../telemetry/tracing';

// Search attributes the workflows keep.
export {
  AGENT_SEARCH_ATTRIBUTES,
  AGENT_SEARCH_STATUSES,
  type AgentSearchStatus,
  type SearchAttributeUpdates,
  type SearchAttributeSettings,
} from '../core/run/search-attributes';

// The deploy gate: replay recorded histories against this code.
export {
  replayAgentHistories,
  replayQuery,
  REPLAYED_WORKFLOW_TYPES,
  type ReplayReport,
  type ReplaySource,
} from './replay-histories';

// The activity contract (what the workflows call, in plain JSON).
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
} from '../contracts/activity-interface';
export type { AgentSettings, ResolvedAgent } from '../core/state/agents';
export type { GuardrailKind, GuardrailVerdict, GuardrailCheck, GuardrailTrip } from '../core/state/guardrail-types';
export type { ModelReply } from '../core/messages/model-reply';
export type { ToolCall, ReasoningPart, ImageRef } from '../core/messages/chat-message';
export type { ToolInfo, BuiltinTool } from '../core/messages/tool-info';
export type { ToolOutcome } from '../core/messages/tool-results';
export type { JsonSchemaObject, ToolCallingMode } from '../core/state/run-options';
export { GUARDRAIL_ACTIONS } from '../core/guardrails/guardrails';
