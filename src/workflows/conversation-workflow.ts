import { carriedIn, carryVersion } from '../core/state/carry-versions';
import {
  ApplicationFailure,
  condition,
  ContinueAsNew,
  continueAsNew,
  isCancellation,
  log,
  makeContinueAsNewFunc,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { addUsage } from '../core/messages/usage';
import {
  carryOver,
  DEFAULT_IDLE_TIMEOUT,
  rejectMessage,
  turnProblem,
  validateConversationOptions,
  withResolvedAgent,
} from '../core/conversation/conversation';
import { currentBranch, forkIndex, listBranches, switchBranch, switchProblem } from '../core/conversation/branches';
import { forgetInConversation } from '../core/conversation/forgetting';
import { forkedConversation } from '../core/conversation/fork-conversation';
import {
  conversationResult,
  conversationStatus,
  runMessages,
  transcriptPage,
  type ConversationResult,
} from '../core/conversation/conversation-status';
import { messagesPage } from '../core/messages/chat-message';
import { parseDuration } from '../core/time/duration';
import { withChildApprovals } from '../core/tool-calls/approvals';
import { withDefaultMemory } from '../core/context/context-windows';
import type { ConversationInput } from '../core/conversation/conversation-state';
import {
  branchesQuery,
  cancelTurnUpdate,
  forkSourceQuery,
  switchBranchUpdate,
  conversationStatusQuery,
  endConversationUpdate,
  messagesQuery,
  moveToCurrentBuildSignal,
  transcriptQuery,
  usageQuery,
} from '../contracts/definitions';
import { failureInfo } from './failure-info';
import { handleForgetting, keepForgetting } from './forgetting';
import { AgentHost } from './host';
import { MessageQueue, throwIf } from './conversation/messages';
import { ConversationSession } from './conversation/session';
import { runTurn } from './conversation/turn';

/**
 * A multi-turn conversation: one workflow per conversation id, open between user messages. Each
 * message (an Update that returns the turn's result, or a Signal) becomes a turn of the agent
 * loop over the chat memory; turns run one at a time in arrival order. The workflow continues as
 * new at a turn boundary when Temporal suggests it, carrying the memory window and counters, so a
 * conversation can go on for thousands of turns under one id. It stands on the {@link AgentHost}
 * it shares with one-shot runs; its state is the {@link ConversationSession}.
 */
export async function conversationWorkflow(input: ConversationInput): Promise<ConversationResult> {
  // A continued run's carry, read in this build's shape (core/state/carry-versions.ts).
  input = carriedIn('conversation', input);
  const problems = validateConversationOptions(input, { asStarted: true });
  if (problems.length > 0)
    throw ApplicationFailure.nonRetryable(
      `invalid conversation options: ${problems.join('; ')}`,
      'Conversation.InvalidInput',
    );
  const session = new ConversationSession(input);
  const host = new AgentHost(input.carry, () => session.current(), { lastTurn: () => session.lastTurn() });
  session.conv = host.onBuild(session.conv);
  const messages = new MessageQueue(session);
  handleQueries(session, host, messages);
  handleControls(session, host, messages);
  // A new conversation's agent is resolved while the worker says what it keeps (one round trip, not two).
  const wanted = resolveArgs(session, input);
  const early = wanted && host.resolveAtOnce(...wanted.args);
  await host.open({
    run: () => session.active?.run.state,
    conversation: () => ({
      totals: { usage: session.conv.usage, lastTurnIterations: session.lastTurnIterations },
      agent: session.conv.options.agent,
      model: session.conv.options.modelSettings?.model,
      agentVersion: session.conv.agentVersion,
    }),
  });
  try {
    await start(session, host, wanted, early);
    await serve(session, host, messages, parseDuration(input.idleTimeout ?? DEFAULT_IDLE_TIMEOUT));
    host.events.conversationState('closed');
    await host.quiesce();
    return conversationResult(host.workflowId, session.conv, session.closeReason!);
  } catch (err) {
    // Continue-as-new goes on in a new run; a cancelled or failed conversation shows how it ended.
    if (!(err instanceof ContinueAsNew)) host.events.conversationState(isCancellation(err) ? 'cancelled' : 'failed');
    throw err;
  }
}

/** The queries of a conversation: its messages as the model sees them, its transcript, usage and status. */
function handleQueries(session: ConversationSession, host: AgentHost, messages: MessageQueue): void {
  setHandler(messagesQuery, (range) => messagesPage(runMessages(session.conv, session.active?.run.state), range));
  setHandler(transcriptQuery, (range) =>
    transcriptPage(session.conv, session.active?.run.state, range ?? {}, messagesPage),
  );
  setHandler(branchesQuery, () => listBranches(session.conv, session.held()));
  setHandler(forkSourceQuery, (at) => {
    const forked = forkedConversation(session.conv, at, { workflowId: host.workflowId, runId: host.runId });
    if ('problem' in forked) throw new Error(forked.problem);
    return forked.input;
  });
  setHandler(usageQuery, () =>
    session.active ? addUsage(session.conv.usage, session.active.run.state.usage) : session.conv.usage,
  );
  setHandler(conversationStatusQuery, () => {
    const { active } = session;
    const status = conversationStatus(
      host.workflowId,
      session.conv,
      active && { turn: active.turn, run: active.run.state },
      messages.length,
      session.closeReason,
    );
    return withChildApprovals(status, host.approvals.fromChildren());
  });
}

/**
 * What people do to a conversation besides messages: cancel its turn, end it, make another
 * branch current, ask it to move to the current build.
 */
function handleControls(session: ConversationSession, host: AgentHost, messages: MessageQueue): void {
  setHandler(
    switchBranchUpdate,
    ({ branch }) => {
      if (branch !== currentBranch(session.conv)) {
        session.conv = switchBranch(session.conv, branch);
        host.events.emit(session.lastTurn(), { type: 'branch_switched', branch });
      }
      return listBranches(session.conv);
    },
    {
      validator: (asked) =>
        throwIf(
          session.active || messages.length > 0
            ? 'a turn is running: make another branch current between turns (stop the turn, or wait for its end)'
            : switchProblem(session.conv, (asked as { branch?: unknown } | undefined)?.branch),
        ),
    },
  );
  handleForgetting(host.events, (forgotten) => {
    const active = session.active;
    const out = forgetInConversation(session.conv, active?.run.state, forgotten);
    session.conv = out.conv;
    if (active && out.run) active.run.state = out.run;
    if (active) keepForgetting(active.run, forgotten);
    return out.changed;
  });
  setHandler(moveToCurrentBuildSignal, () => {
    session.moveAsked = true;
  });
  setHandler(cancelTurnUpdate, () => ({ turn: session.interrupt()! }), {
    validator: (asked) =>
      throwIf(
        !session.active
          ? 'no turn is running'
          : asked?.turn !== undefined && asked.turn !== session.active.turn
            ? `turn ${asked.turn} is not running (turn ${session.active.turn} is)`
            : undefined,
      ),
  });
  setHandler(
    endConversationUpdate,
    async () => {
      session.ending = true;
      await condition(() => session.closeReason !== undefined);
      return conversationResult(host.workflowId, session.conv, session.closeReason!);
    },
    { validator: () => throwIf(session.ending ? 'the conversation is already ending' : undefined) },
  );
}

/**
 * Resolves the conversation's agent or tools, once per conversation and build (continue-as-new
 * carries the merged options and the tools; a move to another build resolves the agent as that
 * build defines it). A conversation that cannot start tells the messages waiting for it why, then
 * fails; their sender removes it.
 */
async function start(
  session: ConversationSession,
  host: AgentHost,
  /** What to resolve (see `resolveArgs`), and its resolution when it was begun already. */
  wanted: ReturnType<typeof resolveArgs>,
  early?: ReturnType<AgentHost['resolve']>,
): Promise<void> {
  if (wanted) {
    const { refresh } = wanted;
    try {
      const resolved = await (early ?? host.resolve(...wanted.args));
      // From the session as it is now: messages refused while the agent was resolved are counted there.
      session.conv = resolved.settings
        ? withResolvedAgent(session.conv, { ...resolved, settings: resolved.settings })
        : { ...session.conv, tools: resolved.tools, agentVersion: resolved.version };
    } catch (err) {
      if (isCancellation(err)) throw err;
      if (!refresh) return failToStart(session, host, failureInfo(err));
      // This build cannot resolve the agent (it was removed or renamed): the conversation goes on as it was.
      log.warn('the agent could not be resolved on this build; the conversation keeps its definition', {
        error: failureInfo(err).error,
      });
    }
  }
  host.showVersion({
    agent: { name: session.conv.options.agent },
    agentVersion: session.conv.agentVersion,
    buildId: session.conv.buildId,
    tenant: session.conv.options.tenant,
  });
  // The default memory (maxPromptTokens by the model's context window) unless the options set one
  // or a message window; continue-as-new carries it in the options.
  session.conv = { ...session.conv, options: withDefaultMemory(session.conv.options, host.worker) };
}

/**
 * What the conversation asks {@link AgentHost.resolve} as it starts (its agent and the tools its
 * options name) and whether that refreshes what a former build resolved (continue-as-new onto a
 * new build); `undefined` when continue-as-new carried them and nothing needs refreshing.
 */
function resolveArgs(
  session: ConversationSession,
  input: ConversationInput,
): { args: Parameters<AgentHost['resolve']>; refresh: boolean } | undefined {
  const { conv } = session;
  const refresh = input.carry?.refreshAgent === true && input.agent !== undefined && conv.given !== undefined;
  if (conv.tools && !refresh) return undefined;
  const asked = refresh ? conv.given! : input;
  const { tools, immediateTools, approvalTools } = asked;
  const request = { tools, immediateTools, approvalTools, ...(asked.workspace ? { workspace: true } : {}) };
  return { args: [input.agent, request, asked], refresh };
}

/** How long a conversation that could not start stays open for its starter to remove it. */
const START_FAILURE_GRACE = '10s';

/**
 * The conversation could not start (e.g. no such agent): the messages waiting for the start hear
 * why, then it fails. Their sender removes this empty conversation, which Temporal does at once
 * while it runs (a closed one only later).
 */
async function failToStart(
  session: ConversationSession,
  host: AgentHost,
  failure: { error: string; errorType: string },
): Promise<never> {
  session.startFailure = failure;
  await host.quiesce();
  await condition(() => false, START_FAILURE_GRACE);
  throw ApplicationFailure.nonRetryable(failure.error, failure.errorType);
}

/**
 * Serves messages, one turn at a time, until the conversation ends (`end`, or idle past its
 * timeout). Between turns it continues as new when its history grows long, and moves to the
 * deployment's current build when that changed (Worker Versioning).
 */
async function serve(
  session: ConversationSession,
  host: AgentHost,
  messages: MessageQueue,
  idleTimeoutMs: number,
): Promise<void> {
  // Worker Versioning: the deployment's current build is no longer the one this run is pinned to.
  const buildChanged = () => workflowInfo().targetWorkerDeploymentVersionChanged === true;
  // At a turn boundary, once the Updates under way are done; a message arriving meanwhile is served first.
  const quiet = async () => {
    const go =
      (await host.quiesce(() => messages.length > 0 || session.ending)) && messages.length === 0 && !session.ending;
    // Not moving after all (a message came): Workflow Streams subscribers are served again.
    if (!go) host.streams.attach();
    return go;
  };
  let idleSince = Date.now();
  // Set once a nudge woke the idle conversation without moving it: the idle timeout still counts from the last turn.
  let idleUntil: number | undefined;
  for (;;) {
    if (messages.length === 0) host.events.conversationState('idle');
    const waitMs = idleUntil === undefined ? idleTimeoutMs : Math.max(1, idleUntil - Date.now());
    const woken = await condition(() => messages.length > 0 || session.ending || session.moveAsked, waitMs);
    if (session.moveAsked && messages.length === 0 && !session.ending) {
      session.moveAsked = false;
      if (buildChanged() && (await quiet())) await continueOnCurrentBuild(session, host);
      idleUntil = idleSince + idleTimeoutMs;
      continue;
    }
    const queued = messages.next();
    if (!queued) {
      session.closeReason = woken ? 'ended' : 'idle_timeout';
      session.ending = true; // from here on, validators refuse new messages
      return;
    }
    // Signalled messages are checked against the tools only now: they can arrive before the tools are resolved.
    const problem = queued.reply ? undefined : turnProblem(queued.input, session.conv.tools, false);
    // A fork's point can be gone by its turn (another fork came first): it is refused then, not answered elsewhere.
    const fork = queued.input.fork && forkIndex(session.conv, queued.input.fork, host.workflowId);
    if (problem) session.conv = rejectMessage(session.conv, problem);
    else if (fork && 'problem' in fork) messages.refused(queued, fork.problem);
    else messages.answered(queued, await runTurn(session, host, queued, fork?.index));
    // Steering messages the turn ended before it could take: each is answered in a turn of its own, next.
    messages.putFirst(queued.leftover ?? []);
    idleSince = Date.now();
    idleUntil = undefined;
    // A turn boundary: continue as new when the history is long, or onto the current build when it changed.
    if (messages.length === 0 && !session.ending && (workflowInfo().continueAsNewSuggested || buildChanged()))
      if (await quiet()) {
        if (buildChanged()) await continueOnCurrentBuild(session, host);
        await continueAsNew<typeof conversationWorkflow>(carriedInput(session, host));
      }
  }
}

/** The input of the conversation's next run: its options and what it carries over. */
function carriedInput(session: ConversationSession, host: AgentHost): ConversationInput {
  return {
    ...session.conv.options,
    carry: { ...carryOver(session.conv, host.runId), ...host.carry() },
    carryVersion: carryVersion('conversation'),
  };
}

/**
 * Continues as new onto the deployment's current build (Temporal's upgrade on continue-as-new):
 * the next run's first task goes to the current build, which it is then pinned to.
 */
async function continueOnCurrentBuild(session: ConversationSession, host: AgentHost): Promise<never> {
  log.info('continuing as new onto the current build', { from: workflowInfo().currentDeploymentVersion?.buildId });
  const onCurrent = makeContinueAsNewFunc<typeof conversationWorkflow>({ initialVersioningBehavior: 'AUTO_UPGRADE' });
  const next = carriedInput(session, host);
  return onCurrent({ ...next, carry: { ...next.carry!, refreshAgent: true } });
}
