import { isCancellation, type ActivityOptions } from '@temporalio/workflow';
import {
  applyDroppedMessages,
  applyModelReply,
  applySummary,
  budgetLeft,
  contextRange,
  contextTokens,
  firstUncounted,
  budgetSpent,
  modelCallSummary,
  WRAP_UP_INSTRUCTION,
  nextFallbackModel,
  nextStep,
  pendingApprovals,
  setApprovalDeadline,
  applyGuardrailChecks,
  type GuardrailCheck,
  type GuardrailStep,
  type ModelReply,
  type NextStep,
  type ToolCallingMode,
} from '../core';
import { callModel, checkGuardrails, HEARTBEAT_TIMEOUT, modelCallOptions, summarizeMessages } from './activity-proxies';
import { awaitApprovals } from './approvals';
import { failureInfo } from './failure-info';
import type { RunContext, RunRef } from './run-context';
import { finishToolStep, startToolStep } from './tool-step';
import { additiveCalibration, summaryFailureDropsMessages } from './compat';

export type { RunContext, RunRef } from './run-context';
export { handleApprovals, handleEvents } from './approvals';
export { MODEL_CALL_ATTEMPTS, resolveAgent, resolveTools } from './activity-proxies';

/**
 * Drives one run of the agent loop to its end: asks the core for the next step and carries it
 * out (a model call, tool calls, waiting for approvals). Shared by one-shot runs and conversation
 * turns. Cancellation of the enclosing scope (time limit, a cancelled turn) propagates out.
 */
export async function runLoop(run: RunRef, ctx: RunContext): Promise<void> {
  for (let step = nextStep(run.state); step.type !== 'finish'; step = nextStep(run.state)) {
    // The run's observers (its search attributes) see each step begin.
    ctx.events.stepStarted(ctx.turn, step);
    if (step.type === 'call_model') {
      // The model call reads them from its worker's cache instead of querying the workflow.
      ctx.shared.share(run.state.messages, run.state.revision);
      // The agent the run speaks as (after a handoff, the one handed to): its settings, tool calling and output schema.
      const { name: agent, modelSettings: settings, toolCalling, output } = run.state.agent;
      // The activity finds the summary among the messages by its mark: its index need not travel.
      const { summary: _summary, ...range } = contextRange(run.state);
      // Memory by tokens: the activity counts what no call counted yet, and the run keeps the counts.
      const countFrom = firstUncounted(run.state);
      let call = ctx.events.startModelCall(ctx.turn, step.iteration);
      let reply: ModelReply;
      // The agent's model, then its fallbacks while a model cannot answer (see nextFallbackModel).
      for (let fallbacks = 0, model = settings?.model; ;) {
        try {
          reply = await callModel.executeWithOptions(
            modelCallOptions(run.state, modelCallSummary(step.iteration, step.final)),
            [
              {
                workflowId: ctx.workflowId,
                runId: ctx.runId,
                ...range,
                toolNames: step.toolNames,
                settings: fallbacks === 0 ? settings : { ...settings, model },
                toolCalling,
                // Only when set, so model-call inputs of plain runs keep their recorded shape.
                ...(agent ? { agent } : {}),
                ...(output ? { output } : {}),
                ...(ctx.stream ? { stream: { call } } : {}),
                ...(run.state.revision ? { revision: run.state.revision } : {}),
                ...(run.state.limits.modelCallTimeoutMs !== undefined
                  ? { timeoutMs: run.state.limits.modelCallTimeoutMs }
                  : {}),
                ...(step.wrapUp ? { instruction: WRAP_UP_INSTRUCTION } : {}),
                ...(run.state.limits.budget?.costUsd !== undefined ? { needsCost: true as const } : {}),
                ...(countFrom !== undefined ? { countFrom } : {}),
              },
            ],
          );
          break;
        } catch (err) {
          ctx.events.abandonModelCall(call);
          const failure = failureInfo(err);
          const next = isCancellation(err) ? undefined : nextFallbackModel(settings, fallbacks, failure.errorType);
          if (next === undefined) throw err;
          // The next model answers as a call of its own, so its text never mixes with the failed one's.
          call = ctx.events.startModelCall(ctx.turn, step.iteration);
          ctx.events.emit(ctx.turn, {
            type: 'model_fallback',
            call,
            from: model ?? 'the default model',
            to: next,
            error: `${failure.errorType}: ${failure.error}`,
          });
          fallbacks += 1;
          model = next;
        }
      }
      ctx.events.finishModelCall(call, shownText(reply, toolCalling), reply.attempt);
      run.state = applyModelReply(run.state, step, reply, { additiveCalibration: additiveCalibration(run.state) });
    } else if (step.type === 'compact') {
      await compact(run, step, ctx);
    } else if (step.type === 'check_guardrails') {
      await checkGuardrailStep(run, step, ctx);
    } else if (step.type === 'await_approval') {
      // With a timeout, people see when it applies (the calls keep their deadline).
      const timeoutMs = run.state.limits.approvalTimeoutMs;
      if (timeoutMs !== undefined)
        run.state = setApprovalDeadline(run.state, new Date(Date.now() + timeoutMs).toISOString());
      const pending = run.state.phase.kind === 'tools' ? pendingApprovals(run.state.phase.calls) : step.pending;
      for (const p of pending)
        ctx.events.emit(ctx.turn, {
          type: 'approval_requested',
          callId: p.callId,
          tool: p.name,
          arguments: p.arguments,
          summary: p.summary,
          ...(p.deadline ? { deadline: p.deadline } : {}),
        });
      await awaitApprovals(run, pending, ctx);
    } else {
      // Agents called as tools draw from what is left of this run's budget.
      const { budget, onBudget } = run.state.limits;
      const tools = startToolStep(
        run,
        step.calls,
        ctx,
        budget ? { budget: budgetLeft(budget, budgetSpent(run.state)), ...(onBudget ? { onBudget } : {}) } : undefined,
      );
      // Most replies call one tool, which needs no Promise.all (see runTool on what promises cost here).
      const outcomes =
        step.calls.length === 1
          ? [await tools.finished(step.calls[0], 0)]
          : await Promise.all(step.calls.map(tools.finished));
      finishToolStep(run, tools, outcomes, ctx);
    }
  }
}

/**
 * Summarises the oldest messages (an activity, retried and classified like a model call; its
 * result, the summary, is recorded once) and folds the summary in, announcing the compaction.
 */
async function compact(run: RunRef, step: Extract<NextStep, { type: 'compact' }>, ctx: RunContext): Promise<void> {
  ctx.shared.share(run.state.messages, run.state.revision);
  const { limits, agent } = run.state;
  const settings = limits.summaryModel ? { ...agent.modelSettings, model: limits.summaryModel } : agent.modelSettings;
  let summaryFailed: string | undefined;
  try {
    const summary = await summarizeMessages.executeWithOptions(
      modelCallOptions(run.state, `summarize messages ${step.from}-${step.to - 1}`),
      [
        {
          workflowId: ctx.workflowId,
          runId: ctx.runId,
          from: step.from,
          to: step.to,
          ...(settings ? { settings } : {}),
          ...(run.state.revision ? { revision: run.state.revision } : {}),
          ...(limits.modelCallTimeoutMs !== undefined ? { timeoutMs: limits.modelCallTimeoutMs } : {}),
        },
      ],
    );
    run.state = applySummary(run.state, step, summary);
  } catch (err) {
    // No summary: the messages are dropped instead of failing the run (runs before this patch failed).
    if (isCancellation(err) || !summaryFailureDropsMessages()) throw err;
    summaryFailed = failureInfo(err).error;
    run.state = applyDroppedMessages(run.state, step);
  }
  ctx.events.emit(ctx.turn, {
    type: 'compaction',
    from: step.from,
    to: step.to,
    tokensBefore: step.tokensBefore,
    tokensAfter: contextTokens(run.state),
    ...(summaryFailed !== undefined ? { summaryFailed } : {}),
  });
}

/**
 * Runs a step's guardrails (an activity; agents that judge run as runs of their own) and folds
 * the verdicts in. A guardrail that cannot decide (its activity failed after its retries) refuses:
 * a check that does not run must not let things through. Verdicts other than allow are events.
 */
async function checkGuardrailStep(run: RunRef, step: GuardrailStep, ctx: RunContext): Promise<void> {
  ctx.shared.share(run.state.messages, run.state.revision);
  let checks: GuardrailCheck[];
  try {
    checks = await checkGuardrails.executeWithOptions(guardrailOptions(step), [
      {
        workflowId: ctx.workflowId,
        runId: ctx.runId,
        kind: step.kind,
        names: step.names,
        ...(step.kind === 'tool' ? { calls: step.calls } : { messageIndex: step.messageIndex }),
        ...(run.state.revision ? { revision: run.state.revision } : {}),
        ...(run.state.agent.name ? { agent: run.state.agent.name } : {}),
      },
    ]);
  } catch (err) {
    if (isCancellation(err)) throw err;
    const { error } = failureInfo(err);
    checks = step.names.map((guardrail) => ({
      guardrail,
      kind: step.kind,
      verdict: { action: 'refuse' as const, reason: `the guardrail could not decide: ${error}` },
    }));
  }
  run.state = applyGuardrailChecks(run.state, step, checks);
  for (const c of checks) {
    if (c.verdict.action === 'allow') continue;
    const body = {
      guardrail: c.guardrail,
      kind: c.kind,
      reason: c.verdict.reason,
      ...(c.callId ? { callId: c.callId } : {}),
    };
    ctx.events.emit(
      ctx.turn,
      c.verdict.action === 'refuse'
        ? { type: 'guardrail_tripped', ...body }
        : { type: 'guardrail_intervened', action: c.verdict.action, ...body },
    );
  }
}

/** Guardrail checks: functions are quick, agents take a model call or a few; a lost worker is noticed by heartbeats. */
function guardrailOptions(step: GuardrailStep): ActivityOptions {
  return {
    startToCloseTimeout: '10m',
    heartbeatTimeout: HEARTBEAT_TIMEOUT,
    retry: { initialInterval: '1s', maximumInterval: '10s', maximumAttempts: 3 },
    summary: `guardrails ${step.names.join(', ')} on the ${step.kind === 'tool' ? 'tool calls' : step.kind}`,
  };
}

/** The text a reply shows a person: a ReAct step that calls a tool shows none (its text is the model's reasoning). */
function shownText(reply: ModelReply, toolCalling: ToolCallingMode | undefined): string {
  if (toolCalling === 'react' && reply.toolCalls.length > 0) return '';
  return reply.content ?? '';
}
