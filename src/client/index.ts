/**
 * `durable-agents/client`: everything a service, script or browser backend calls, beside the
 * main calls the root holds too: runs, conversations, any run or conversation by its id, events,
 * listing, schedules, evals and re-runs, and the stores large inputs go to. Clients never load
 * worker code: it is safe in a web server with no worker in it.
 */

// Reaching Temporal.
export { connectTemporal, workflowUrl, type EmbeddedOptions, type TemporalEnv } from '../connection/temporal-env';
export { clientSettings, type ClientSettings } from '../connection/settings';

// One-shot runs.
export {
  startAgentRun,
  runOutcome,
  type AgentRunHandle,
  type AgentRunWorkflow,
  type NamedAgent,
  type RunOutcome,
  type RunRequest,
  type StartRunOptions,
} from './run-agent';

// Memory across conversations: people's control (list, show, delete, export).
export { administerMemory } from './memory';
export type { MemoryAdminRequest, MemoryAdminResult, MemoryExport } from '../contracts/memory-admin';

// Conversations.
export {
  sendMessage,
  startMessage,
  queueMessage,
  conversationStatus,
  cancelTurn,
  stopTurn,
  endConversation,
  newConversationId,
  type ConversationStart,
  type MessageRequest,
  type SentMessage,
} from './conversations';
export {
  forkConversation,
  listBranches,
  switchBranch,
  forkMessageId,
  type ForkOptions,
  type ForkResult,
} from './branches';

// Any run or conversation by its id.
export {
  readStatus,
  readTranscript,
  decideApproval,
  cancelWork,
  type StatusReport,
  type RunStatusReport,
} from './workflow-controls';
export { streamEvents, isTurnEnd, type StreamEventsOptions } from './event-stream';
export { deliverEvent, type DeliverEventOptions } from './deliver-event';
export { deleteRun, type RunDeletion } from './delete-run';
export { restoreToolResults, toolOutcomesInHistory } from './tool-results';
export {
  workspaceStates,
  stateAtStep,
  listWorkspace,
  workspaceFile,
  diffWorkspace,
  workspaceTar,
  type WorkspaceStates,
  type WorkspaceCommit,
} from './workspaces';
export type { WorkspaceManifest, WorkspaceFile, WorkspaceChanges } from '../core/workspace/manifest';
export { ClientError, type ClientErrorKind } from './client-error';
export type { OutageOptions } from './outages';

// Listing runs and agents.
export { listAgents } from './list-agents';
export { listAgentRuns, type AgentRunSummary } from './list-runs';
export { agentListQuery, type AgentListFilter } from '../core/run/search-attributes';

// Schedules (Temporal Schedules) of runs and conversation turns.
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
} from './schedules';
export { SCHEDULE_OVERLAPS, type AgentScheduleRequest, type ScheduleOverlap } from '../core/schedules/schedules';

// Tenants: budgets per day or month across a tenant's runs, usage, and fair shares of a task queue.
export { setTenantBudget, readTenantUsage, listTenantUsage, setTenantWeight } from './tenants';
export type { TenantBudget, TenantUsage, TenantSpend, TenantBudgetReport } from '../core/fleet/tenant-ledger';

// Worker Versioning: which build of a Worker Deployment serves new runs.
export {
  deploymentStatus,
  promoteBuild,
  rampBuild,
  waitForDrain,
  type BuildReport,
  type BuildStatus,
  type DeploymentChange,
  type DeploymentReport,
} from './deployments';

// Evals: datasets of cases run as real agent runs and scored.
export {
  parseDataset,
  expectationFailures,
  type EvalCase,
  type EvalExpectation,
  type NumberedCase,
  type ScoredOutcome,
} from './eval-cases';
export {
  runEval,
  newEvalId,
  summarize as summarizeEval,
  EVAL_SEARCH_ATTRIBUTE,
  type EvalOptions,
  type EvalReport,
  type EvalCaseResult,
  type EvalSummary,
} from './run-eval';
export { casesFromRuns } from './eval-from-runs';

// Re-running recorded runs with a change.
export {
  startRerun,
  rerunResult,
  divergence,
  messagesBefore,
  type Rerun,
  type RerunOptions,
  type Divergence,
} from './rerun';

// Images and payloads by reference: the stores clients write and workers read.
export { storeImages, ImageInputError, MAX_IMAGE_BYTES, type ImageInput } from '../storage/images';
export { FileBlobStore, BlobNotFoundError, type BlobStore } from '../storage/blob-store';
export type { PayloadStore } from '../storage/payload-storage';
export { installTracing, flushTracing, type TracingOptions } from '../telemetry/tracing';

// The shapes runs, conversations and events take.
export {
  AGENT_EVENT_TYPES,
  type AgentEvent,
  type AgentEventBody,
  type EventPage,
  type EventsRequest,
  type TextBatch,
} from '../core/events/agent-events';
export { MAX_EVENT_PAYLOAD_BYTES, type DeliveredEvent } from '../core/time/durable-waits';
export { parseDuration } from '../core/time/duration';
export { validateAgentInput, type InputChecks } from '../core/run/run-input';
export type { ActiveWait, PendingApproval, RunStatus } from '../core/state/run-state';
export type {
  AgentInput,
  ModelSettings,
  OnApprovalTimeout,
  OnLimit,
  RerunSeed,
  RunOptions,
  ToolCallingMode,
} from '../core/state/run-options';
export type {
  AgentResult,
  AgentState,
  AgentStatus,
  AgentWorkflowResult,
  ConversationTurnResult,
  MemoryReport,
  RecordedTurnResult,
  TurnResult,
} from '../core/state/run-results';
export type { ApprovalDecision } from '../core/tool-calls/approvals';
export type { Budget, BudgetReport, OnBudget } from '../core/state/limits';
export type { ChatMessage, ImageRef, Usage } from '../core/messages/chat-message';
export type {
  CloseReason,
  ConversationResult,
  ConversationStatus,
  TranscriptPage,
} from '../core/conversation/conversation-status';
export type {
  ConversationOptions,
  BranchInfo,
  ForkPoint,
  RejectedMessages,
  TurnInput,
} from '../core/conversation/conversation-state';
export type { RecordedToolExecution, ToolExecution } from '../core/messages/tool-results';
