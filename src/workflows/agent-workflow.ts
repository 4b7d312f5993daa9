import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  ContinueAsNew,
  continueAsNew,
  isCancellation,
  patched,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { versionDetails } from './approvals';
import {
  applyAgent,
  carriedRunState,
  runTranscriptPage,
  shouldContinueAsNew,
  withDefaultMemory,
  applyInterruption,
  EventLog,
  messagesPage,
  runResult,
  runStatus,
  withChildApprovals,
  startRun,
  validateAgentInput,
  withoutHistoryMark,
  type AgentInput,
  type AgentWorkflowInput,
  type AgentResult,
  type AgentWorkflowResult,
  type RunState,
} from '../core';
import { omitRecordedResults, withDurationUnitsRequired } from './compat';
import { messagesQuery, statusQuery, transcriptQuery } from '../common/definitions';
import { SharedMessages } from './message-sink';
import { failureInfo } from './failure-info';
import { handleApprovals, handleEvents, resolveAgent, resolveToolsAndVersion, runLoop, type RunRef } from './run-loop';
import { followSearchAttributes, SearchAttributes } from './search-attributes';
import { countRun } from './run-metrics';
import { EventInbox, handleDeliveredEvents } from './events';
import { timeLimited, type TimeLimit } from './time-limit';

/**
 * One agent run: the LLM sees the conversation and the tools, asks for tool calls, they run as
 * activities, results go back, until the LLM answers or a limit ends the run. All decisions come
 * from the pure core (`src/core`); this function only carries them out.
 */
export async function agentWorkflow(original: AgentWorkflowInput): Promise<AgentWorkflowResult> {
  const input = withDurationUnitsRequired(original);
  // A run that continued as new goes on from where the previous workflow run stopped.
  const carry = input.carry;
  const problems = validateAgentInput(input);
  if (problems.length > 0)
    throw ApplicationFailure.nonRetryable(`invalid agent input: ${problems.join('; ')}`, 'Agent.InvalidInput');

  // Queries may arrive before the tools are resolved, so a state exists from the first line.
  // With Worker Versioning: the build the run is pinned to, in its status and result.
  const version = workflowInfo().currentDeploymentVersion;
  const buildId = version?.deploymentName ? version.buildId : undefined;
  const onBuild = (state: RunState): RunState => (buildId ? { ...state, buildId } : state);
  const run: RunRef = { state: onBuild(carry ? carry.state : startRun(input, [])) };
  setHandler(messagesQuery, (range) => messagesPage(run.state.messages, range));
  setHandler(transcriptQuery, (range) => runTranscriptPage(run.state, carry?.previousRunId, range ?? {}, messagesPage));
  const events = new EventLog(carry?.events);
  if (!carry) events.startTurn(1, input.message);
  handleEvents(events);
  const approvals = handleApprovals(() => ({ run, turn: 1 }), events);
  setHandler(statusQuery, () => withChildApprovals(runStatus(run.state), approvals.fromChildren()));
  // Events for wait_for_event: kept from the start, so one delivered before the wait is not lost.
  const inbox = new EventInbox(carry?.inbox, carry?.eventIds);
  handleDeliveredEvents(inbox, events, () => 1);
  let timeLimit: TimeLimit | undefined;

  const { workflowId, runId } = workflowInfo();
  const shared = new SharedMessages();
  const searchAttributes = await SearchAttributes.open();
  followSearchAttributes(events, searchAttributes, { run: () => run.state });
  const loopWith = (effective: AgentInput) =>
    runLoop(run, {
      workflowId,
      runId,
      shared,
      events,
      turn: 1,
      stream: effective.stream !== false,
      inbox,
      timeLimit,
      approvals,
      beforeStep: (state) =>
        shouldContinueAsNew(state, workflowInfo(), input.continueAsNewAfter) && patched('run-continue-as-new')
          ? continueRun(original, { run, runId, events, inbox, timeLimit })
          : undefined,
    });
  let loop: () => Promise<void>;
  let limitMs = carry ? carry.timeLeftMs : run.state.limits.maxExecutionTimeMs;
  try {
    if (carry) {
      // Its agent, tools and limits were resolved when the run started; it keeps them.
      setCurrentDetails(versionDetails(run.state));
      loop = () => loopWith(input);
    } else if (input.agent) {
      // A named agent's settings (its time limit among them) must be known before the run starts.
      const agent = await resolveAgent({
        agent: input.agent,
        tools: input.tools,
        immediateTools: input.immediateTools,
        approvalTools: input.approvalTools,
      });
      // The default memory (maxPromptTokens by the model's context window) unless the run or agent set one.
      const effective = withDefaultMemory(applyAgent(input, agent.settings), searchAttributes.worker);
      run.state = onBuild(startRun(effective, agent.tools, agent.version));
      setCurrentDetails(versionDetails(run.state));
      limitMs = run.state.limits.maxExecutionTimeMs;
      loop = () => loopWith(effective);
    } else {
      loop = async () => {
        const { tools, version } = await resolveToolsAndVersion(
          { tools: input.tools, immediateTools: input.immediateTools, approvalTools: input.approvalTools },
          input,
        );
        const effective = withDefaultMemory(input, searchAttributes.worker);
        run.state = onBuild(startRun(effective, tools, version));
        if (version) setCurrentDetails(versionDetails(run.state));
        await loopWith(effective);
      };
    }
    if (limitMs === undefined) await loop();
    else if (await timeLimited(loop, limitMs, (limit) => (timeLimit = limit)))
      run.state = applyInterruption(run.state, 'time_limit');
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    const failure = runFailure(err, run.state, workflowId);
    const { error, errorType } = isCancellation(err)
      ? { error: 'the run was cancelled', errorType: 'Cancelled' }
      : failureInfo(err);
    events.emit(1, { type: 'turn_failed', error, errorType });
    countRun('run', isCancellation(err) ? 'cancelled' : 'failed', run.state.agent.name);
    throw failure;
  }
  const result = runResult(run.state, workflowId);
  countRun('run', result.status, run.state.agent.name);
  events.emit(1, { type: 'turn_completed', result });
  // Tool outputs are in history as activity results already: clients read them from there.
  return runResult(run.state, workflowId, { omitRecordedResults: omitRecordedResults(run.state) });
}

/**
 * Continues the run as new (see `RunCarry`): once the handlers under way are done, with the
 * state the model still needs, the event stream's offsets, the undelivered events and what is
 * left of the time limit. Clients follow it by the workflow id and see one run.
 */
async function continueRun(
  original: AgentWorkflowInput,
  at: { run: RunRef; runId: string; events: EventLog; inbox: EventInbox; timeLimit?: TimeLimit },
): Promise<never> {
  await condition(allHandlersFinished);
  const timeLeftMs = at.timeLimit?.remaining();
  at.timeLimit?.cancel();
  const inbox = at.inbox.snapshot();
  const ids = at.inbox.ids();
  return continueAsNew<typeof agentWorkflow>({
    ...original,
    carry: {
      state: carriedRunState(at.run.state),
      previousRunId: at.runId,
      events: at.events.snapshot(),
      ...(inbox.length ? { inbox } : {}),
      ...(ids.length ? { eventIds: ids } : {}),
      ...(timeLeftMs !== undefined ? { timeLeftMs } : {}),
    },
  });
}

/**
 * A run that cannot go on (a non-retryable model error, retries exhausted) fails the workflow, so
 * the Temporal UI shows it failed. The failure keeps the original type (e.g. `ModelCall.Auth`)
 * and carries the partial result as details for clients.
 */
function runFailure(err: unknown, state: RunState, workflowId: string): unknown {
  if (isCancellation(err)) return err;
  const { error, errorType, cause } = failureInfo(err);
  const partial: Omit<AgentResult, 'status' | 'content'> = {
    workflowId,
    toolExecutions: state.toolExecutions.map(withoutHistoryMark),
    iterations: state.iterations,
    usage: state.usage,
  };
  return ApplicationFailure.create({ message: error, type: errorType, nonRetryable: true, details: [partial], cause });
}
