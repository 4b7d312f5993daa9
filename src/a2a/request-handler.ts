import { randomUUID } from 'node:crypto';
import {
  TaskState,
  type CancelTaskRequest,
  type GetTaskRequest,
  type ListTasksRequest,
  type ListTasksResponse,
  type Message,
  type SendMessageRequest,
  type StreamResponse,
  type SubscribeToTaskRequest,
  type Task,
  type TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import {
  DefaultExecutionEventBusManager,
  DefaultRequestHandler,
  type AgentExecutionEvent,
  type ExtendedAgentCardProvider,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import { RequestMalformedError, TaskNotCancelableError } from '@a2a-js/sdk/errors';
import type { ConversationExecutor } from './conversation-executor';
import type { TemporalPushStore } from './push-store';
import { historyLengthProblem, listTasksProblem, messageProblem } from './request-checks';
import { FINAL, type TemporalTaskStore } from './task-store';

/** States in which a task waits for its client: a blocking send answers then. */
const INTERRUPTED = new Set<TaskState>([TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED]);

/**
 * The SDK's request handler, with what a durable server adds:
 * - a resubscription (`SubscribeToTask`) to a task that no execution on this server is following
 *   (its server restarted, or another replica ran it) follows the task's turn from its
 *   conversation's durable event log, instead of answering the task as stored and ending;
 * - a blocking `SendMessage` waits at most `maxBlockingWaitMs`, then answers with the task as it
 *   is (still working: the turn goes on, and the client follows it);
 * - requests are checked where the SDK lets them through (see `request-checks.ts`): a message
 *   without parts or role, a negative `historyLength`, a malformed timestamp are the client's
 *   mistakes (-32602), as is a push config for a task that has ended; a push config gets an id.
 */
export class DurableRequestHandler extends DefaultRequestHandler {
  private readonly buses: DefaultExecutionEventBusManager;

  constructor(
    card: ConstructorParameters<typeof DefaultRequestHandler>[0],
    private readonly tasks: TemporalTaskStore,
    private readonly follower: ConversationExecutor,
    pushes: TemporalPushStore,
    sender: ConstructorParameters<typeof DefaultRequestHandler>[5],
    extendedCard: ExtendedAgentCardProvider,
    private readonly maxBlockingWaitMs?: number,
  ) {
    const buses = new DefaultExecutionEventBusManager();
    super(card, tasks, follower, buses, pushes, sender, extendedCard);
    this.buses = buses;
  }

  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    checked(messageProblem(params.message));
    checked(historyLengthProblem(params.configuration?.historyLength));
    const cap = this.maxBlockingWaitMs;
    if (cap === undefined || params.configuration?.returnImmediately === true)
      return super.sendMessage(params, context);
    // Blocking, with a cap: sent as non-blocking (the execution goes on in this process), then
    // waited for here, until the task ends, asks for input, or the cap passes.
    const configuration = { ...(params.configuration ?? emptyConfiguration()), returnImmediately: true };
    const first = await super.sendMessage({ ...params, configuration }, context);
    if (!('status' in first) || settled(first.status?.state)) return first;
    const bus = this.buses.getByTaskId(first.id, context);
    if (bus) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          bus.off('event', onEvent);
          bus.off('finished', done);
          resolve();
        };
        const onEvent = (event: AgentExecutionEvent) => {
          const state = event.kind === 'task' || event.kind === 'statusUpdate' ? event.data.status?.state : undefined;
          // The store has the event once the SDK saved it: a tick later.
          if (settled(state)) setTimeout(done, 50);
        };
        const timer = setTimeout(done, cap);
        bus.on('event', onEvent);
        bus.on('finished', done);
      });
    }
    const task = (await this.tasks.load(first.id, context)) ?? first;
    return withHistory(task, params.configuration?.historyLength);
  }

  override async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    checked(messageProblem(params.message));
    checked(historyLengthProblem(params.configuration?.historyLength));
    yield* super.sendMessageStream(params, context);
  }

  override async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    checked(historyLengthProblem(params.historyLength));
    return super.getTask(params, context);
  }

  override async listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    checked(listTasksProblem(params));
    const response = await super.listTasks(params, context);
    // Artifacts only when asked for (ListTasks' `includeArtifacts`).
    if (params.includeArtifacts !== true) for (const task of response.tasks) task.artifacts = [];
    return response;
  }

  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    // A2A's CancelTask lists a task already canceled among those not cancelable (the SDK answers
    // it with the task).
    const task = params.id ? await this.tasks.load(params.id, context) : undefined;
    if (task?.status?.state === TaskState.TASK_STATE_CANCELED)
      throw new TaskNotCancelableError(`the task ${params.id} is already canceled`);
    return super.cancelTask(params, context);
  }

  override async createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    // A task that has ended takes one too (A2A allows it; it notifies nothing): its record keeps it
    // for an hour after the end (A2A_CONFIG_WINDOW_MS), then refuses (the push store says so).
    // The id the config is kept (and can be read, listed and deleted) under, when the client gave none.
    return super.createTaskPushNotificationConfig({ ...params, id: params.id || randomUUID() }, context);
  }

  override async *resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const task = this.buses.getByTaskId(params.id, context) ? undefined : await this.tasks.load(params.id, context);
    const state = task?.status?.state;
    // A live execution, an unknown task or a finished one: the SDK answers as it does.
    if (!task || state === undefined || FINAL.has(state)) return yield* super.resubscribe(params, context);
    yield { payload: { $case: 'task', value: task } };
    const stop = new AbortController();
    try {
      let latest = task;
      for await (const event of this.follower.follow(task, stop.signal)) {
        if (event.kind === 'statusUpdate') {
          latest = { ...latest, status: event.data.status, metadata: event.data.metadata ?? latest.metadata };
          yield { payload: { $case: 'statusUpdate', value: event.data } };
        } else if (event.kind === 'artifactUpdate') {
          latest = { ...latest, artifacts: [...latest.artifacts, event.data.artifact!] };
          yield { payload: { $case: 'artifactUpdate', value: event.data } };
        }
      }
      const ended = latest.status?.state;
      if (ended !== undefined && ended !== state) await this.tasks.save(latest, context);
    } finally {
      stop.abort();
    }
  }
}

/** Throws the client's mistake as -32602 (HTTP 400), with its sentence. */
function checked(problem: string | undefined): void {
  if (problem) throw new RequestMalformedError(problem);
}

/** Whether a task in `state` is one a blocking send answers with: ended, or waiting for its client. */
function settled(state: TaskState | undefined): boolean {
  return state !== undefined && (FINAL.has(state) || INTERRUPTED.has(state));
}

/** The task with its last `historyLength` messages (all when absent; none for 0). */
function withHistory(task: Task, historyLength: number | undefined): Task {
  if (historyLength === undefined) return task;
  return { ...task, history: historyLength === 0 ? [] : task.history.slice(-historyLength) };
}

function emptyConfiguration(): NonNullable<SendMessageRequest['configuration']> {
  return {
    acceptedOutputModes: [],
    taskPushNotificationConfig: undefined,
    historyLength: undefined,
    returnImmediately: false,
  };
}
