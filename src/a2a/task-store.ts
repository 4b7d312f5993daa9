import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { Task, TaskState, type ListTasksRequest, type ListTasksResponse } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import { A2A_TASK_WORKFLOW_TYPE, a2aTaskQuery, a2aTaskSaveSignal } from '../contracts/definitions';
import { keptEvents } from '../client/event-stream';
import { turnOutcome } from './task-events';
import { callScope } from './tenant-user';
import { inScope } from '../core/fleet/tenants';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { filtersKey, pageToken, readPageToken } from './request-checks';
import { tenantStartOptions } from '../client/tenant-scope';

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
  /** The tenant of each recent task (its first save's caller's). */
  private readonly tenants = new Map<string, string | undefined>();

  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
  ) {}

  /** Per task: the write on its way to its workflow, and the save waiting for its turn. */
  private readonly writes = new Map<string, { chain: Promise<void>; waiting?: NodeJS.Timeout }>();

  /**
   * Saves the task. The SDK saves after every event; a working task's saves are coalesced (the
   * first written after {@link FIRST_WRITE_MS}, then at most one write a {@link WORKING_WRITE_MS},
   * the latest), so a task that ends quickly costs its workflow one write. A task that waits for input or has ended is written at once, and is
   * in Temporal before the caller is answered. Writes go out in order, each the whole task.
   */
  async save(task: Task, context: ServerCallContext): Promise<void> {
    const state = task.status?.state;
    if (!this.tenants.has(task.id)) this.tenants.set(task.id, callScope(context).tenant);
    const tenant = this.tenants.get(task.id);
    this.recent.delete(task.id);
    this.recent.set(task.id, structuredClone(task));
    if (this.recent.size > RECENT_TASKS) {
      const oldest = this.recent.keys().next().value!;
      this.recent.delete(oldest);
      this.tenants.delete(oldest);
    }
    const final = state !== undefined && FINAL.has(state);
    const queued = this.writes.get(task.id);
    const write = queued ?? { chain: Promise.resolve() };
    this.writes.set(task.id, write);
    clearTimeout(write.waiting);
    const send = () => {
      write.waiting = undefined;
      const latest = this.recent.get(task.id) ?? task;
      const json = Task.toJSON(latest);
      const ended = latest.status?.state !== undefined && FINAL.has(latest.status.state);
      write.chain = write.chain
        .catch(() => undefined)
        .then(() =>
          this.client.workflow
            .signalWithStart(A2A_TASK_WORKFLOW_TYPE, {
              workflowId: taskWorkflowId(latest.id),
              taskQueue: this.taskQueue,
              args: [],
              // A task that ended is not started again by a late save.
              workflowIdReusePolicy: 'REJECT_DUPLICATE',
              signal: a2aTaskSaveSignal,
              signalArgs: [{ task: json, final: ended }],
              memo: { contextId: latest.contextId, ...(tenant !== undefined ? { tenant } : {}) },
              staticSummary: `A2A task of conversation ${latest.contextId}`,
              ...tenantStartOptions({ tenant }),
            })
            .then(
              () => undefined,
              (err: unknown) => {
                if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
              },
            ),
        );
      const chain = write.chain;
      // A task whose writes are all out is forgotten here (one waiting for days costs nothing).
      void chain
        .finally(() => {
          if (write.chain === chain && !write.waiting && this.writes.get(latest.id) === write)
            this.writes.delete(latest.id);
        })
        .catch(() => undefined);
      return chain;
    };
    if (final || state === TaskState.TASK_STATE_INPUT_REQUIRED) {
      await send();
      return;
    }
    // A task's first save goes out soon (unawaited), so a task its client was told of is in
    // Temporal even if this server dies in the next second; a task that ends sooner than that
    // (most one-step tasks) is written once, when it ends.
    write.waiting = setTimeout(() => void send().catch(() => undefined), queued ? WORKING_WRITE_MS : FIRST_WRITE_MS);
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const scope = callScope(context);
    const mine = this.recent.get(taskId);
    // Another tenant's task is, to this caller, no task at all.
    if (mine) return inScope(scope, this.tenants.get(taskId)) ? structuredClone(mine) : undefined;
    const handle = this.client.workflow.getHandle(taskWorkflowId(taskId));
    let json: unknown;
    try {
      const { status, memo } = await handle.describe();
      if (!inScope(scope, (memo as { tenant?: string } | undefined)?.tenant)) return undefined;
      json = status.name === 'COMPLETED' ? await handle.result() : await handle.query(a2aTaskQuery);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError || (err as { code?: number }).code === 5) return undefined;
      throw err;
    }
    if (json === undefined || json === null) return undefined;
    const task = Task.fromJSON(json as object);
    return FINAL.has(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED) ? task : this.caughtUp(task);
  }

  /**
   * The tasks the caller may see, most recently updated first, a page at a time: `totalSize`
   * counts every match, and `nextPageToken` (opaque, tied to the filters) starts the next page.
   * Filters and order come from each record's memo (its context, and since patch a2a-task-memo its
   * state and status time) and from the tasks this server saved last, which are newer; a record
   * without them is read.
   */
  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const size = params.pageSize ?? 50;
    const scope = callScope(context);
    const filters = filtersKey(params, scope.tenant);
    let offset = 0;
    if (params.pageToken) {
      const cursor = readPageToken(params.pageToken, filters);
      if ('problem' in cursor) throw new RequestMalformedError(cursor.problem);
      offset = cursor.offset;
    }
    const status = params.status || undefined; // TASK_STATE_UNSPECIFIED (0): no filter
    const after = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : undefined;
    const candidates = new Map<string, Candidate>();
    // This server's tasks: those of its task queue (another deployment's agents, on another
    // queue in the same namespace, are not this server's to list).
    const iterator = this.client.workflow.list({
      query:
        `WorkflowType = '${A2A_TASK_WORKFLOW_TYPE}' AND TaskQueue = '${this.taskQueue}'` +
        (scope.tenant !== undefined ? ` AND AgentTenant = '${scope.tenant}'` : ''),
    });
    for await (const w of iterator) {
      if (candidates.size >= MAX_LISTED) break;
      const memo = (w.memo ?? {}) as { contextId?: string; state?: string; updated?: string };
      const id = w.workflowId.slice(PREFIX.length);
      candidates.set(id, {
        id,
        contextId: memo.contextId,
        state: memo.state === undefined ? undefined : TaskState[memo.state as keyof typeof TaskState],
        updated: memo.updated ?? w.startTime.toISOString(),
        known: memo.state !== undefined,
      });
    }
    // What this server saved last is newer than the records (and may not be listed yet).
    for (const [id, task] of this.recent)
      if (inScope(scope, this.tenants.get(id)))
        candidates.set(id, {
          id,
          contextId: task.contextId,
          state: task.status?.state,
          updated: task.status?.timestamp ?? new Date().toISOString(),
          known: true,
          task,
        });
    const inContext = [...candidates.values()].filter((c) => !params.contextId || c.contextId === params.contextId);
    // A record without state in its memo is read (side by side); one that cannot be read now
    // (its workflow waits for a worker that is gone) is left out of a filtered list, not waited for.
    if (status !== undefined || after !== undefined)
      await eachLimited(
        inContext.filter((c) => !c.known),
        READ_AT_ONCE,
        async (c) => {
          const task = await this.listedTask(c.id, context);
          if (task) Object.assign(c, { task, state: task.status?.state, updated: task.status?.timestamp ?? c.updated });
        },
      );
    const matches: Candidate[] = [];
    for (const c of inContext) {
      if ((status !== undefined || after !== undefined) && !c.task && !c.known) continue;
      if (status !== undefined && c.state !== status) continue;
      if (after !== undefined && !(Date.parse(c.updated) > after)) continue;
      matches.push(c);
    }
    matches.sort((a, b) => Date.parse(b.updated) - Date.parse(a.updated));
    const page = matches.slice(offset, offset + size);
    const read = await Promise.all(
      page.map((m) => (m.task ? Promise.resolve(structuredClone(m.task)) : this.listedTask(m.id, context))),
    );
    const tasks = read.filter((t): t is Task => t !== undefined);
    const next = offset + size < matches.length ? pageToken({ offset: offset + size, filters }) : '';
    return { tasks, nextPageToken: next, pageSize: tasks.length, totalSize: matches.length };
  }

  /**
   * A task as a list shows it: read within {@link LIST_READ_MS}, or left out (a record whose
   * workflow cannot answer now must not hold up the list, nor fail it).
   */
  private async listedTask(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    try {
      return await this.client.connection.withDeadline(Date.now() + LIST_READ_MS, () => this.load(taskId, context));
    } catch {
      return undefined;
    }
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
      const workflowId = (task.metadata as { workflowId?: unknown } | undefined)?.workflowId;
      events = await keptEvents(this.client, typeof workflowId === 'string' ? workflowId : task.contextId);
    } catch {
      return task; // the conversation cannot answer now: the record is what is known
    }
    const end = events.find((e) => e.turn === turn && (e.type === 'turn_completed' || e.type === 'turn_failed'));
    if (!end) return task;
    return { ...task, ...turnOutcome(task, end) };
  }
}

/** A task ListTasks may list: what its record's memo (or this server) says of it. */
interface Candidate {
  id: string;
  contextId?: string;
  state?: TaskState;
  /** Its status time (or its record's start), ISO 8601. */
  updated: string;
  /** Whether state and time are the task's own (not a record that predates the memo). */
  known: boolean;
  task?: Task;
}

/** The task's workflow id. */
export function taskWorkflowId(taskId: string): string {
  return `${PREFIX}${taskId}`;
}

const PREFIX = 'a2a-task-';

/** The most tasks one list request looks through (a caller with more narrows by context or status). */
const MAX_LISTED = 10_000;

/**
 * How long a working task's save waits for the next (see `TemporalTaskStore.save`): what a reader
 * after a crash of this server may miss of a task still working, at most.
 */
const WORKING_WRITE_MS = 1000;

/**
 * How long a new task's first save waits: a task that ends sooner is written once, when it ends
 * (a record workflow started per write costs a one-step task about 10 ms on a small machine); a
 * reader after a crash of this server in that time does not find the task (its turn runs on).
 */
const FIRST_WRITE_MS = 250;

/** How long a list waits for one task record it must read (see `TemporalTaskStore.listedTask`). */
const LIST_READ_MS = 3000;

/** How many task records a list reads at once. */
const READ_AT_ONCE = 8;

/** Runs `each` over `items`, at most `limit` at a time. */
async function eachLimited<T>(items: T[], limit: number, each: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await each(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/** How many tasks a server remembers as it saved them (see `TemporalTaskStore.recent`). */
const RECENT_TASKS = 1000;

/** States after which a task changes no more. */
export const FINAL = new Set<TaskState>([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);
