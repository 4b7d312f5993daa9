import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { Task, TaskState, type ListTasksRequest, type ListTasksResponse } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import { A2A_TASK_WORKFLOW_TYPE, a2aTaskQuery, a2aTaskSaveSignal } from '../common/definitions';
import { keptEvents } from '../client/event-stream';
import { turnOutcome } from './task-events';

/**
 * The A2A task store on Temporal: each task is a small workflow (`a2aTaskWorkflow`) that holds
 * the task as last saved and ends with it once it is final. No memory and no second database: a
 * task lives as long as its workflow, so an A2A server that restarts (or another replica) reads
 * it back. A task that was still working when its server went away is brought up to date from
 * its conversation, where the work itself ran on: its turn's end says how it ended.
 */
export class TemporalTaskStore implements TaskStore {
  /**
   * The tasks this server saved lately, as saved: the SDK loads a task before each update it
   * applies, and a query could answer before the workflow took the last save's signal. Saves
   * from one server reach the workflow in order, so what this server saved last is the latest.
   */
  private readonly recent = new Map<string, Task>();

  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
  ) {}

  /** Per task: the saves on their way to its workflow, in order, and what was last sent. */
  private readonly writes = new Map<string, { chain: Promise<void>; sent?: string }>();

  /**
   * Saves the task. The SDK saves after every event; what reaches the workflow is what a reader
   * after a restart needs: the first save, every change of state or metadata (the turn the task
   * follows), and the rest is kept here. The writes go out in order, without holding the
   * response up, except a task that waits for input or has ended: that one is in Temporal before
   * the caller is answered.
   */
  async save(task: Task, _context: ServerCallContext): Promise<void> {
    const state = task.status?.state;
    this.recent.delete(task.id);
    this.recent.set(task.id, structuredClone(task));
    if (this.recent.size > RECENT_TASKS) this.recent.delete(this.recent.keys().next().value!);
    const final = state !== undefined && FINAL.has(state);
    const key = JSON.stringify([state, task.metadata, task.artifacts.length]);
    const write = this.writes.get(task.id) ?? { chain: Promise.resolve() };
    this.writes.set(task.id, write);
    if (write.sent === key && !final) return;
    write.sent = key;
    const json = Task.toJSON(task);
    write.chain = write.chain
      .catch(() => undefined)
      .then(() =>
        this.client.workflow
          .signalWithStart(A2A_TASK_WORKFLOW_TYPE, {
            workflowId: taskWorkflowId(task.id),
            taskQueue: this.taskQueue,
            args: [],
            signal: a2aTaskSaveSignal,
            signalArgs: [{ task: json, final }],
            memo: { contextId: task.contextId },
            staticSummary: `A2A task of conversation ${task.contextId}`,
          })
          .then(() => undefined),
      );
    if (final) this.writes.delete(task.id);
    if (final || state === TaskState.TASK_STATE_INPUT_REQUIRED) await write.chain;
    // A failed write is made good by the next, which carries the whole task.
    else write.chain.catch(() => undefined);
  }

  async load(taskId: string, _context: ServerCallContext): Promise<Task | undefined> {
    const mine = this.recent.get(taskId);
    if (mine) return structuredClone(mine);
    const handle = this.client.workflow.getHandle(taskWorkflowId(taskId));
    let json: unknown;
    try {
      const { status } = await handle.describe();
      json = status.name === 'COMPLETED' ? await handle.result() : await handle.query(a2aTaskQuery);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError || (err as { code?: number }).code === 5) return undefined;
      throw err;
    }
    if (json === undefined || json === null) return undefined;
    const task = Task.fromJSON(json as object);
    return FINAL.has(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED) ? task : this.caughtUp(task);
  }

  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const size = Math.min(Math.max(params.pageSize ?? 50, 1), 100);
    const tasks: Task[] = [];
    const iterator = this.client.workflow.list({ query: `WorkflowType = '${A2A_TASK_WORKFLOW_TYPE}'` });
    for await (const w of iterator) {
      if (params.contextId && (w.memo as { contextId?: string } | undefined)?.contextId !== params.contextId) continue;
      const task = await this.load(w.workflowId.slice(PREFIX.length), context);
      if (!task) continue;
      if (params.status && task.status?.state !== params.status) continue;
      tasks.push(task);
      if (tasks.length >= size) break;
    }
    return { tasks, nextPageToken: '', pageSize: size, totalSize: tasks.length };
  }

  /**
   * A task saved as working (or waiting) whose server may have gone away: when its turn has
   * ended in the conversation, the task says how, with the answer as its artifact.
   */
  private async caughtUp(task: Task): Promise<Task> {
    const turn = (task.metadata as { turn?: unknown } | undefined)?.turn;
    if (typeof turn !== 'number') return task;
    let events;
    try {
      events = await keptEvents(this.client, task.contextId);
    } catch {
      return task; // the conversation cannot answer now: the record is what is known
    }
    const end = events.find((e) => e.turn === turn && (e.type === 'turn_completed' || e.type === 'turn_failed'));
    if (!end) return task;
    return { ...task, ...turnOutcome(task, end) };
  }
}

/** The task's workflow id. */
export function taskWorkflowId(taskId: string): string {
  return `${PREFIX}${taskId}`;
}

const PREFIX = 'a2a-task-';

/** How many tasks a server remembers as it saved them (see `TemporalTaskStore.recent`). */
const RECENT_TASKS = 1000;

/** States after which a task changes no more. */
export const FINAL = new Set<TaskState>([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);
