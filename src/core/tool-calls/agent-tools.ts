import { MAX_WORKFLOW_ID_BYTES } from '../state/limits';
import { toolErrorText } from '../messages/tool-results';
import type { RecordedTurnResult } from '../state/run-results';
import type { ToolOutcome } from '../messages/tool-results';

/**
 * Agents as tools: an agent offers other named agents as tools (see `agents` on `defineAgent`).
 * A call runs the named agent as a child workflow with the call's `message`; its final answer is
 * the call's result. Pure helpers: the workflow starts the child and folds its result in here.
 */

/**
 * The child run's workflow id: the caller's id, the conversation turn (conversations only), the
 * agent and the call id, e.g. `support-7f3a-t4-researcher-call_x1`. Readable in the Temporal UI,
 * and the same on replay. Cut from the caller's id when it would pass Temporal's id limit.
 */
export function agentToolWorkflowId(parentId: string, agent: string, callId: string, turn?: number): string {
  const suffix = `${turn === undefined ? '' : `-t${turn}`}-${agent}-${callId}`;
  const room = MAX_WORKFLOW_ID_BYTES - new TextEncoder().encode(suffix).length;
  let parent = parentId;
  while (new TextEncoder().encode(parent).length > room) parent = parent.slice(0, -1);
  return `${parent}${suffix}`;
}

/** The message a call asks the agent, or what is wrong with the call's arguments. */
export function agentToolMessage(
  agent: string,
  args: Record<string, unknown>,
): { ok: true; message: string } | { ok: false; outcome: ToolOutcome } {
  const message = args.message;
  if (typeof message === 'string' && message.trim()) return { ok: true, message };
  return {
    ok: false,
    outcome: {
      result: toolErrorText(`${agent} needs a "message": the whole task, as a non-empty string`),
      error: true,
    },
  };
}

/**
 * What the caller's LLM reads for the child run: its answer (structured output as JSON), or why
 * there is none (a limit, a failure) as a tool error it can act on. The child's tokens count
 * toward the caller's usage.
 */
export function agentToolOutcome(agent: string, childWorkflowId: string, run: RecordedTurnResult): ToolOutcome {
  const common = { usage: run.usage, childWorkflowId };
  if (run.status === 'completed') {
    if (run.output !== undefined)
      return { result: JSON.stringify(run.output), value: run.output, error: false, ...common };
    return { result: run.content ?? '', error: false, ...common };
  }
  if (run.status === 'immediate') {
    // The answer is the result of the tool that ended the run (kept in its result for that reason).
    const last = [...run.toolExecutions].reverse().find((e) => e.immediate && e.result !== undefined);
    return { result: last?.result ?? '', error: last?.error ?? false, ...common };
  }
  const why =
    run.status === 'failed'
      ? `failed (${run.errorType ?? 'error'}): ${run.error ?? 'no reason given'}`
      : `stopped without an answer (${run.status})${run.content ? `: ${run.content}` : ''}`;
  return { result: toolErrorText(`the ${agent} agent ${why}`), error: true, ...common };
}
