/**
 * `durable-agents/workflow`: what workflow code may import. It holds only deterministic code
 * (the agent and conversation workflows, the names of their queries, updates and signals, and
 * plain types), never Node modules, `openai` or `zod`, so a workflow bundle that imports it stays
 * small and replay-safe.
 */
export { agentWorkflow, conversationWorkflow, scheduledTurnWorkflow } from './bundle';
export { executeAgent, type ExecuteAgentOptions } from './execute-agent';
export {
  AGENT_WORKFLOW_TYPE,
  CONVERSATION_WORKFLOW_TYPE,
  LIST_AGENTS_WORKFLOW_TYPE,
  SCHEDULED_TURN_WORKFLOW_TYPE,
  deliverEventSignal,
  statusQuery,
  messagesQuery,
  pendingApprovalsQuery,
  decideApprovalUpdate,
  sendMessageUpdate,
  queueMessageSignal,
  cancelTurnUpdate,
  endConversationUpdate,
  conversationStatusQuery,
  transcriptQuery,
  usageQuery,
  eventsQuery,
  textBatchSignal,
  type MessagesRange,
} from '../common/definitions';
export type * from '../core';
export type { AgentEvent, AgentEventBody, EventPage, EventsRequest, TextBatch } from '../core/events/agent-events';
export type { ConversationInput, ConversationOptions, TurnInput } from '../core/conversation/conversation';
export type { ConversationResult, ConversationStatus, TranscriptPage } from '../core/conversation/conversation-status';
export type { ConversationTurnResult } from '../core';
