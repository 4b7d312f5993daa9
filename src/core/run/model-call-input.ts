import { contextRange, firstUncounted } from '../context/run-context';
import type { JsonSchemaObject, ModelSettings, ToolCallingMode } from '../state/run-options';
import type { NextStep, RunState } from '../state/run-state';
import { WRAP_UP_INSTRUCTION } from '../state/limits';

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
  /** A last word to the model after the conversation (a user message, not kept in it): the run is wrapping up under its budget. */
  instruction?: string;
  /** The run has a cost budget: a model without a price cannot be counted against it, and fails the call. */
  needsCost?: true;
  /**
   * Memory by tokens: count the tokens of the messages sent whose run index is at least this (those
   * no earlier call counted), and of the pinned head, and return them in `counted`. Absent: count nothing.
   */
  countFrom?: number;
  /** The run's tenant: its budget is charged and its rate limits and credentials apply. */
  tenant?: string;
  /** What was recalled of the user's memory this turn: sent after message `after`, never kept (see `RunState.recall`). */
  recall?: { text: string; after: number };
}

/** Where a model call runs from, besides the run's state: the workflow, and what it streams to. */
export interface ModelCallSite {
  workflowId: string;
  runId: string;
  /** The call's number on the event stream, when its text is streamed. */
  streamCall?: number;
  /** Another model than the agent's (a fallback, after the agent's model failed). */
  model?: string;
  /** The run's tenant. */
  tenant?: string;
}

/**
 * The input of the model call a `call_model` step asks for, by reference: how much of the run's
 * conversation the call sees (its memory window, or the messages after the summary), the tools,
 * the agent the run speaks as (its settings, tool calling, output schema), the model's time
 * budget, a wrap-up instruction under a budget, and where counting starts with memory by tokens.
 * Fields are present only when set, so inputs keep the shape runs recorded.
 */
export function modelCallInput(
  state: RunState,
  step: Extract<NextStep, { type: 'call_model' }>,
  site: ModelCallSite,
): ModelCallInput {
  // The agent the run speaks as (after a handoff, the one handed to).
  const { name: agent, modelSettings, toolCalling, output } = state.agent;
  // The activity finds the summary among the messages by its mark: its index need not travel.
  const { summary: _summary, ...range } = contextRange(state);
  const countFrom = firstUncounted(state);
  const settings = site.model === undefined ? modelSettings : { ...modelSettings, model: site.model };
  return {
    workflowId: site.workflowId,
    runId: site.runId,
    ...range,
    toolNames: step.toolNames,
    settings,
    toolCalling,
    ...(agent ? { agent } : {}),
    ...(output ? { output } : {}),
    ...(site.streamCall !== undefined ? { stream: { call: site.streamCall } } : {}),
    ...(state.revision ? { revision: state.revision } : {}),
    ...(state.limits.modelCallTimeoutMs !== undefined ? { timeoutMs: state.limits.modelCallTimeoutMs } : {}),
    ...(step.wrapUp ? { instruction: WRAP_UP_INSTRUCTION } : {}),
    ...(state.limits.budget?.costUsd !== undefined ? { needsCost: true as const } : {}),
    ...(countFrom !== undefined ? { countFrom } : {}),
    ...(site.tenant !== undefined ? { tenant: site.tenant } : {}),
    ...(state.recall ? { recall: state.recall } : {}),
  };
}
