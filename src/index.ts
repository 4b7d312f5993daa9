/**
 * durable-agents: tool-calling AI agents as durable Temporal workflows.
 *
 * Worker side: define tools, build a registry, create a worker.
 * Client side: start runs and read their outcomes.
 * The workflow itself is registered from `src/workflows` (see `createAgentWorker`).
 */
export * from './core/types';
export { LIMIT_STOP_MESSAGE, DEFAULT_MAX_ITERATIONS, validateAgentInput, parseDuration } from './core';
export { parseReActOutput, ReActParseError, type ReActAction, type ReActFinish } from './core/react-parser';
export { defineTool, ToolRegistry, defaultToolRegistry, builtinTools, type ToolContext, type ToolDefinition, type ReturnBehavior } from './tools';
export { createActivities, modelConfigFromEnv, type ModelConfig, type AgentActivities } from './activities';
export { createAgentWorker, defaultTaskQueue, type AgentWorkerOptions } from './runtime/agent-worker';
export { startAgentRun, runOutcome, type RunOutcome } from './runtime/run-agent';
export { ClientError, type ClientErrorKind } from './runtime/client-error';
export { connectTemporal, workflowUrl, type TemporalEnv } from './runtime/temporal-env';
export { statusQuery, messagesQuery, AGENT_WORKFLOW_TYPE } from './workflows/definitions';
