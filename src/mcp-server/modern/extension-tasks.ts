import { randomUUID } from 'node:crypto';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';

/** What an extension's tool does its work with, as a task (see `ModernExtensionContext.task`). */
export interface ExtensionTask {
  /** The task's id, as the client polls it. */
  readonly taskId: string;
  /** Aborted when the client cancels the task: stop, and the task stays `cancelled`. */
  readonly signal: AbortSignal;
  /**
   * Asks the client for input (the task is `input_required` with these requests, by keys of your
   * choosing, as `elicitation/create` or `sampling/createMessage` requests) and resolves with the
   * responses once every one is answered (`tasks/update`; a client may answer them one at a time).
   */
  input(requests: Record<string, unknown>): Promise<Record<string, unknown>>;
}

/** A tool result, as the tool's callback returns it. */
type ToolResult = Record<string, unknown>;

interface Entry {
  tenant: string;
  status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
  createdAt: string;
  lastUpdatedAt: string;
  result?: ToolResult;
  error?: { code: number; message: string };
  /** The input requests not answered yet, and where their answers go. */
  pending: Map<string, { request: unknown; answer: (response: unknown) => void }>;
  stop: AbortController;
  /** When a finished task is forgotten. */
  expires?: number;
}

/** How long a finished task stays readable (its `ttlMs`). */
export const EXTENSION_TASK_TTL_MS = 3_600_000;
/** How often a client should ask how a task goes. */
const POLL_INTERVAL_MS = 500;
/** The most tasks kept at once: the oldest finished ones go first. */
const MAX_TASKS = 10_000;
/** The prefix of an extension task's id (an agent's task is its run's workflow id). */
export const EXTENSION_TASK_PREFIX = 'mcp-ext-task-';

/**
 * Tasks of an application's own MCP tools on 2026-07-28 (the tasks extension, SEP-2663), run in
 * this process: the work runs on after the call answers with the task, a client reads it with
 * `tasks/get` (its status, the input it waits for, its result or error), answers its input with
 * `tasks/update` and stops it with `tasks/cancel`. Unlike an agent's task (a durable run any
 * replica answers for), such a task lives in the process that runs it, for an hour after it ends:
 * behind a load balancer, a client's task requests must reach that process.
 *
 * Hand-written: the SDK's v2 server has no task runtime (its `registerTool` drops `execution`),
 * and the extension's package serves requesters only.
 */
export class ExtensionTasks {
  private readonly tasks = new Map<string, Entry>();

  /** Starts `work` as a task of `tenant`'s; the CreateTaskResult to answer the call with. */
  start(tenant: string, work: (task: ExtensionTask) => Promise<ToolResult>): Record<string, unknown> {
    this.sweep();
    const taskId = `${EXTENSION_TASK_PREFIX}${randomUUID()}`;
    const now = new Date().toISOString();
    const entry: Entry = {
      tenant,
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      pending: new Map(),
      stop: new AbortController(),
    };
    this.tasks.set(taskId, entry);
    const settle = (change: Partial<Entry>) => {
      if (entry.status === 'cancelled') return; // cancelled stays cancelled, whatever the work does after
      Object.assign(entry, change, {
        lastUpdatedAt: new Date().toISOString(),
        expires: Date.now() + EXTENSION_TASK_TTL_MS,
      });
      entry.pending.clear();
    };
    const task: ExtensionTask = {
      taskId,
      signal: entry.stop.signal,
      input: (requests) => {
        const keys = Object.keys(requests);
        if (keys.length === 0) return Promise.resolve({});
        return new Promise((resolve, reject) => {
          const answers: Record<string, unknown> = {};
          entry.stop.signal.addEventListener('abort', () => reject(new Error('the task was cancelled')), {
            once: true,
          });
          for (const key of keys)
            entry.pending.set(key, {
              request: requests[key],
              answer: (response) => {
                answers[key] = response;
                if (keys.every((k) => k in answers)) resolve(answers);
              },
            });
          this.touch(entry, 'input_required');
        });
      },
    };
    void Promise.resolve()
      .then(() => work(task))
      .then(
        (result) => settle({ status: 'completed', result }),
        (err: unknown) =>
          settle({
            status: 'failed',
            error: {
              code: err instanceof ProtocolError ? err.code : ProtocolErrorCode.InternalError,
              message: err instanceof Error ? err.message : String(err),
            },
          }),
      );
    return {
      resultType: 'task',
      taskId,
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: EXTENSION_TASK_TTL_MS,
      pollIntervalMs: POLL_INTERVAL_MS,
    };
  }

  /** Whether `taskId` names a task of this kind (whether or not it is known here). */
  static owns(taskId: string): boolean {
    return taskId.startsWith(EXTENSION_TASK_PREFIX);
  }

  /** `tasks/get`: the task as the extension's detailed task, or undefined for none of `tenant`'s. */
  get(tenant: string, taskId: string): Record<string, unknown> | undefined {
    const entry = this.find(tenant, taskId);
    if (!entry) return undefined;
    const base = {
      taskId,
      status: entry.status,
      createdAt: entry.createdAt,
      lastUpdatedAt: entry.lastUpdatedAt,
      ttlMs: EXTENSION_TASK_TTL_MS,
      pollIntervalMs: POLL_INTERVAL_MS,
    };
    if (entry.status === 'input_required')
      return { ...base, inputRequests: Object.fromEntries([...entry.pending].map(([k, p]) => [k, p.request])) };
    if (entry.status === 'completed') return { ...base, result: entry.result };
    if (entry.status === 'failed') return { ...base, error: entry.error };
    return base;
  }

  /** `tasks/update`: hands each response to the input it answers; false for no task of `tenant`'s. */
  update(tenant: string, taskId: string, responses: Record<string, unknown>): boolean {
    const entry = this.find(tenant, taskId);
    if (!entry) return false;
    for (const [key, response] of Object.entries(responses)) {
      const pending = entry.pending.get(key);
      if (!pending) continue;
      entry.pending.delete(key);
      pending.answer(response);
    }
    if (entry.status === 'input_required' && entry.pending.size === 0) this.touch(entry, 'working');
    else this.touch(entry, entry.status);
    return true;
  }

  /** `tasks/cancel`: the task is cancelled (a finished one stays as it ended); false for none of `tenant`'s. */
  cancel(tenant: string, taskId: string): boolean {
    const entry = this.find(tenant, taskId);
    if (!entry) return false;
    if (entry.status === 'working' || entry.status === 'input_required') {
      entry.pending.clear();
      this.touch(entry, 'cancelled');
      entry.expires = Date.now() + EXTENSION_TASK_TTL_MS;
      entry.stop.abort();
    }
    return true;
  }

  private find(tenant: string, taskId: string): Entry | undefined {
    const entry = this.tasks.get(taskId);
    return entry && entry.tenant === tenant ? entry : undefined;
  }

  private touch(entry: Entry, status: Entry['status']): void {
    entry.status = status;
    entry.lastUpdatedAt = new Date().toISOString();
  }

  /** Forgets finished tasks past their time, and the oldest finished ones past the limit. */
  private sweep(): void {
    const now = Date.now();
    for (const [id, entry] of this.tasks) if (entry.expires !== undefined && entry.expires < now) this.tasks.delete(id);
    if (this.tasks.size < MAX_TASKS) return;
    for (const [id, entry] of this.tasks) {
      if (this.tasks.size < MAX_TASKS) break;
      if (entry.expires !== undefined) this.tasks.delete(id);
    }
    if (this.tasks.size >= MAX_TASKS)
      throw new ProtocolError(ProtocolErrorCode.InternalError, `this server runs ${MAX_TASKS} tasks already`);
  }
}

/** The `_meta` key by which a tool's placeholder result carries the task it started (see {@link taskPlaceholder}). */
const STARTED_TASK = 'durable-agents/started-task';

/**
 * What a tool's callback returns for a task it started: a tool result the SDK's handler passes
 * through, carrying the CreateTaskResult that our `tools/call` handler answers with instead
 * ({@link startedTask}). The SDK's handler answers with tool results only.
 */
export function taskPlaceholder(created: Record<string, unknown>): { content: []; _meta: Record<string, unknown> } {
  return { content: [], _meta: { [STARTED_TASK]: created } };
}

/** The CreateTaskResult a tool result carries (see {@link taskPlaceholder}), or undefined. */
export function startedTask(result: unknown): Record<string, unknown> | undefined {
  const meta = (result as { _meta?: Record<string, unknown> } | null)?._meta;
  const created = meta?.[STARTED_TASK];
  return typeof created === 'object' && created !== null ? (created as Record<string, unknown>) : undefined;
}

/** The work's task when the client does not take tasks: it runs in the call, and cannot ask for input. */
export function callTask(signal: AbortSignal): ExtensionTask {
  return {
    taskId: '',
    signal,
    input: () =>
      Promise.reject(
        new ProtocolError(
          ProtocolErrorCode.InvalidRequest,
          'this tool asks for input as a task: declare the io.modelcontextprotocol/tasks extension',
        ),
      ),
  };
}
