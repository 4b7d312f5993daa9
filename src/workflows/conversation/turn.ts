import { extractAfterTurn, runMemory } from '../memory-steps';
import type { RunContext } from '../run-context';
import { CancellationScope, isCancellation, log } from '@temporalio/workflow';
import { applyInterruption } from '../../core/run/agent-loop';
import { finishTurn, startTurn, turnResult, withTurnApprovals } from '../../core/conversation/conversation';
import { forkAt as fork } from '../../core/conversation/branches';
import { withAnsweredMessage } from '../../core/messages/message-ids';
import type { ConversationTurnResult } from '../../core/state/run-results';
import { failureInfo } from '../failure-info';
import type { AgentHost } from '../host';
import { runLoop } from '../run-loop';
import { TimeLimit } from '../time-limit';
import type { ActiveTurn, ConversationSession, QueuedTurn } from './session';

/**
 * One turn of a conversation: the agent loop over the chat memory for one message, under the
 * turn's time limit (a durable timer, paused by durable waits) and in a scope of its own, which
 * `cancelTurn` cancels. A turn that fails leaves the conversation open; only a cancelled
 * conversation ends here.
 */
export async function runTurn(
  session: ConversationSession,
  host: AgentHost,
  queued: QueuedTurn,
  /** Fork first, before this held message (see `forkIndex`): the turn starts a branch. */
  forkAt?: number,
): Promise<ConversationTurnResult> {
  if (forkAt !== undefined) session.conv = fork(session.conv, forkAt);
  session.conv = withTurnApprovals(session.conv, queued.input);
  const turn: ActiveTurn = {
    turn: session.conv.turns + 1,
    queued,
    run: { state: host.withPolicies(startTurn(session.conv, queued.input), session.conv.options) },
    scope: new CancellationScope(),
    steering: [],
  };
  session.active = turn;
  const { branch } = session.conv;
  host.events.startTurn(
    turn.turn,
    queued.input.message,
    queued.input.messageId,
    branch && { branch: branch.id, ...(forkAt !== undefined ? { forkedAt: branch.forkedAt } : {}) },
  );
  const limitMs = turn.run.state.limits.maxExecutionTimeMs;
  // The timer is cancelled (and leaves history) when the turn ends first; durable waits pause it.
  const timeLimit =
    limitMs === undefined
      ? undefined
      : new TimeLimit(limitMs, () => {
          turn.interruption ??= 'time_limit';
          turn.scope.cancel();
        });
  let failure: { error: string; errorType: string } | undefined;
  let ctx: RunContext | undefined;
  try {
    const stream = session.conv.options.stream !== false;
    ctx = host.runContext(turn.turn, {
      stream,
      conversation: true,
      timeLimit,
      ...(session.conv.options.tenant !== undefined ? { tenant: session.conv.options.tenant } : {}),
      ...(session.conv.options.user !== undefined ? { user: session.conv.options.user } : {}),
      ...(runMemory(session.conv.options) ? { memory: runMemory(session.conv.options) } : {}),
      ...(session.conv.options.priority !== undefined ? { priority: session.conv.options.priority } : {}),
      // Messages sent with busy "steer" join the turn before its next model call; they are answered with it.
      steering: () => {
        const taken = turn.steering.splice(0);
        (queued.joined ??= []).push(...taken);
        return taken.map((q) => q.input);
      },
      stopped: (text) => (turn.partial = text),
    });
    const turnCtx = ctx;
    await turn.scope.run(() => runLoop(turn.run, turnCtx));
  } catch (err) {
    if (!isCancellation(err)) {
      const { error, errorType } = failureInfo(err);
      failure = { error, errorType };
      log.warn('a turn failed; the conversation stays open', { turn: turn.turn, error, errorType });
    } else if (turn.interruption)
      turn.run.state = applyInterruption(
        turn.run.state,
        turn.interruption,
        turn.interruption === 'cancelled' ? turn.partial : undefined,
      );
    else throw err; // the whole conversation was cancelled
  } finally {
    timeLimit?.cancel();
    session.active = undefined;
    if (turn.steering.length > 0) queued.leftover = turn.steering;
  }
  session.conv = withAnsweredMessage(finishTurn(session.conv, turn.run.state), queued.input.messageId, turn.turn);
  session.lastTurnIterations = turn.run.state.iterations;
  const result = turnResult(turn.run.state, host.workflowId, turn.turn, failure);
  if (branch) result.branch = branch.id;
  const end = failure ? { type: 'turn_failed' as const, ...failure } : { type: 'turn_completed' as const, result };
  host.endTurn('turn', turn.turn, session.conv.options.agent, end, failure ? 'failed' : result.status);
  // What the user said that is worth keeping: after the turn's end reached its readers (a chat
  // page shows the answer as done), before the next message is taken.
  if (ctx?.memory && !failure) await extractAfterTurn(turn.run.state, ctx);
  return result;
}
