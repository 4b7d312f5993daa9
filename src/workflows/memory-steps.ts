import { log } from '@temporalio/workflow';
import { memoryPlan } from '../core/facts/memory-options';
import type { AgentInput } from '../core/state/run-options';
import type { RunState } from '../core/state/run-state';
import { extractMemory, recallMemory } from './activity-proxies';
import { failureInfo } from './failure-info';
import type { RunContext, RunRef } from './run-context';

/**
 * An agent's memory across conversations, carried out: the recall that starts a turn and the
 * extraction that ends it (the decisions are the core's: memoryPlan, recallBlock,
 * parseFactChanges). Memory never fails a turn: a store that cannot answer after its retries
 * leaves the turn without it, with a warning in the worker's log.
 */

/** The longest turn message a recall searches with, and the most of the exchange an extraction reads (characters). */
const RECALL_QUERY_CHARS = 2_000;
const EXCHANGE_CHARS = 6_000;

/** The memory of a run with these options (its agent's applied), when it has a user to keep it for. */
export function runMemory(options: Pick<AgentInput, 'memory' | 'user' | 'agent'>): RunContext['memory'] {
  const plan = memoryPlan(options.memory);
  if (!plan || options.user === undefined) return undefined;
  return { plan, ...(plan.scope === 'agent' && options.agent ? { agent: options.agent } : {}) };
}

function scope(ctx: RunContext) {
  return {
    ...(ctx.tenant !== undefined ? { tenant: ctx.tenant } : {}),
    user: ctx.user!,
    ...(ctx.memory?.agent !== undefined ? { agent: ctx.memory.agent } : {}),
  };
}

/** The index of the run's newest user message (the turn's), or -1. */
function turnMessage(state: RunState): number {
  for (let i = state.messages.length - 1; i >= 0; i--) if (state.messages[i].role === 'user') return i;
  return -1;
}

/** Before a turn's first model call: what the user's memory holds about its message (once per turn). */
export async function recallForTurn(run: RunRef, ctx: RunContext): Promise<void> {
  if (!ctx.memory?.plan.recall || ctx.user === undefined || run.state.recall || run.state.iterations > 0) return;
  const after = turnMessage(run.state);
  if (after < 0) return;
  const message = run.state.messages[after];
  const query = typeof message.content === 'string' ? message.content.slice(0, RECALL_QUERY_CHARS) : '';
  try {
    const recalled = await recallMemory({ ...scope(ctx), query, limit: ctx.memory.plan.recall });
    if (recalled.text) run.state = { ...run.state, recall: { text: recalled.text, after } };
  } catch (err) {
    log.warn('memory: the recall failed; the turn goes on without it', { error: failureInfo(err).error });
  }
}

/** After a turn that answered: the facts the model proposes from its exchange, kept (see `extractMemory`). */
export async function extractAfterTurn(state: RunState, ctx: RunContext): Promise<void> {
  const extract = ctx.memory?.plan.extract;
  if (!extract || ctx.user === undefined || state.phase.kind !== 'done' || state.phase.status !== 'completed') return;
  // The turn's messages from the user: back to the previous turn's answer (an assistant message
  // that called no tools), steering messages included.
  const said: { role: 'user'; text: string }[] = [];
  for (let i = state.messages.length - 1; i >= 0; i--) {
    const m = state.messages[i];
    if (m.role === 'assistant' && !m.tool_calls?.length && i < state.messages.length - 1) break;
    if (m.role === 'user' && typeof m.content === 'string') said.unshift({ role: 'user', text: m.content });
  }
  const answer = state.phase.content;
  const exchange = [...said, ...(answer ? [{ role: 'assistant' as const, text: answer }] : [])].map((m) => ({
    ...m,
    text: m.text.slice(0, EXCHANGE_CHARS / 2),
  }));
  if (!said.length) return;
  try {
    await extractMemory({
      ...scope(ctx),
      workflowId: ctx.workflowId,
      runId: ctx.runId,
      turn: ctx.turn,
      exchange,
      ...(ctx.memory!.plan.profile ? { profile: ctx.memory!.plan.profile } : {}),
      ...(extract.model || state.agent.modelSettings
        ? { settings: { ...state.agent.modelSettings, ...(extract.model ? { model: extract.model } : {}) } }
        : {}),
    });
  } catch (err) {
    log.warn('memory: the extraction failed; nothing of this turn was kept', { error: failureInfo(err).error });
  }
}
