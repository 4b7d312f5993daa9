import type { EventLogSnapshot } from '../events/event-log';
import { isInstructions } from '../context/compaction';
import type { DeliveredEvent } from '../time/durable-waits';
import type { AgentInput } from '../state/run-options';
import type { RunState } from '../state/run-state';

/**
 * A one-shot run that continues as new: Temporal suggests it when a history grows long (about
 * 4,000 events or 4 MB on a default server), and a run of a few thousand small steps gets there.
 * The next workflow run starts from a {@link RunCarry}: the run's state with only the messages the
 * model still sees, so every run's history stays bounded, and clients read the earlier messages
 * from the earlier runs (the transcript query names the previous run).
 */
export interface RunCarry {
  /** The run's state: counters, usage, limits, tools, agent and tool executions; messages from the model's view on. */
  state: RunState;
  /** The workflow run this one continued from (its history holds the messages before `state.messagesBefore`). */
  previousRunId: string;
  /** The event stream's offsets and its last events, so subscribers see one stream across runs. */
  events?: EventLogSnapshot;
  /** Events delivered that no `wait_for_event` took yet. */
  inbox?: DeliveredEvent[];
  /** The ids of the last events delivered, so a repeated delivery is still dropped. */
  eventIds?: string[];
  /** With `maxExecutionTime`: what was left of it. */
  timeLeftMs?: number;
}

/** The agent workflow's input: a run's, and what a run that continued as new carries. */
export type AgentWorkflowInput = AgentInput & {
  /** Set by the run itself when it continues as new: what the next workflow run starts from. */
  carry?: RunCarry;
  /** The version of `carry`'s shape (see core/state/carry-versions.ts); none: version 1. */
  carryVersion?: number;
};

/** What a workflow task says of its history (`workflowInfo()`), for {@link shouldContinueAsNew}. */
export interface HistoryInfo {
  continueAsNewSuggested: boolean;
  historyLength: number;
}

/**
 * Whether a run continues as new before its next step: when Temporal suggests it, or past
 * `after` history events (the run's `continueAsNewAfter`), never while the run is ending.
 */
export function shouldContinueAsNew(state: RunState, history: HistoryInfo, after?: number): boolean {
  if (state.phase.kind === 'done') return false;
  return history.continueAsNewSuggested || (after !== undefined && history.historyLength >= after);
}

/**
 * The state the next run starts from: the system message and the messages the model still sees
 * (after the last summary, with memory by tokens; else all of them, since the model sees all),
 * counted in `messagesBefore`; tool outputs the history holds already are left out of the
 * executions (the result puts them back from the histories).
 */
export function carriedRunState(state: RunState): RunState {
  const system = isInstructions(state.messages[0]) ? 1 : 0;
  const start = state.context ? Math.max(system, Math.min(state.context.from, state.context.summary)) : system;
  const dropped = start - system;
  const carried: RunState = {
    ...state,
    messages: [...state.messages.slice(0, system), ...state.messages.slice(start)],
    toolExecutions: state.toolExecutions.map(({ value, ...e }) =>
      e.resultInHistory && !e.immediate ? { ...e, result: '' } : { ...e, ...(value !== undefined ? { value } : {}) },
    ),
  };
  if (dropped > 0) carried.messagesBefore = (state.messagesBefore ?? 0) + dropped;
  if (state.context) carried.context = { from: state.context.from - dropped, summary: state.context.summary - dropped };
  // The recalled memory goes after the turn's message, by index: it moves with it (or goes with
  // it, when the message is among those the new run leaves to the older ones).
  if (state.recall && dropped > 0) {
    if (state.recall.after >= start) carried.recall = { ...state.recall, after: state.recall.after - dropped };
    else delete carried.recall;
  }
  return carried;
}
