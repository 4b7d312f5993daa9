import type { JsonSchemaObject, ModelSettings, ToolCallingMode } from '../core/types';

/**
 * Activity inputs. They carry references, never the conversation: the event history records every
 * activity input, so passing the transcript here would make history grow quadratically.
 */

/** Input of `callModel`: where to read the conversation, and what to offer the model. */
export interface ModelCallInput {
  workflowId: string;
  runId: string;
  /** Use exactly the first `messageCount` messages; later ones (if any) belong to a later step. */
  messageCount: number;
  /** Conversations: the first `pinned` messages (the system message) and those from `from` on form the memory window. Default: all. */
  pinned?: number;
  from?: number;
  toolNames: string[];
  settings?: ModelSettings;
  /** Default `tools`. */
  toolCalling?: ToolCallingMode;
  /** The run's named agent: its output schema (if any) checks the final answer. */
  agent?: string;
  /** The run's own output schema (overrides the agent's). */
  output?: JsonSchemaObject;
  /** Stream the text to the workflow as it is written, as batches of this call (see `TextBatch`). */
  stream?: { call: number };
  /** How many times a handoff replaced the system message so far; set from the first. */
  revision?: number;
  /**
   * The run's `modelCallTimeout` in ms, when it chose one (default 5 minutes): the most time this
   * call may spend waiting for the model, over all its attempts. Time the Temporal server was
   * unreachable does not count.
   */
  timeoutMs?: number;
}

/** Input of `executeTool`: one tool call, as the LLM wrote it. */
export interface ToolCallInput {
  name: string;
  toolCallId: string;
  /** The raw JSON arguments string; parsed and validated inside the activity. */
  arguments: string;
}

/** Input of `resolveTools`. */
export interface ResolveToolsInput {
  tools?: string[];
  immediateTools?: string[];
  approvalTools?: string[];
}

/** Input of `resolveAgent`: the agent, and the run's own tool settings (which override the agent's). */
export interface ResolveAgentInput extends ResolveToolsInput {
  agent: string;
}
