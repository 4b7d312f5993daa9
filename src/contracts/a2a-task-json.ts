import type { AgentEvent } from '../core/events/agent-events';
import type { RunStatus } from '../core/state/run-state';
import type { TurnResult } from '../core/state/run-results';

/**
 * How a conversation turn ends an A2A task, in A2A's JSON (as `Task.toJSON` of `@a2a-js/sdk`
 * writes it, and the task's record workflow keeps it): plain data, so that the A2A server (which
 * reads it into the SDK's types) and the worker (whose record of a task ends it when no server is
 * left to) say the same. A refusal is `rejected`; a run out of budget, time or iterations is
 * `failed`, with the reason in the status message; the answer is the `answer` artifact.
 */

/** A task's state, as A2A's JSON spells it. */
export type A2ATaskStateJson =
  'TASK_STATE_COMPLETED' | 'TASK_STATE_FAILED' | 'TASK_STATE_CANCELED' | 'TASK_STATE_REJECTED';

/** A part of an A2A message or artifact, as JSON: text, or structured data. */
export type A2APartJson = { text: string; mediaType: 'text/plain' } | { data: unknown; mediaType: 'application/json' };

/** What a task becomes when its turn ends: its final status and its artifacts. */
export interface A2ATaskEndJson {
  status: {
    state: A2ATaskStateJson;
    message?: { messageId: string; contextId: string; taskId: string; role: 'ROLE_AGENT'; parts: A2APartJson[] };
    timestamp: string;
  };
  artifacts: Array<{ artifactId: 'answer'; name: 'answer'; description: string; parts: A2APartJson[] }>;
}

const STATE_OF: Record<RunStatus, A2ATaskStateJson> = {
  completed: 'TASK_STATE_COMPLETED',
  immediate: 'TASK_STATE_COMPLETED',
  max_iterations: 'TASK_STATE_FAILED',
  time_limit: 'TASK_STATE_FAILED',
  budget_exceeded: 'TASK_STATE_FAILED',
  guardrail_tripped: 'TASK_STATE_REJECTED',
  cancelled: 'TASK_STATE_CANCELED',
  failed: 'TASK_STATE_FAILED',
};

/** Why a turn that did not complete ended, in a sentence for the status message. */
function reason(result: TurnResult): string | undefined {
  switch (result.status) {
    case 'max_iterations':
      return 'the agent reached its limit of model calls before answering';
    case 'time_limit':
      return 'the agent ran out of time before answering';
    case 'budget_exceeded':
      return 'the agent spent its budget before answering';
    case 'guardrail_tripped':
      return `refused by the guardrail ${result.guardrail?.guardrail ?? ''}: ${result.guardrail?.reason ?? ''}`.trim();
    case 'cancelled':
      return 'the task was cancelled';
    case 'failed':
      return result.error ?? 'the agent failed';
    default:
      return undefined;
  }
}

/**
 * The task's final status and artifacts when its turn ends (`end` is `turn_completed` or
 * `turn_failed`). The status message's id and the time are given (this module is deterministic).
 */
export function a2aTaskEnd(
  task: { id: string; contextId: string },
  end: AgentEvent,
  at: { messageId: string; timestamp: string },
): A2ATaskEndJson {
  const say = (text: string) => ({
    messageId: at.messageId,
    contextId: task.contextId,
    taskId: task.id,
    role: 'ROLE_AGENT' as const,
    parts: [{ text, mediaType: 'text/plain' as const }],
  });
  if (end.type === 'turn_failed')
    return { status: { state: 'TASK_STATE_FAILED', message: say(end.error), timestamp: at.timestamp }, artifacts: [] };
  if (end.type !== 'turn_completed') throw new Error(`not the end of a turn: ${end.type}`);
  const result = end.result;
  const state = STATE_OF[result.status];
  const text = reason(result) ?? result.content ?? undefined;
  const parts: A2APartJson[] =
    result.output !== undefined
      ? [{ data: result.output, mediaType: 'application/json' }]
      : result.content
        ? [{ text: result.content, mediaType: 'text/plain' }]
        : [];
  return {
    status: { state, ...(text ? { message: say(text) } : {}), timestamp: at.timestamp },
    artifacts:
      parts.length && state === 'TASK_STATE_COMPLETED'
        ? [{ artifactId: 'answer', name: 'answer', description: "the agent's answer", parts }]
        : [],
  };
}
