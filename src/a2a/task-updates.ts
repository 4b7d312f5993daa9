import { TaskState } from '@a2a-js/sdk';
import { AgentEvent as A2AEvent, type AgentExecutionEvent } from '@a2a-js/sdk/server';
import type { AgentEvent } from '../core/events/agent-events';
import type { ConversationTurnResult } from '../core/state/run-results';
import { isTurnEnd } from '../client/event-stream';
import type { TurnStep } from '../client/turn-follow';
import { agentMessage, status, turnOutcome } from './task-events';

/**
 * A followed turn as the task's updates: `working` as it runs and calls tools, `input-required`
 * when it pauses for approvals, then the answer as the `answer` artifact and the final state.
 * `result` is the turn's result once its Update answered; `answered` aborts then, and the task
 * ends with it at once, without waiting for the event stream to tell the same.
 */
export async function* taskUpdates(
  ids: { id: string; contextId: string; workflowId: string },
  steps: AsyncIterable<TurnStep>,
  turnAtStart: number | undefined,
  result: () => ConversationTurnResult | undefined,
  answered?: AbortSignal,
): AsyncGenerator<AgentExecutionEvent> {
  let turn = turnAtStart;
  const asked = new Map<string, string>();
  const questions = new Map<string, string>();
  const update = (state: TaskState, text?: string) =>
    A2AEvent.statusUpdate({
      taskId: ids.id,
      contextId: ids.contextId,
      status: status(state, text ? agentMessage(ids, text) : undefined),
      metadata: turn === undefined ? undefined : { workflowId: ids.workflowId, turn },
    });
  function* finish(end: AgentEvent): Generator<AgentExecutionEvent> {
    const outcome = turnOutcome(ids, end);
    for (const artifact of outcome.artifacts)
      yield A2AEvent.artifactUpdate({
        taskId: ids.id,
        contextId: ids.contextId,
        artifact,
        append: false,
        lastChunk: true,
        metadata: undefined,
      });
    yield A2AEvent.statusUpdate({
      taskId: ids.id,
      contextId: ids.contextId,
      status: outcome.status,
      metadata: { workflowId: ids.workflowId, turn: turn ?? end.turn },
    });
  }
  const iterator = steps[Symbol.asyncIterator]();
  let streamEnded = false;
  const ended = new Promise<'answered'>((resolve) =>
    answered?.aborted ? resolve('answered') : answered?.addEventListener('abort', () => resolve('answered')),
  );
  for (;;) {
    const next = await Promise.race([iterator.next(), ended]);
    if (next === 'answered') {
      void iterator.return?.(undefined)?.catch(() => undefined);
      break;
    }
    if (next.done) {
      streamEnded = true;
      break;
    }
    const step = next.value;
    if (step.kind === 'paused') {
      const what = [...asked.values()].join('; ');
      const question = [...questions.values()].join('; ');
      yield update(
        TaskState.TASK_STATE_INPUT_REQUIRED,
        question
          ? `${question}${what ? ` (and approve ${what}? Answer "yes" or "no".)` : ''}`
          : `Approve ${what || 'the pending tool calls'}? Answer "yes" or "no".`,
      );
      return;
    }
    const e = step.event;
    if (e.type === 'turn_started') {
      turn = e.turn;
      // The task records its turn (in its metadata), so the store can tell how it ended even
      // without this server.
      yield update(TaskState.TASK_STATE_WORKING);
    } else if (e.type === 'tool_call_started') yield update(TaskState.TASK_STATE_WORKING, `calling ${e.name}`);
    else if (e.type === 'approval_requested') (e.question !== undefined ? questions : asked).set(e.callId, e.summary);
    else if (e.type === 'approval_decided') {
      asked.delete(e.callId);
      questions.delete(e.callId);
    } else if (isTurnEnd(e)) return yield* finish(e);
  }
  const done = result();
  if (done) yield* finish({ type: 'turn_completed', result: done, offset: -1, turn: done.turn });
  // The conversation closed without this turn's end (its agent could not be resolved, it was
  // terminated): the task must not stay submitted or working for good.
  else if (streamEnded && !answered?.aborted)
    yield update(
      TaskState.TASK_STATE_FAILED,
      `the conversation ${ids.workflowId} closed before it answered this message; its workflow in Temporal says why`,
    );
}
