import { randomUUID } from 'node:crypto';
import { Role, Task, TaskState, type Message, type Part, type TaskStatus } from '@a2a-js/sdk';
import { a2aTaskEnd } from '../contracts/a2a-task-json';
import type { AgentEvent } from '../core/events/agent-events';

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

/** How much of a refused message its failed task keeps, in characters of text. */
export const REFUSED_MESSAGE_EXCERPT = 2_000;

/**
 * A message as a failed task keeps it when it was refused (no text, too large, a part we cannot
 * read): its ids and role, its text cut to {@link REFUSED_MESSAGE_EXCERPT} characters in all, and
 * each file or data part named with its size, not its bytes. A client that sent 5 MB must not get
 * 5 MB back in the task's history, nor must the task's record keep it.
 */
export function messageExcerpt(message: Message): Message {
  let left = REFUSED_MESSAGE_EXCERPT;
  const parts: Part[] = [];
  for (const part of message.parts) {
    const content = part.content;
    let text: string;
    if (content?.$case === 'text') text = content.value;
    else if (content?.$case === 'data') text = JSON.stringify(content.value) ?? '';
    else if (content?.$case === 'raw')
      text = `[${part.mediaType || 'a file'} of ${content.value.length} bytes, not kept]`;
    else if (content?.$case === 'url') text = `[${part.mediaType || 'a file'} at ${content.value.slice(0, 200)}]`;
    else continue;
    if (left <= 0) break;
    const kept = text.length > left ? `${text.slice(0, left)}… (${text.length} characters, cut)` : text;
    left -= text.length;
    parts.push(textPart(kept));
  }
  return { ...message, parts, metadata: undefined, extensions: [] };
}

/** A task status, now. */
export function status(state: TaskState, message?: Message): TaskStatus {
  return { state, message, timestamp: new Date().toISOString() };
}

/** What a task becomes when its turn ends (`turn_completed` or `turn_failed`); see {@link a2aTaskEnd}. */
export function turnOutcome(task: Pick<Task, 'id' | 'contextId'>, end: AgentEvent): Pick<Task, 'status' | 'artifacts'> {
  const json = a2aTaskEnd(task, end, { messageId: randomUUID(), timestamp: new Date().toISOString() });
  const typed = Task.fromJSON({ ...task, ...json });
  return { status: typed.status, artifacts: typed.artifacts };
}
