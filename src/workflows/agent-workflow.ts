import { carriedIn, carryVersion } from '../core/state/carry-versions';
import { extractAfterTurn, runMemory } from './memory-steps';
import type { RunContext } from './run-context';
import { ApplicationFailure, ContinueAsNew, continueAsNew, setHandler, workflowInfo } from '@temporalio/workflow';
import { applyAgent } from '../core/state/agents';
import { applyInterruption, startRun } from '../core/run/agent-loop';
import { carriedRunState, shouldContinueAsNew, type AgentWorkflowInput } from '../core/run/run-carry';
import { messagesPage } from '../core/messages/chat-message';
import { runResult, runStatus } from '../core/run/run-result';
import { runTranscriptPage } from '../core/conversation/conversation-status';
import { validateAgentInput } from '../core/run/run-input';
import { withChildApprovals } from '../core/tool-calls/approvals';
import { withDefaultMemory } from '../core/context/context-windows';
import type { AgentInput } from '../core/state/run-options';
import type { AgentWorkflowResult } from '../core/state/run-results';
import { forgetInRun } from '../core/conversation/forgetting';
import { messagesQuery, statusQuery, transcriptQuery } from '../contracts/definitions';
import { runEnding, runFailure } from './failure-info';
import { handleForgetting, keepForgetting } from './forgetting';
import { AgentHost } from './host';
import { runLoop, type RunRef } from './run-loop';
import { timeLimited, type TimeLimit } from './time-limit';

/**
 * One agent run: the LLM sees the conversation and the tools, asks for tool calls, they run as
 * activities, results go back, until the LLM answers or a limit ends the run. All decisions come
 * from the pure core (`src/core`); this function only carries them out, on the {@link AgentHost}
 * it shares with conversations.
 */
export async function agentWorkflow(input: AgentWorkflowInput): Promise<AgentWorkflowResult> {
  // A continued run's carry, read in this build's shape (core/state/carry-versions.ts).
  input = carriedIn('run', input);
  const problems = validateAgentInput(input, { asStarted: true });
  if (problems.length > 0)
    throw ApplicationFailure.nonRetryable(`invalid agent input: ${problems.join('; ')}`, 'Agent.InvalidInput');
  // A run that continued as new goes on from where the previous workflow run stopped.
  const { carry } = input;
  // Queries may arrive before the tools are resolved, so a state exists from the first line.
  const run: RunRef = { state: carry ? carry.state : startRun(input, []) };
  const host = new AgentHost(carry, () => ({ run, turn: 1 }), carry ? {} : { firstMessage: input.message });
  run.state = host.onBuild(run.state);
  setHandler(messagesQuery, (range) => messagesPage(run.state.messages, range));
  setHandler(transcriptQuery, (range) => runTranscriptPage(run.state, carry?.previousRunId, range ?? {}, messagesPage));
  setHandler(statusQuery, () => withChildApprovals(runStatus(run.state), host.approvals.fromChildren()));
  handleForgetting(host.events, (forgotten) => {
    keepForgetting(run, forgotten);
    const out = forgetInRun(run.state, forgotten);
    run.state = out.state;
    return out.changed;
  });
  // A new run's agent is resolved while the worker says what it keeps (one round trip, not two).
  const early = carry ? undefined : host.resolveAtOnce(...resolveArgs(input));
  await host.open({ run: () => run.state });
  // Its agent, tools and limits were resolved when the run started; it keeps them.
  if (carry) host.showVersion({ ...run.state, tenant: input.tenant });
  // The worker's policies, as this workflow run's worker describes them (a continued run asks again).
  if (carry) run.state = host.withPolicies(run.state, input);

  let timeLimit: TimeLimit | undefined;
  // The run's context, kept for its memory's extraction after the loop (outside its time limit).
  let ctx: RunContext | undefined;
  const loopWith = (effective: AgentInput) =>
    runLoop(
      run,
      (ctx = host.runContext(1, {
        stream: effective.stream !== false,
        timeLimit,
        ...(input.tenant !== undefined ? { tenant: input.tenant } : {}),
        ...(input.user !== undefined ? { user: input.user } : {}),
        ...(runMemory(effective) ? { memory: runMemory(effective) } : {}),
        ...(effective.priority !== undefined ? { priority: effective.priority } : {}),
        // Between steps, when Temporal suggests it: on in a new workflow run (the promise never resolves).
        beforeStep: (state) =>
          shouldContinueAsNew(state, workflowInfo(), input.continueAsNewAfter)
            ? continueRun({ ...input, ...memoryOf(effective) }, host, run, timeLimit)
            : undefined,
      })),
    );
  try {
    // A named agent's settings (its time limit among them) are known before the run starts; a
    // run that continued as new keeps what its first run resolved.
    const effective = carry ? input : await resolved(input, host, run, early);
    const limitMs = carry ? carry.timeLeftMs : run.state.limits.maxExecutionTimeMs;
    if (limitMs === undefined) await loopWith(effective);
    else if (
      await timeLimited(
        () => loopWith(effective),
        limitMs,
        (limit) => (timeLimit = limit),
      )
    )
      run.state = applyInterruption(run.state, 'time_limit');
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    const { error, errorType, status } = runEnding(err);
    host.endTurn('run', 1, run.state.agent.name, { type: 'turn_failed', error, errorType }, status);
    throw runFailure(err, run.state, host.workflowId);
  }
  // What the user said that is worth keeping, once the run answered (never counted in its time limit).
  if (ctx?.memory) await extractAfterTurn(run.state, ctx);
  const result = runResult(run.state, host.workflowId);
  host.endTurn('run', 1, run.state.agent.name, { type: 'turn_completed', result }, result.status);
  // Tool outputs are in history as activity results already: clients read them from there.
  const final = runResult(run.state, host.workflowId, { omitRecordedResults: true });
  return input.tenant !== undefined ? { ...final, tenant: input.tenant } : final;
}

/**
 * The memory settings a run goes on with after continue-as-new: its agent's, resolved when it
 * started (the new workflow run does not resolve the agent again).
 */
function memoryOf(effective: AgentInput): Pick<AgentInput, 'memory'> {
  return effective.memory ? { memory: effective.memory } : {};
}

/**
 * Resolves the run's agent or tools (once: a recorded local activity) and starts the run with
 * them; returns the input as the run applies it (the agent's settings merged in, the default memory).
 */
async function resolved(
  input: AgentWorkflowInput,
  host: AgentHost,
  run: RunRef,
  early: ReturnType<AgentHost['resolve']> | undefined,
): Promise<AgentInput> {
  const agent = await (early ?? host.resolve(...resolveArgs(input)));
  // The default memory (maxPromptTokens by the model's context window) unless the run or agent set one.
  const effective = withDefaultMemory(agent.settings ? applyAgent(input, agent.settings) : input, host.worker);
  run.state = host.withPolicies(host.onBuild(startRun(effective, agent.tools, agent.version)), input);
  host.showVersion({ ...run.state, tenant: input.tenant });
  return effective;
}

/** What a run asks {@link AgentHost.resolve}: its agent, the tools it names, and itself (for the version). */
function resolveArgs(input: AgentWorkflowInput): Parameters<AgentHost['resolve']> {
  const { tools, immediateTools, approvalTools } = input;
  return [
    input.agent,
    { tools, immediateTools, approvalTools, ...(input.workspace ? { workspace: true } : {}) },
    input,
  ];
}

/**
 * Continues the run as new (see `RunCarry`): once the handlers under way are done, with the
 * state the model still needs, the event stream's offsets, the undelivered events and what is
 * left of the time limit. Clients follow it by the workflow id and see one run.
 */
async function continueRun(
  input: AgentWorkflowInput,
  host: AgentHost,
  run: RunRef,
  timeLimit: TimeLimit | undefined,
): Promise<never> {
  await host.quiesce();
  const timeLeftMs = timeLimit?.remaining();
  timeLimit?.cancel();
  return continueAsNew<typeof agentWorkflow>({
    ...input,
    carryVersion: carryVersion('run'),
    carry: {
      ...host.carry(),
      state: carriedRunState(run.state),
      previousRunId: host.runId,
      ...(timeLeftMs !== undefined ? { timeLeftMs } : {}),
    },
  });
}
