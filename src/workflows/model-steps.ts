import { isCancellation, type ActivityOptions } from '@temporalio/workflow';
import { applyDroppedMessages, applySummary, contextTokens } from '../core/context/run-context';
import { applyGuardrailChecks } from '../core/guardrails/guardrails';
import { applyModelReply, stopForTenantBudget } from '../core/run/agent-loop';
import { modelCallInput } from '../core/run/model-call-input';
import { modelCallSummary } from '../core/context/summaries';
import { modelCallTimeoutMs } from '../core/run/run-input';
import { nextFallbackModel } from '../core/run/model-fallback';
import type { TenantBudgetReport } from '../core/fleet/tenant-ledger';
import type { GuardrailCheck, GuardrailStep } from '../core/state/guardrail-types';
import type { ModelReply } from '../core/messages/model-reply';
import type { NextStep, RunState } from '../core/state/run-state';
import type { ToolCallingMode } from '../core/state/run-options';
import {
  callModel,
  checkGuardrails,
  HEARTBEAT_TIMEOUT,
  MODEL_CALL_ATTEMPTS,
  summarizeMessages,
} from './activity-proxies';
import { failureDetails, failureInfo } from './failure-info';
import type { RunContext } from './run-context';

/**
 * The steps a model carries out: a model call, a compaction (a summary), a guardrail check. Each
 * takes the run's state and returns the next one; the loop keeps it.
 */

/**
 * Asks the model (a model-call activity, its input built by the core's `modelCallInput`), falling
 * back to the agent's next model while one cannot answer, and folds the reply in.
 */
export async function modelStep(
  state: RunState,
  step: Extract<NextStep, { type: 'call_model' }>,
  ctx: RunContext,
): Promise<RunState> {
  const { modelSettings: settings, toolCalling } = state.agent;
  let call = ctx.events.startModelCall(ctx.turn, step.iteration);
  let reply: ModelReply;
  // The agent's model, then its fallbacks while a model cannot answer (see nextFallbackModel).
  for (let fallbacks = 0, model = settings?.model; ;) {
    try {
      const site = {
        workflowId: ctx.workflowId,
        runId: ctx.runId,
        ...(ctx.stream ? { streamCall: call } : {}),
        ...(ctx.tenant !== undefined ? { tenant: ctx.tenant } : {}),
      };
      reply = await callModel.executeWithOptions(
        modelCallOptions(state, modelCallSummary(step.iteration, step.final), ctx.priority),
        [modelCallInput(state, step, fallbacks === 0 ? site : { ...site, model })],
      );
      break;
    } catch (err) {
      const shown = ctx.events.abandonModelCall(call);
      if (isCancellation(err) && shown) ctx.stopped?.(shown);
      const failure = failureInfo(err);
      // The tenant's ledger refused the call: its budget for the period is spent.
      if (failure.errorType === 'Budget.TenantExceeded') {
        const report = failureDetails(err) as TenantBudgetReport | undefined;
        if (report) return stopForTenantBudget(state, report);
      }
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
  const thought = reply.reasoning
    ?.map((r) => r.text)
    .filter(Boolean)
    .join('\n\n');
  if (thought) ctx.events.emit(ctx.turn, { type: 'reasoning', call, text: thought });
  return applyModelReply(state, step, reply);
}

/**
 * Summarises the oldest messages (an activity, retried and classified like a model call; its
 * result, the summary, is recorded once) and folds the summary in, announcing the compaction.
 * A summary that cannot be written drops the messages instead: the run goes on.
 */
export async function compactStep(
  state: RunState,
  step: Extract<NextStep, { type: 'compact' }>,
  ctx: RunContext,
): Promise<RunState> {
  const { limits, agent } = state;
  const settings = limits.summaryModel ? { ...agent.modelSettings, model: limits.summaryModel } : agent.modelSettings;
  let next: RunState;
  let summaryFailed: string | undefined;
  try {
    const summary = await summarizeMessages.executeWithOptions(
      modelCallOptions(state, `summarize messages ${step.from}-${step.to - 1}`, ctx.priority),
      [
        {
          workflowId: ctx.workflowId,
          runId: ctx.runId,
          from: step.from,
          to: step.to,
          ...(settings ? { settings } : {}),
          ...(ctx.tenant !== undefined ? { tenant: ctx.tenant } : {}),
          ...(state.revision ? { revision: state.revision } : {}),
          ...(limits.modelCallTimeoutMs !== undefined ? { timeoutMs: limits.modelCallTimeoutMs } : {}),
        },
      ],
    );
    next = applySummary(state, step, summary);
  } catch (err) {
    // No summary: the messages are dropped instead of failing the run.
    if (isCancellation(err)) throw err;
    summaryFailed = failureInfo(err).error;
    next = applyDroppedMessages(state, step);
  }
  ctx.events.emit(ctx.turn, {
    type: 'compaction',
    from: step.from,
    to: step.to,
    tokensBefore: step.tokensBefore,
    tokensAfter: contextTokens(next),
    ...(summaryFailed !== undefined ? { summaryFailed } : {}),
  });
  return next;
}

/**
 * Runs a step's guardrails (an activity; agents that judge run as runs of their own) and folds
 * the verdicts in. A guardrail that cannot decide (its activity failed after its retries) refuses:
 * a check that does not run must not let things through. Verdicts other than allow are events.
 */
export async function guardrailStep(state: RunState, step: GuardrailStep, ctx: RunContext): Promise<RunState> {
  ctx.shared.share(state.messages, state.revision);
  let checks: GuardrailCheck[];
  try {
    checks = await checkGuardrails.executeWithOptions(guardrailOptions(step), [
      {
        workflowId: ctx.workflowId,
        runId: ctx.runId,
        kind: step.kind,
        names: step.names,
        ...(step.kind === 'tool' ? { calls: step.calls } : { messageIndex: step.messageIndex }),
        ...(state.revision ? { revision: state.revision } : {}),
        ...(state.agent.name ? { agent: state.agent.name } : {}),
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
  const next = applyGuardrailChecks(state, step, checks);
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
  return next;
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

/**
 * Model calls: LLMs can take minutes, and 429/5xx/connection failures are worth retrying with
 * back-off. Two bounds end a call that cannot succeed: at most 8 attempts, and the run's
 * `modelCallTimeout` (default 5 minutes) of time spent waiting for the model, all attempts
 * together, which the activity counts (see `ModelTimeBudget`), so a hung LLM cannot hold a run
 * for 8 × the request timeout. Not a schedule-to-close timeout, which counts wall-clock time: an
 * outage of the Temporal server used it up, and every run in flight failed when the server came
 * back. Each attempt is bounded by its heartbeats (a lost worker) and start-to-close.
 */
export function modelCallOptions(state: RunState, summary: string, priority?: number): ActivityOptions {
  return {
    // The run's (or its agent's) priority key over the one it started with; its tenant's fairness key is inherited.
    ...(priority !== undefined ? { priority: { priorityKey: priority } } : {}),
    startToCloseTimeout: Math.max(FIVE_MINUTES, modelCallTimeoutMs(state.limits)),
    heartbeatTimeout: HEARTBEAT_TIMEOUT,
    retry: {
      initialInterval: '1s',
      backoffCoefficient: 2,
      maximumInterval: '30s',
      maximumAttempts: MODEL_CALL_ATTEMPTS,
    },
    summary,
  };
}

const FIVE_MINUTES = 5 * 60_000;
