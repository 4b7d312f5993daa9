import {
  calibratedTokens,
  calibration,
  compactionPlan,
  contextView,
  densityOf,
  isInstructions,
  isSummary,
  summaryMessage,
} from './compaction';
import { modelContextRange, type ModelContextRange } from './message-window';
import type { NextStep, RunState } from '../state/run-state';
import type { MemoryReport } from '../state/run-results';
import type { ChatMessage, Usage } from '../messages/chat-message';
import type { ModelReply } from '../messages/model-reply';
import { addUsage, usageOfReply } from '../messages/usage';

/**
 * Memory by tokens in a run: what the model sees (the view after the last compaction), when the
 * next request needs a compaction, folding a summary in, and what `status` reports. The decisions
 * themselves (what to summarise, the estimates) are in compaction.ts; the loop calls these.
 */

/** Where the model's view of the run starts, and its summary, as model calls and compaction see it. */
export function contextRange(state: RunState): ModelContextRange & { summary?: number } {
  if (!state.context) return modelContextRange(state.messages, state.memoryWindow);
  const pinned = state.messages[0]?.role === 'system' && !isSummary(state.messages[0]) ? 1 : 0;
  return { messageCount: state.messages.length, pinned, from: state.context.from, summary: state.context.summary };
}

/**
 * Memory by tokens: the run index from which the next request's messages have no count yet (the
 * model-call activity counts them, and the pinned system message, which each turn makes anew: see
 * `ModelCallInput.countFrom`), or undefined without memory by tokens.
 */
export function firstUncounted(state: RunState): number | undefined {
  if (state.limits.maxPromptTokens === undefined) return undefined;
  const pinned = isInstructions(state.messages[0]) ? 1 : 0;
  let i = state.messages.length;
  while (i > pinned && state.messages[i - 1].tokens === undefined) i--;
  return i;
}

/** The messages with the counts a model call returned (`[index, tokens]`), as new message objects. */
export function withCounts(messages: readonly ChatMessage[], counted: ModelReply['counted']): ChatMessage[] {
  if (!counted?.length) return [...messages];
  const out = [...messages];
  for (const [index, tokens] of counted) {
    if (Number.isInteger(index) && out[index] && Number.isFinite(tokens)) out[index] = { ...out[index], tokens };
  }
  return out;
}

/** The compaction the next request needs (see `compactionPlan`), or undefined. */
export function plannedCompaction(state: RunState): Extract<NextStep, { type: 'compact' }> | undefined {
  const max = state.limits.maxPromptTokens;
  if (max === undefined) return undefined;
  const range = contextRange(state);
  const view = contextView(state.messages, range);
  const cal = calibration(state.lastPrompt);
  const density = densityOf(view);
  const plan = compactionPlan(state.messages, range, max, cal, density);
  if (!plan) return undefined;
  const tokensBefore = calibratedTokens(view, density, cal);
  return {
    type: 'compact',
    from: plan.from,
    to: plan.to,
    ...(state.context ? { previous: state.context.summary } : {}),
    tokensBefore,
  };
}

/**
 * Folds a summary into the state: appended as a summary message, the model's view now starting
 * after the messages it covers; its tokens count toward the run's usage (and budget).
 */
export function applySummary(
  state: RunState,
  step: Extract<NextStep, { type: 'compact' }>,
  summary: { text: string; usage: Usage; model?: string },
): RunState {
  const messages = [...state.messages, summaryMessage(summary.text, { from: step.from, to: step.to }, state.messages)];
  return {
    ...state,
    messages,
    context: { from: step.to, summary: messages.length - 1 },
    compactions: (state.compactions ?? 0) + 1,
    usage: addUsage(state.usage, usageOfReply(summary.usage, summary.model)),
  };
}

/**
 * Compaction without a summary (the model could not write one: an empty reply, a call that failed
 * for good): the oldest messages leave the model's view all the same, whole tool groups as planned,
 * and the summary message keeps the previous summary with a note of what was lost, so the model
 * knows. A healthy run goes on rather than fail for its memory's sake.
 */
export function applyDroppedMessages(state: RunState, step: Extract<NextStep, { type: 'compact' }>): RunState {
  const previous = state.context ? state.messages[state.context.summary]?.content : undefined;
  const count = step.to - step.from;
  const note = `(${count} earlier message${count === 1 ? ' was' : 's were'} dropped here: no summary of ${count === 1 ? 'it' : 'them'} could be written.)`;
  // The previous summary's text, without its heading: the new summary message has its own.
  const before =
    typeof previous === 'string' ? previous.replace(/^Summary of the earlier conversation[^\n]*\n/, '') : '';
  const text = before ? `${before}\n\n${note}` : note;
  return applySummary(state, step, { text, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 } });
}

/** The estimated size of the next request (calibrated), as a compaction event reports it. */
export function contextTokens(state: RunState): number {
  const view = contextView(state.messages, contextRange(state));
  return calibratedTokens(view, densityOf(view), calibration(state.lastPrompt));
}

/** Memory by tokens as `status` reports it: the bound, the next request's estimated size, the compactions. */
export function memoryReport(state: RunState, earlierCompactions = 0): MemoryReport {
  return {
    maxPromptTokens: state.limits.maxPromptTokens ?? 0,
    promptTokens: contextTokens(state),
    compactions: earlierCompactions + (state.compactions ?? 0),
  };
}
