/**
 * `durable-agents/workflow`: what workflow authors import, by name. It holds only deterministic
 * code, never Node modules, `openai` or `zod`, so a workflow bundle that imports it stays small
 * and replay-safe. Everything else under `src/core` and `src/workflows` is internal: renaming it
 * is not an API change (the API report counts these names; a test holds them to 60 at most).
 */

// Running an agent from your own workflow (docs/getting-started.md, "An agent inside your own workflow").
export { executeAgent, type ExecuteAgentOptions } from './execute-agent';

// The workflows themselves, and their type names (for `executeChild`, schedules, visibility queries).
export { agentWorkflow, conversationWorkflow, scheduledTurnWorkflow } from './bundle';
export {
  AGENT_WORKFLOW_TYPE,
  CONVERSATION_WORKFLOW_TYPE,
  SCHEDULED_TURN_WORKFLOW_TYPE,
} from '../contracts/definitions';

// What another workflow can send a run or a conversation (`getExternalWorkflowHandle(id).signal(...)`),
// and the queries and updates clients use, typed.
export {
  deliverEventSignal,
  queueMessageSignal,
  sendMessageUpdate,
  cancelTurnUpdate,
  endConversationUpdate,
  decideApprovalUpdate,
  statusQuery,
  conversationStatusQuery,
  messagesQuery,
  transcriptQuery,
  pendingApprovalsQuery,
  usageQuery,
  eventsQuery,
  type MessagesRange,
} from '../contracts/definitions';

// The plain types these carry.
export type { AgentInput, ModelSettings, JsonSchemaObject } from '../core/state/run-options';
export type { AgentResult, AgentStatus, RecordedTurnResult } from '../core/state/run-results';
export type { RunStatus, PendingApproval } from '../core/state/run-state';
export type { Budget } from '../core/state/limits';
export type { Usage, ChatMessage, ToolCall, ImageRef } from '../core/messages/chat-message';
export type { ToolExecution } from '../core/messages/tool-results';
export type { ApprovalDecision } from '../core/tool-calls/approvals';
export type { AgentEvent, AgentEventBody, EventPage, EventsRequest } from '../core/events/agent-events';
export type { ConversationInput, ConversationOptions, TurnInput } from '../core/conversation/conversation-state';
export type { ConversationResult, ConversationStatus, TranscriptPage } from '../core/conversation/conversation-status';
export type { ConversationTurnResult } from '../core/state/run-results';
