import {
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  ContinueAsNew,
  continueAsNew,
  isCancellation,
  log,
  makeContinueAsNewFunc,
  patched,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { versionDetails } from './approvals';
import {
  addUsage,
  answeredTurnOf,
  withAnsweredMessage,
  withResolvedAgent,
  withDefaultMemory,
  applyInterruption,
  carryOver,
  conversationResult,
  conversationStatus,
  withChildApprovals,
  DEFAULT_IDLE_TIMEOUT,
  EventLog,
  finishTurn,
  messagesPage,
  parseDuration,
  rejectMessage,
  runMessages,
  startConversation,
  startTurn,
  transcriptPage,
  turnFindsBudgetSpent,
  turnProblem,
  turnResult,
  validateConversationOptions,
  withTurnApprovals,
  type CloseReason,
  type ConversationInput,
  type ConversationResult,
  type ConversationState,
  type ConversationTurnResult,
  type TurnInput,
} from '../core';
import {
  cancelTurnUpdate,
  conversationStatusQuery,
  endConversationUpdate,
  messagesQuery,
  moveToCurrentBuildSignal,
  queueMessageSignal,
  sendMessageUpdate,
  transcriptQuery,
  usageQuery,
} from '../common/definitions';
import { withDurationUnitsRequired } from './compat';
import { SharedMessages } from './message-sink';
import { followSearchAttributes, SearchAttributes } from './search-attributes';
import { countRun } from './run-metrics';
import { failureInfo } from './failure-info';
import { handleApprovals, handleEvents, resolveAgent, resolveToolsAndVersion, runLoop, type RunRef } from './run-loop';
import { EventInbox, handleDeliveredEvents } from './events';
import { TimeLimit } from './time-limit';

interface QueuedTurn {
  seq: number;
  input: TurnInput;
  /** An Update waits for the result; a Signal does not. */
  reply: boolean;
}

interface ActiveTurn {
  turn: number;
  /** The message it answers. */
  queued: QueuedTurn;
  run: RunRef;
  scope: CancellationScope;
  interruption?: 'cancelled' | 'time_limit';
}

/** How many answers of messages with an id a conversation keeps for the same message sent again. */
const RECENT_RESULTS = 5;

/**
 * A multi-turn conversation: one workflow per conversation id, open between user messages. Each
 * message (an Update that returns the turn's result, or a Signal) becomes a turn of the agent
 * loop over the chat memory; turns run one at a time in arrival order. The workflow continues as
 * new at a turn boundary when Temporal suggests it, carrying the memory window and counters, so a
 * conversation can go on for thousands of turns under one id.
 */
export async function conversationWorkflow(original: ConversationInput): Promise<ConversationResult> {
  // Continue-as-new passes this normalised input on, so a continued run needs no patch check.
  const input = withDurationUnitsRequired(original);
  const problems = validateConversationOptions(input);
  if (problems.length > 0)
    throw ApplicationFailure.nonRetryable(
      `invalid conversation options: ${problems.join('; ')}`,
      'Conversation.InvalidInput',
    );

  const { workflowId, runId } = workflowInfo();
  const shared = new SharedMessages();
  let conv: ConversationState = startConversation(input);
  // With Worker Versioning: the build this run of the conversation is pinned to.
  const version = workflowInfo().currentDeploymentVersion;
  const buildId = version?.deploymentName ? version.buildId : undefined;
  if (buildId) conv = { ...conv, buildId };
  const queue: QueuedTurn[] = [];
  const results = new Map<number, ConversationTurnResult>();
  let nextSeq = 0;
  let active: ActiveTurn | undefined;
  let ending = false;
  let closeReason: CloseReason | undefined;
  /** Why the conversation could not start (its agent or tools could not be resolved). */
  let startFailure: { error: string; errorType: string } | undefined;

  const enqueue = (turn: TurnInput, reply: boolean): number => {
    queue.push({ seq: nextSeq, input: turn, reply });
    return nextSeq++;
  };
  /** The results of the latest turns that answered a message with an id, for the same message sent again. */
  const recentResults = new Map<string, ConversationTurnResult>();
  /**
   * A message with this id, if the conversation has it already: queued or running (its entry),
   * or answered (its turn). A message sent twice (a client's retry; an Update a worker accepted
   * after the same message was queued as a Signal while none answered) is answered once.
   */
  const sameMessage = (id: string | undefined): { entry: QueuedTurn } | { answeredIn: number } | undefined => {
    if (id === undefined) return undefined;
    const entry =
      queue.find((q) => q.input.messageId === id) ??
      (active?.queued.input.messageId === id ? active.queued : undefined);
    if (entry) return { entry };
    const answeredIn = answeredTurnOf(conv, id);
    return answeredIn === undefined ? undefined : { answeredIn };
  };
  const summary = (reason: CloseReason): ConversationResult => conversationResult(workflowId, conv, reason);

  setHandler(messagesQuery, (range) => messagesPage(runMessages(conv, active?.run.state), range));
  setHandler(transcriptQuery, (range) => transcriptPage(conv, active?.run.state, range ?? {}, messagesPage));
  setHandler(usageQuery, () => (active ? addUsage(conv.usage, active.run.state.usage) : conv.usage));
  const events = new EventLog(input.carry?.events);
  handleEvents(events, () => active?.turn ?? Math.max(1, conv.turns));
  const approvals = handleApprovals(
    () => active,
    events,
    () => Math.max(1, conv.turns),
  );
  setHandler(conversationStatusQuery, () =>
    withChildApprovals(
      conversationStatus(
        workflowId,
        conv,
        active && { turn: active.turn, run: active.run.state },
        queue.length,
        closeReason,
      ),
      approvals.fromChildren(),
    ),
  );
  // Events for wait_for_event, kept across turns and continue-as-new until a wait takes them.
  const inbox = new EventInbox(input.carry?.inbox, input.carry?.eventIds);
  handleDeliveredEvents(inbox, events, () => active?.turn ?? Math.max(1, conv.turns));

  setHandler(
    sendMessageUpdate,
    async (turn) => {
      // With update-with-start the message can arrive before the tools are resolved; check it again then.
      await condition(() => conv.tools !== undefined || startFailure !== undefined);
      // The conversation could not start (e.g. no such agent): the message that started it says why.
      if (startFailure) throw ApplicationFailure.nonRetryable(startFailure.error, startFailure.errorType);
      const problem = turnProblem(turn, conv.tools, ending);
      if (problem) throw ApplicationFailure.nonRetryable(problem, 'Conversation.InvalidMessage');
      const same = sameMessage(turn.messageId);
      if (same && 'answeredIn' in same) {
        const kept = recentResults.get(turn.messageId!);
        if (kept) return kept;
        throw ApplicationFailure.nonRetryable(
          `the message "${turn.messageId}" was answered already, in turn ${same.answeredIn}: read that turn in the conversation's history`,
          'Conversation.DuplicateMessage',
        );
      }
      // Queued (or running) already: this Update waits for its answer instead of sending it again.
      if (same) same.entry.reply = true;
      const seq = same ? same.entry.seq : enqueue(turn, true);
      await condition(() => results.has(seq));
      const result = results.get(seq)!;
      results.delete(seq);
      return result;
    },
    { validator: (turn) => throwIf(turnProblem(turn, conv.tools, ending)) },
  );
  setHandler(queueMessageSignal, (turn) => {
    // A signal cannot be refused: an invalid one is dropped, counted and shown in the status query.
    const problem = turnProblem(turn, conv.tools, ending);
    if (problem) {
      log.warn('dropped an invalid queued message', { problem });
      conv = rejectMessage(conv, problem);
    } else if (sameMessage(turn.messageId))
      log.info('a message sent again is answered once', { messageId: turn.messageId });
    else enqueue(turn, false);
  });
  // Worker Versioning: set by a nudge (`deploy promote`) so an idle conversation checks its build now.
  let moveAsked = false;
  setHandler(moveToCurrentBuildSignal, () => {
    moveAsked = true;
  });
  setHandler(
    cancelTurnUpdate,
    () => {
      const turn = active!;
      turn.interruption = 'cancelled';
      turn.scope.cancel();
      return { turn: turn.turn };
    },
    { validator: () => throwIf(active ? undefined : 'no turn is running') },
  );
  setHandler(
    endConversationUpdate,
    async () => {
      ending = true;
      await condition(() => closeReason !== undefined);
      return summary(closeReason!);
    },
    { validator: () => throwIf(ending ? 'the conversation is already ending' : undefined) },
  );

  const searchAttributes = await SearchAttributes.open();
  let lastTurnIterations = 0;
  followSearchAttributes(events, searchAttributes, {
    run: () => active?.run.state,
    conversation: () => ({
      totals: { usage: conv.usage, lastTurnIterations },
      agent: conv.options.agent,
      model: conv.options.modelSettings?.model,
      agentVersion: conv.agentVersion,
    }),
  });
  const showEnd = (state: 'idle' | 'closed' | 'cancelled' | 'failed') => events.conversationState(state);

  try {
    // Moved to another build (Worker Versioning): the agent as that build defines it.
    const refresh = input.carry?.refreshAgent === true && input.agent !== undefined && conv.given !== undefined;
    if (!conv.tools || refresh) {
      const asked = refresh ? conv.given! : input;
      const request = { tools: asked.tools, immediateTools: asked.immediateTools, approvalTools: asked.approvalTools };
      try {
        // Resolved once per conversation and build; continue-as-new carries the merged options and the tools.
        if (input.agent) conv = withResolvedAgent(conv, await resolveAgent({ agent: input.agent, ...request }));
        else {
          const { tools, version } = await resolveToolsAndVersion(request, asked);
          conv = { ...conv, tools, ...(version ? { agentVersion: version } : {}) };
        }
      } catch (err) {
        if (refresh && !isCancellation(err)) {
          // This build cannot resolve the agent (it was removed or renamed): the conversation goes on as it was.
          log.warn('the agent could not be resolved on this build; the conversation keeps its definition', {
            error: failureInfo(err).error,
          });
        } else {
          // Conversations started before this patch failed at once, leaving their first message's
          // Update to end with "the workflow completed before the Update completed".
          if (isCancellation(err) || !patched('conversation-start-failure-answers-messages')) throw err;
          startFailure = failureInfo(err);
          // The messages waiting for the start hear why. Their sender then removes this empty
          // conversation, which Temporal does at once while it runs (a closed one only later).
          await condition(allHandlersFinished);
          await condition(() => false, START_FAILURE_GRACE);
          throw ApplicationFailure.nonRetryable(startFailure.error, startFailure.errorType);
        }
      }
    }
    setCurrentDetails(
      versionDetails({ agent: { name: conv.options.agent }, agentVersion: conv.agentVersion, buildId: conv.buildId }),
    );
    // The default memory (maxPromptTokens by the model's context window) unless the options set one
    // or a message window; continue-as-new carries it in the options.
    conv = { ...conv, options: withDefaultMemory(conv.options, searchAttributes.worker) };

    const runTurn = async (queued: QueuedTurn): Promise<ConversationTurnResult> => {
      conv = withTurnApprovals(conv, queued.input);
      const turn: ActiveTurn = {
        turn: conv.turns + 1,
        queued,
        run: { state: startTurn(conv, queued.input) },
        scope: new CancellationScope(),
      };
      // Consulted only when it matters, so other turns get no marker (see RunState.spentBudgetStops).
      if (turnFindsBudgetSpent(turn.run.state) && patched('spent-budget-stops-turns'))
        turn.run.state = { ...turn.run.state, spentBudgetStops: true };
      active = turn;
      events.startTurn(turn.turn, queued.input.message, queued.input.messageId);
      const timeLimitMs = turn.run.state.limits.maxExecutionTimeMs;
      // The timer is cancelled (and leaves history) when the turn ends first; durable waits pause it.
      const timeLimit =
        timeLimitMs === undefined
          ? undefined
          : new TimeLimit(timeLimitMs, () => {
              turn.interruption ??= 'time_limit';
              turn.scope.cancel();
            });
      let failure: { error: string; errorType: string } | undefined;
      try {
        const stream = conv.options.stream !== false;
        await turn.scope.run(() =>
          runLoop(turn.run, {
            workflowId,
            runId,
            shared,
            events,
            turn: turn.turn,
            stream,
            conversation: true,
            inbox,
            timeLimit,
            approvals,
          }),
        );
      } catch (err) {
        if (isCancellation(err) && turn.interruption)
          turn.run.state = applyInterruption(turn.run.state, turn.interruption);
        else if (isCancellation(err))
          throw err; // the whole conversation was cancelled
        else {
          const { error, errorType } = failureInfo(err);
          failure = { error, errorType };
          log.warn('a turn failed; the conversation stays open', { turn: turn.turn, error, errorType });
        }
      } finally {
        timeLimit?.cancel();
        active = undefined;
      }
      conv = withAnsweredMessage(finishTurn(conv, turn.run.state), queued.input.messageId, turn.turn);
      lastTurnIterations = turn.run.state.iterations;
      const result = turnResult(turn.run.state, workflowId, turn.turn, failure);
      if (queued.input.messageId !== undefined) {
        recentResults.set(queued.input.messageId, result);
        if (recentResults.size > RECENT_RESULTS) recentResults.delete(recentResults.keys().next().value!);
      }
      countRun('turn', failure ? 'failed' : result.status, conv.options.agent);
      events.emit(turn.turn, failure ? { type: 'turn_failed', ...failure } : { type: 'turn_completed', result });
      return result;
    };

    const idleTimeoutMs = parseDuration(input.idleTimeout ?? DEFAULT_IDLE_TIMEOUT);
    // Worker Versioning: the deployment's current build is no longer the one this run is pinned to.
    const buildChanged = () => workflowInfo().targetWorkerDeploymentVersionChanged === true;
    let idleSince = Date.now();
    // Set once a nudge woke the idle conversation without moving it: the idle timeout still counts from the last turn.
    let idleUntil: number | undefined;
    for (;;) {
      if (queue.length === 0) showEnd('idle');
      const woken = await condition(
        () => queue.length > 0 || ending || moveAsked,
        idleUntil === undefined ? idleTimeoutMs : Math.max(1, idleUntil - Date.now()),
      );
      if (moveAsked && queue.length === 0 && !ending) {
        moveAsked = false;
        if (buildChanged()) {
          // As at a turn's end: Updates under way finish first; a message arriving meanwhile is served here.
          await condition(() => allHandlersFinished() || queue.length > 0 || ending);
          if (queue.length === 0 && !ending) await continueOnCurrentBuild(conv, runId, events, inbox);
        }
        idleUntil = idleSince + idleTimeoutMs;
        continue;
      }
      if (queue.length === 0) {
        closeReason = woken ? 'ended' : 'idle_timeout';
        ending = true; // from here on, validators refuse new messages
        break;
      }
      const queued = queue.shift()!;
      // Signalled messages are checked against the tools only now: they can arrive before the tools are resolved.
      const problem = queued.reply ? undefined : turnProblem(queued.input, conv.tools, false);
      if (problem) conv = rejectMessage(conv, problem);
      else {
        const result = await runTurn(queued);
        // Read after the turn: an Update may have joined a signalled message while it ran.
        if (queued.reply) results.set(queued.seq, result);
      }
      idleSince = Date.now();
      idleUntil = undefined;
      // A turn boundary: continue as new when the history is long, or onto the current build when it changed.
      if (queue.length === 0 && !ending && (workflowInfo().continueAsNewSuggested || buildChanged())) {
        // Let the finished turn's Update return its result first; a message arriving meanwhile is served here.
        await condition(() => allHandlersFinished() || queue.length > 0 || ending);
        if (queue.length === 0 && !ending) {
          if (buildChanged()) await continueOnCurrentBuild(conv, runId, events, inbox);
          await continueAsNew<typeof conversationWorkflow>(carriedInput(conv, runId, events, inbox));
        }
      }
    }
    showEnd('closed');
    await condition(allHandlersFinished);
    return summary(closeReason);
  } catch (err) {
    // Continue-as-new goes on in a new run; a cancelled or failed conversation shows how it ended.
    if (!(err instanceof ContinueAsNew) && searchAttributes.endStatus)
      showEnd(isCancellation(err) ? 'cancelled' : 'failed');
    throw err;
  }
}

/** The input of the conversation's next run: its options and what it carries over. */
function carriedInput(conv: ConversationState, runId: string, events: EventLog, inbox: EventInbox): ConversationInput {
  return {
    ...conv.options,
    carry: {
      ...carryOver(conv, runId),
      events: events.snapshot(),
      ...(inbox.snapshot().length ? { inbox: inbox.snapshot() } : {}),
      ...(inbox.ids().length ? { eventIds: inbox.ids() } : {}),
    },
  };
}

/**
 * Continues as new onto the deployment's current build (Temporal's upgrade on continue-as-new):
 * the next run's first task goes to the current build, which it is then pinned to.
 */
async function continueOnCurrentBuild(
  conv: ConversationState,
  runId: string,
  events: EventLog,
  inbox: EventInbox,
): Promise<never> {
  log.info('continuing as new onto the current build', { from: workflowInfo().currentDeploymentVersion?.buildId });
  const onCurrent = makeContinueAsNewFunc<typeof conversationWorkflow>({ initialVersioningBehavior: 'AUTO_UPGRADE' });
  const next = carriedInput(conv, runId, events, inbox);
  return onCurrent({ ...next, carry: { ...next.carry!, refreshAgent: true } });
}

/** How long a conversation that could not start stays open for its starter to remove it. */
const START_FAILURE_GRACE = '10s';

function throwIf(problem: string | undefined): void {
  if (problem) throw new Error(problem);
}
