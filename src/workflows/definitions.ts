import { defineQuery } from '@temporalio/workflow';
import type { AgentStatus, ChatMessage } from '../core/types';

export type { AgentStatus };

/**
 * Names shared by the workflow, the activities and clients. Importing `defineQuery` is safe
 * outside workflows: it only builds a descriptor.
 */

/** The registered workflow type name. */
export const AGENT_WORKFLOW_TYPE = 'agentWorkflow';

/** A slice of the transcript; the model-call activity pages through it instead of receiving it as input. */
export interface MessagesRange {
  offset?: number;
  limit?: number;
}

export const statusQuery = defineQuery<AgentStatus>('status');
export const messagesQuery = defineQuery<ChatMessage[], [MessagesRange?]>('messages');
