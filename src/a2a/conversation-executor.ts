import { delegatedByOf } from '../core/policies/policies';
import type { Client } from '@temporalio/client';
import { TaskState, type Message, type Task } from '@a2a-js/sdk';
import {
  AgentEvent as A2AEvent,
  type AgentExecutionEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { busyPolicyProblem, type BusyPolicy } from '../core/conversation/busy';
import { workflowIdProblem } from '../core/run/run-input';
import type { ApprovalDecision } from '../core/tool-calls/approvals';
import type { ConversationOptions } from '../core/conversation/conversation-state';
import type { ConversationTurnResult } from '../core/state/run-results';
import { cancelTurn, startMessage, type MessageRequest } from '../client/conversations';
import { ACCEPT_WITHIN_MS } from '../client/accepted-within';
import { eventsPosition } from '../client/event-stream';
import { decideAnswered, followTurn, pausedTurn, type TurnStep } from '../client/turn-follow';
import type { ImageInput } from '../storage/images';
import { agentMessage, messageExcerpt, status } from './task-events';
import { taskUpdates } from './task-updates';
import { answerWithoutAgent, extensionOutcome, messageForAgent, type A2AServerExtension } from './a2a-server-extension';
import type { TemporalTaskStore } from './task-store';
import { callScope } from './tenant-user';
import { scopedWorkflowId } from '../client/tenant-scope';

/** What {@link ConversationExecutor} needs. */
export interface ConversationExecutorOptions {
  client: Client;
  taskQueue: string;
  /** The named agent this A2A agent is (it applies when a context's conversation starts). */
  agent?: string;
  conversationOptions?: ConversationOptions;
  store: TemporalTaskStore;
  /** The application's say in each message before the agent sees it (see {@link A2AServerExtension}). */
  extend?: A2AServerExtension;
}

/**
 * The A2A agent executor: a task is one turn of the durable conversation its `contextId` names
 * (started on the first message of a context). The executor sends the message, follows the turn
 * from the conversation's event log and tells the A2A server how the task goes: `working` as the
 * turn runs and calls tools, `input-required` when a tool call waits for approval (a message on
 * the same task answers it: "yes", "no, because ...", or a data part `{"approved", "reason"?}`),
 * then the answer as the `answer` artifact and the final state.
 */
export class ConversationExecutor implements AgentExecutor {
  constructor(private readonly o: ConversationExecutorOptions) {}

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    // The conversation's workflow id: the contextId, in the caller's tenant's id space (set below).
    const ids = { id: ctx.taskId, contextId: ctx.contextId, workflowId: ctx.contextId };
    const update = (state: TaskState, text?: string, turn?: number) =>
      bus.publish(
        A2AEvent.statusUpdate({
          taskId: ids.id,
          contextId: ids.contextId,
          status: status(state, text ? agentMessage(ids, text) : undefined),
          metadata: turn === undefined ? undefined : { workflowId: ids.workflowId, turn },
        }),
      );
    // The turn's result, once its Update answers: it ends the task without waiting for the
    // event stream to catch up (the stream still tells what happens before: tools, approvals).
    const answered = new AbortController();
    const signal = answered.signal;
    let result: ConversationTurnResult | undefined;
    let refused: string | undefined;
    let published = false;
    try {
      const problem = workflowIdProblem(ctx.contextId, 'the contextId');
      if (problem) throw new Error(problem);
      let outcome: Awaited<ReturnType<typeof extensionOutcome>>;
      try {
        outcome = await extensionOutcome(this.o.extend, ctx, {
          agent: this.o.agent ?? '',
          tenant: callScope(ctx.context).tenant,
          taskId: ctx.taskId,
          contextId: ctx.contextId,
          followUp: ctx.task !== undefined,
        });
      } catch (err) {
        if (!ctx.task?.status) throw err;
        // A follow-up the extension failed on leaves its task as it was (its turn waits on, or
        // works on): the client may send it again.
        bus.publish(A2AEvent.task(ctx.task));
        published = true;
        // Its metadata as it was: its conversation (in its tenant's id space) and its turn.
        ids.workflowId = taskWorkflowId(ctx.task);
        const turn = (ctx.task.metadata as { turn?: number } | undefined)?.turn;
        update(ctx.task.status.state, `${(err as Error).message}; the message was not taken, send it again`, turn);
        return;
      }
      if (outcome && outcome.kind !== 'agent') {
        published = true;
        return answerWithoutAgent(ctx, bus, outcome);
      }
      // What the agent takes: the message as sent, or the text the extension gave for it.
      const message = outcome ? messageForAgent(ctx.userMessage, outcome.text) : ctx.userMessage;
      // In the caller's tenant's id space: another tenant's context is no context to it, a new one its own.
      ids.workflowId = await scopedWorkflowId(this.o.client, callScope(ctx.context), ctx.contextId, 'conversation');
      let steps: AsyncGenerator<TurnStep>;
      let task: Task;
      if (ctx.task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
        task = ctx.task;
        // A follow-up's first event is its task too (the SDK's rule for every execution).
        bus.publish(A2AEvent.task(task));
        published = true;
        const paused = await pausedTurn(this.o.client, ids.workflowId);
        const turn = (task.metadata as { turn?: number } | undefined)?.turn;
        if (!paused || paused.turn !== turn) {
          steps = followTurn(this.o.client, ids.workflowId, { turn, signal });
        } else {
          const answer = approvalAnswer(message, paused.pending, paused.questions);
          if (!answer) {
            update(
              TaskState.TASK_STATE_INPUT_REQUIRED,
              'Please answer "yes" or "no" (or send {"approved": true|false}).',
              turn,
            );
            return;
          }
          const decided = await decideAnswered(this.o.client, ids.workflowId, answer);
          const pending = paused.pending.filter((c) => !decided.has(c));
          update(TaskState.TASK_STATE_WORKING, undefined, turn);
          steps = followTurn(this.o.client, ids.workflowId, { after: paused.after, turn, pending, signal });
        }
      } else {
        // A context the client did not name is a new conversation: its events start with this turn.
        const after = ctx.userMessage.contextId ? await eventsPosition(this.o.client, ids.workflowId) : undefined;
        const working = ctx.task?.status?.state === TaskState.TASK_STATE_WORKING;
        const sent = await this.send(ctx, message, ids.workflowId, working);
        if (!sent.queued)
          sent.result().then(
            (r) => {
              result = r;
              answered.abort();
            },
            (err: unknown) => {
              // Refused (a busy conversation under "reject", an unknown tool): no turn comes to follow.
              refused = err instanceof Error ? err.message : String(err);
              answered.abort();
            },
          );
        task = {
          id: ids.id,
          contextId: ids.contextId,
          // A continued task goes on working; a new one is submitted until its turn starts.
          status: status(working ? TaskState.TASK_STATE_WORKING : TaskState.TASK_STATE_SUBMITTED),
          artifacts: ctx.task?.artifacts ?? [],
          // A continued task keeps what was said (the SDK's own record of it, this message among it).
          history: [
            ...(ctx.task?.history ?? []).filter((m) => m.messageId !== ctx.userMessage.messageId),
            ctx.userMessage,
          ],
          metadata: { workflowId: ids.workflowId },
        };
        bus.publish(A2AEvent.task(task));
        published = true;
        if (sent.queued)
          update(
            task.status!.state,
            `no worker accepted the message within ${ACCEPT_WITHIN_MS / 1000} s: it is queued, and answered once a worker runs`,
          );
        steps = followTurn(this.o.client, ids.workflowId, { after, signal });
      }
      const turn = (task.metadata as { turn?: number } | undefined)?.turn;
      for await (const event of taskUpdates(ids, steps, turn, () => result, signal)) bus.publish(event);
      if (refused !== undefined && result === undefined) update(TaskState.TASK_STATE_FAILED, refused);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      // Refused before it started (a bad contextId, a message without text): a task that failed.
      if (!published)
        bus.publish(
          A2AEvent.task({
            id: ids.id,
            contextId: ids.contextId,
            status: status(TaskState.TASK_STATE_FAILED, agentMessage(ids, why)),
            artifacts: [],
            history: [messageExcerpt(ctx.userMessage)],
            metadata: undefined,
          }),
        );
      else update(TaskState.TASK_STATE_FAILED, why);
    } finally {
      bus.finished();
    }
  }

  /**
   * Sends the message to the context's conversation (opening it), as the caller's tenant and for
   * whom it works; a message to a task still `working` steers its running turn.
   */
  private send(ctx: RequestContext, message: Message, workflowId: string, working: boolean) {
    // Not streamed: a task's updates are its states and its answer, not the answer's words
    // (streaming them would cost every turn its deltas' events).
    const { tenant } = callScope(ctx.context);
    // A caller under policies says whom it works for: our agent runs under their policies too.
    const delegatedBy = delegatedByOf(message.metadata);
    const options: ConversationOptions = {
      ...this.o.conversationOptions,
      ...(this.o.agent ? { agent: this.o.agent } : {}),
      ...(tenant !== undefined ? { tenant } : {}),
      ...(delegatedBy ? { delegatedBy } : {}),
    };
    // A message to a task still working joins its running turn (the conversation's `steer`),
    // unless it says otherwise (`metadata.busy`): the task's work goes on, now with it.
    const request = userMessage(message);
    if (working && request.busy === undefined) request.busy = 'steer';
    // No worker accepting it within ACCEPT_WITHIN_MS (none runs, or it just died): the message
    // is queued, durably, and the task waits for its turn rather than the request for a worker.
    return startMessage(
      this.o.client,
      workflowId,
      request,
      { taskQueue: this.o.taskQueue, options },
      { acceptWithinMs: ACCEPT_WITHIN_MS },
    );
  }

  /**
   * The updates of a task that is not finished, followed from its conversation without the
   * server that ran it (a resubscription after that server restarted): from its turn's first
   * event to its end, or to `input-required` when the turn waits for approval.
   */
  async *follow(task: Task, signal: AbortSignal): AsyncGenerator<AgentExecutionEvent> {
    const ids = { id: task.id, contextId: task.contextId, workflowId: taskWorkflowId(task) };
    const turn = (task.metadata as { turn?: number } | undefined)?.turn;
    yield* taskUpdates(ids, followTurn(this.o.client, ids.workflowId, { turn, signal }), turn, () => undefined);
  }

  async cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    try {
      const task = await this.o.store.load(taskId, undefined as never);
      if (task) {
        await cancelTurn(this.o.client, taskWorkflowId(task)).catch(() => undefined);
        bus.publish(
          A2AEvent.statusUpdate({
            taskId,
            contextId: task.contextId,
            status: status(TaskState.TASK_STATE_CANCELED, agentMessage(task, 'the task was cancelled')),
            metadata: undefined,
          }),
        );
      }
    } finally {
      bus.finished();
    }
  }
}

/** The conversation a task's turn is in: its `metadata.workflowId` (its contextId in its tenant's id space), else its contextId. */
function taskWorkflowId(task: Task): string {
  const id = (task.metadata as { workflowId?: unknown } | undefined)?.workflowId;
  return typeof id === 'string' ? id : task.contextId;
}

/** The user's message as a turn: its text parts, and its images (URLs, or bytes as data URLs). */
function userMessage(message: Message): MessageRequest {
  const text: string[] = [];
  const images: ImageInput[] = [];
  for (const part of message.parts) {
    const content = part.content;
    if (content?.$case === 'text') text.push(content.value);
    else if (content?.$case === 'url' && part.mediaType.startsWith('image/'))
      images.push(part.filename ? { url: content.value, name: part.filename } : content.value);
    else if (content?.$case === 'raw' && part.mediaType.startsWith('image/'))
      images.push({
        data: new Uint8Array(content.value),
        mediaType: part.mediaType,
        ...(part.filename ? { name: part.filename } : {}),
      });
    else if (content?.$case === 'data') text.push(JSON.stringify(content.value));
    else if (content)
      throw new Error(`parts of type ${part.mediaType || content.$case} are not supported: send text, data or images`);
  }
  if (!text.join('').trim() && images.length === 0) throw new Error('the message has no text and no image');
  const turn: MessageRequest = images.length ? { message: text.join('\n'), images } : { message: text.join('\n') };
  // `metadata.busy`: what the message does while the context's conversation runs a turn (see BUSY_POLICIES).
  const busy = (message.metadata as Record<string, unknown> | undefined)?.busy;
  if (busy !== undefined) {
    const problem = busyPolicyProblem(busy);
    if (problem) throw new Error(`metadata.busy: ${problem.replace('"busy" ', '')}`);
    turn.busy = busy as BusyPolicy;
  }
  return turn;
}

/**
 * A person's answer to the pending approvals, from a message: a data part `{"approved", "reason"?,
 * "callId"?}`, or text that starts with yes or no (the rest is the reason). A tool's question
 * (`questions`) takes any other text as its answer. Undefined when the message answers nothing.
 */
export function approvalAnswer(
  message: Message,
  pending: readonly string[],
  questions: readonly string[] = [],
): ApprovalDecision[] | undefined {
  for (const part of message.parts) {
    const content = part.content;
    if (content?.$case === 'data' && typeof content.value?.approved === 'boolean') {
      const { approved, reason, callId } = content.value as { approved: boolean; reason?: unknown; callId?: unknown };
      const calls = typeof callId === 'string' ? [callId] : pending;
      return calls.map((c) => ({
        callId: c,
        approve: approved,
        ...(typeof reason === 'string' && reason ? { reason } : {}),
      }));
    }
  }
  const text = message.parts
    .flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : []))
    .join(' ')
    .trim();
  const yes = /^(yes|y|approve[d]?|ok(ay)?|sure|go ahead)\b[\s,.:;-]*/i.exec(text);
  if (yes) {
    const said = text.slice(yes[0].length).trim() || (questions.length ? text : '');
    return pending.map((callId) => ({ callId, approve: true, ...(said ? { reason: said } : {}) }));
  }
  const no = /^(no|n|deny|denied|reject(ed)?|don'?t)\b[\s,.:;-]*/i.exec(text);
  if (no) {
    const reason = text.slice(no[0].length).trim();
    return pending.map((callId) => ({ callId, approve: false, ...(reason ? { reason } : {}) }));
  }
  if (text && questions.length) return questions.map((callId) => ({ callId, approve: true, reason: text }));
  return undefined;
}
