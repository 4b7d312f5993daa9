import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Artifact, type Message, type Part, type Task, type TaskStatus } from '@a2a-js/sdk';
import type { AgentEvent, RunStatus, TurnResult } from '../core';

/**
 * Our turns in A2A's terms (pure): an A2A task is one turn of the conversation its `contextId`
 * names. How a turn ended becomes the task's final state (a refusal is `rejected`, a run out of
 * budget or iterations `failed`, with the reason in the status message), and its answer the
 * task's artifact.
 */

/** A text part. */
export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

/** A message from the agent, in a task. */
export function agentMessage(task: { id: string; contextId: string }, text: string): Message {
  return {
    messageId: randomUUID(),
    contextId: task.contextId,
    taskId: task.id,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** A task status, now. */
export function status(state: TaskState, message?: Message): TaskStatus {
  return { state, message, timestamp: new Date().toISOString() };
}

const STATE_OF: Record<RunStatus, TaskState> = {
  completed: TaskState.TASK_STATE_COMPLETED,
  immediate: TaskState.TASK_STATE_COMPLETED,
  max_iterations: TaskState.TASK_STATE_FAILED,
  time_limit: TaskState.TASK_STATE_FAILED,
  budget_exceeded: TaskState.TASK_STATE_FAILED,
  guardrail_tripped: TaskState.TASK_STATE_REJECTED,
  cancelled: TaskState.TASK_STATE_CANCELED,
  failed: TaskState.TASK_STATE_FAILED,
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

/** The answer as the task's artifact: text, or the structured output as a data part. */
export function answerArtifact(result: Pick<TurnResult, 'content' | 'output'>): Artifact | undefined {
  const parts: Part[] = [];
  if (result.output !== undefined)
    parts.push({
      content: { $case: 'data', value: result.output },
      metadata: undefined,
      filename: '',
      mediaType: 'application/json',
    });
  else if (result.content) parts.push(textPart(result.content));
  if (parts.length === 0) return undefined;
  return {
    artifactId: 'answer',
    name: 'answer',
    description: "the agent's answer",
    parts,
    metadata: undefined,
    extensions: [],
  };
}

/** What a task becomes when its turn ends (`turn_completed` or `turn_failed`). */
export function turnOutcome(task: Pick<Task, 'id' | 'contextId'>, end: AgentEvent): Pick<Task, 'status' | 'artifacts'> {
  if (end.type === 'turn_failed')
    return { status: status(TaskState.TASK_STATE_FAILED, agentMessage(task, end.error)), artifacts: [] };
  if (end.type !== 'turn_completed') throw new Error(`not the end of a turn: ${end.type}`);
  const result = end.result;
  const artifact = answerArtifact(result);
  const why = reason(result);
  const state = STATE_OF[result.status];
  const text = why ?? result.content ?? undefined;
  return {
    status: status(state, text ? agentMessage(task, text) : undefined),
    artifacts: artifact && state === TaskState.TASK_STATE_COMPLETED ? [artifact] : [],
  };
}
