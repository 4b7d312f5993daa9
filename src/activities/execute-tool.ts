import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { toolErrorText, type ToolOutcome } from '../core/messages/tool-results';
import type { ToolProgress, ToolRetry } from '../core/events/agent-events';
import { ToolError } from '../tools/tool-error';
import { ModelAsked, PersonAsked, type ToolContext } from '../tools/define-tool';
import type { ModelQuestion, ToolCallInput } from '../contracts/activity-interface';
import type { McpToolSource } from '../tools/mcp-client/mcp-tool-source';
import type { ToolRegistry } from '../tools/registry';
import { prepareToolCall, toolOutcomeOf } from '../tools/tool-call';
import type { BlobStore } from '../storage/blob-store';
import { ledgerOf, type AttemptLedger } from './attempt-ledger';
import { keepHeartbeating, recordForNextAttempt } from './heartbeat';
import type { CredentialStore } from '../tools/credential-store';
import { toolProgressSignal, toolRetriedSignal } from '../contracts/definitions';
import { traceToolCall } from '../telemetry/gen-ai';
import { turnAbortSignal } from './turn-abort';
import type { ModelGate } from './model-gate';
import { inRunScope } from './run-scope';
import { WorkspaceRefusedError, type WorkspaceHost } from '../workspace/workspace-host';
import { SandboxUnavailableError } from '../workspace/sandbox';

/**
 * Builds the tool-call activity: one call, dispatched by name. Mistakes the LLM can fix (unknown
 * tool, bad JSON, a schema violation) come back as data, without retries: the LLM reads the error
 * and tries again. A tool that throws is retried by Temporal under the tool's retry policy; the
 * workflow turns the final failure into an error message for the LLM. The tool's attempts count
 * its own failures only: an attempt whose worker was lost does not use one up (the workflow allows
 * for such losses on top, see `WORKER_LOSSES_PER_CALL`).
 */
export function createExecuteTool(deps: {
  registry: ToolRegistry;
  mcp?: McpToolSource;
  blobs: BlobStore;
  /** Tools' secrets per tenant (`ctx.credential`); none: every credential is undefined. */
  credentials?: CredentialStore;
  /** The model gate the model requests made inside a tool call (memory's embeddings) go through. */
  gate?: ModelGate;
  /** Runs' workspaces on this worker: a call in one is made in its committed state, and what it changed saved. */
  workspaces?: WorkspaceHost;
}) {
  // Images a tool returns are stored in `blobs`, and only their references recorded.
  const { registry, blobs } = deps;

  return async function executeTool(input: ToolCallInput): Promise<ToolOutcome> {
    // A memory tool's embeddings go through the model gate for the run's tenant.
    const outcome = await traceToolCall({ name: input.name, callId: input.toolCallId }, () =>
      inRunScope(deps.gate, input.tenant, () => run(input)),
    );
    // A local activity's marker records no input: the result names its call, so clients can find it.
    if (Context.current().info.isLocal) outcome.toolCallId = input.toolCallId;
    return outcome;
  };

  /**
   * A call in the run's workspace: made in its committed state (restored here first, whichever
   * worker ran the call before), and what it changed saved and committed with its result. A call
   * that fails saves nothing: its next attempt starts from the committed state again.
   */
  async function inWorkspace(
    input: ToolCallInput,
    workflowId: string,
    ctx: ToolContext,
    execute: (ctx: ToolContext) => Promise<unknown>,
  ): Promise<ToolOutcome> {
    if (!deps.workspaces) throw new ToolError('this worker keeps no workspaces');
    try {
      const run = { namespace: Context.current().info.namespace, workflowId };
      const { value, saved } = await deps.workspaces.use(run, input.workspace!, async (workspace) =>
        toolOutcomeOf(await execute({ ...ctx, workspace }), blobs),
      );
      return saved ? { ...value, workspace: saved } : value;
    } catch (e) {
      if (e instanceof WorkspaceRefusedError || e instanceof SandboxUnavailableError) throw new ToolError(e.message);
      throw e;
    }
  }

  async function run(input: ToolCallInput): Promise<ToolOutcome> {
    // An MCP tool on a worker that has not listed its server yet (it just started, say).
    if (deps.mcp && !registry.has(input.name)) await deps.mcp.ensureTools([input.name]);
    const prepared = prepareToolCall(registry, input.name, input.arguments);
    if (!prepared.ok) return prepared.outcome;

    // Held, not looked up at each use: a tool's callbacks (an MCP server's progress over stdio,
    // say) may run outside this activity's async context.
    const activity = Context.current();
    const info = activity.info;
    // Always set for activities scheduled by a workflow; the SDK types also cover standalone activities.
    const { workflowId, runId } = info.workflowExecution ?? { workflowId: '', runId: '' };
    // What the tool saved with `checkpoint` in an earlier attempt, and what this one saves.
    const ledger = ledgerOf(info.heartbeatDetails);
    // A call again after its tool asked a person starts from the progress it asked with.
    let progress = ledger.toolProgress ?? input.answer?.progress;
    // Aborted when Temporal cancels the call, or at once when its turn is stopped in this process (see turn-abort.ts).
    const turn = turnAbortSignal(workflowId, activity.cancellationSignal);
    const ctx: ToolContext = {
      // A conversation is one workflow id across continue-as-new runs: that id is the memory id.
      conversationId: workflowId,
      workflowId,
      runId,
      ...(input.tenant !== undefined ? { tenant: input.tenant } : {}),
      ...(input.user !== undefined ? { user: input.user } : {}),
      ...(input.delegatedBy?.length ? { delegatedBy: input.delegatedBy } : {}),
      toolCallId: input.toolCallId,
      // The activity id is fixed per scheduled call and survives retries; the run id keeps it unique
      // across resets. Local activities are numbered apart from activities, hence their prefix.
      idempotencyKey: `${workflowId}/${runId}/${info.isLocal ? 'local-' : ''}${info.activityId}`,
      attempt: info.attempt,
      signal: turn.signal,
      ...(progress !== undefined ? { resumeFrom: progress } : {}),
      checkpoint: (next) => {
        progress = next;
        if (!info.isLocal) activity.heartbeat(carried());
      },
      credential: (name) => deps.credentials?.get(name, input.tenant) ?? Promise.resolve(undefined),
      reportProgress: (report) => {
        if (info.isLocal) return;
        activity.heartbeat(carried());
        progressSignal.send(report);
      },
      askPerson: (question, asked = progress, form) => {
        throw new PersonAsked(String(question), asked, form);
      },
      askModel: (question, asked = progress) => {
        throw new ModelAsked(question, asked);
      },
      ...(input.answer
        ? {
            answer: {
              approved: input.answer.approved,
              ...(input.answer.text ? { text: input.answer.text } : {}),
              ...(input.answer.model ? { model: input.answer.model } : {}),
            },
          }
        : {}),
    };
    // The tool's own failures so far. Attempts that ended because the worker was lost (a crash,
    // a kill, a cut connection) are not among them: those must not use up the tool's attempts.
    const failures = ledger.toolFailures ?? 0;
    // The attempts before this one that did not end in a failure of the tool: their worker was lost.
    const workerLosses = info.attempt - 1 - failures;
    if (!info.isLocal && info.attempt > 1)
      await announceRetry(
        input,
        info.attempt,
        ledger.lastToolFailure === info.attempt - 1 ? 'tool failed' : 'worker lost',
      );
    function carried(): AttemptLedger {
      return {
        toolFailures: failures,
        ...(ledger.lastToolFailure ? { lastToolFailure: ledger.lastToolFailure } : {}),
        ...(progress !== undefined ? { toolProgress: progress } : {}),
      };
    }
    const progressSignal = throttledProgress(input);
    // A local activity has no heartbeats: its workflow task stands for it.
    const stop = info.isLocal ? () => undefined : keepHeartbeating(undefined, carried);
    try {
      const outcome = input.workspace
        ? await inWorkspace(input, workflowId, ctx, (c) => registry.execute(input.name, prepared.args, c))
        : await toolOutcomeOf(await registry.execute(input.name, prepared.args, ctx), blobs);
      // Its side effects may have happened in each attempt: the result says how many there were.
      if (info.attempt > 1)
        return { ...outcome, attempts: info.attempt, ...(workerLosses > 0 ? { workerLosses } : {}) };
      return outcome;
    } catch (err) {
      return thrownOutcome(err, { input, attempt: info.attempt, isLocal: info.isLocal, failures, progress, registry });
    } finally {
      stop();
      progressSignal.stop();
      turn.done();
    }
  }
}

/**
 * What a tool's throw means: a `ToolError` is an error result the LLM reads; a question to a
 * person or to the model goes back to the workflow as data; anything else fails the attempt
 * (recording the tool's own failure for the next attempt), for good on the tool's last attempt.
 */
function thrownOutcome(
  err: unknown,
  at: {
    input: ToolCallInput;
    attempt: number;
    isLocal: boolean;
    failures: number;
    progress: AttemptLedger['toolProgress'];
    registry: ToolRegistry;
  },
): ToolOutcome {
  if (err instanceof ToolError) return { result: toolErrorText(err.message), error: true };
  // Plain JSON across the edge: the question, and where the tool stands.
  if (err instanceof PersonAsked)
    return {
      result: '',
      error: false,
      asked: {
        question: err.question,
        ...jsonProgress(err.progress),
        ...(err.form
          ? { form: JSON.parse(JSON.stringify(err.form)) as NonNullable<ToolOutcome['asked']>['form'] }
          : {}),
      },
    };
  if (err instanceof ModelAsked)
    return {
      result: '',
      error: false,
      asked: { sample: modelQuestion(err.question), ...jsonProgress(err.progress) },
    };
  if (!at.isLocal)
    recordForNextAttempt({
      toolFailures: at.failures + 1,
      lastToolFailure: at.attempt,
      ...(at.progress !== undefined ? { toolProgress: at.progress } : {}),
    });
  // The tool's last attempt: Temporal's own count also holds attempts of lost workers, so we say when to stop.
  const attempts = at.registry.info(at.input.name).retry.maximumAttempts;
  const last = !at.isLocal && attempts > 0 && at.failures + 1 >= attempts;
  if (err instanceof ApplicationFailure) {
    if (!last || err.nonRetryable) throw err;
    throw ApplicationFailure.create({
      message: err.message,
      type: err.type ?? undefined,
      details: err.details ?? undefined,
      nonRetryable: true,
      cause: err,
    });
  }
  const message = err instanceof Error ? err.message : String(err);
  throw ApplicationFailure.create({
    message: `${at.input.name} failed: ${message}`,
    type: 'Tool.ExecutionError',
    nonRetryable: last,
    cause: err instanceof Error ? err : undefined,
  });
}

/**
 * Sends a tool's progress to its workflow as the `toolProgress` signal: the first at once, then at
 * most one a second (the latest), so a chatty tool cannot flood the run's history. Best effort.
 */
function throttledProgress(input: ToolCallInput): {
  send(report: { progress: number; total?: number; message?: string }): void;
  stop(): void;
} {
  const ctx = Context.current();
  const execution = ctx.info.workflowExecution;
  let last = 0;
  let waiting: { progress: number; total?: number; message?: string } | undefined;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    if (!waiting || !execution) return;
    const report = waiting;
    waiting = undefined;
    last = Date.now();
    const progress: ToolProgress = {
      callId: input.toolCallId,
      name: input.name,
      progress: Number(report.progress) || 0,
      ...(typeof report.total === 'number' ? { total: report.total } : {}),
      ...(typeof report.message === 'string' && report.message ? { message: report.message } : {}),
    };
    ctx.client.workflow
      .getHandle(execution.workflowId, execution.runId)
      .signal(toolProgressSignal, progress)
      .catch((err: unknown) =>
        log.warn("could not report a tool's progress", { tool: input.name, error: String(err) }),
      );
  };
  return {
    send(report) {
      waiting = report;
      if (timer) return;
      timer = setTimeout(flush, Math.max(0, last + PROGRESS_EVERY_MS - Date.now()));
    },
    stop() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

/** How often, at most, a call's progress reaches its run. */
const PROGRESS_EVERY_MS = 1000;

/**
 * Tells the call's workflow that this attempt is a retry (a `tool_retried` event on its stream),
 * so whoever owns the tool's side effects knows they may have happened before. Best effort: a
 * signal that cannot be sent must not fail the call.
 */
async function announceRetry(input: ToolCallInput, attempt: number, reason: ToolRetry['reason']): Promise<void> {
  const ctx = Context.current();
  const execution = ctx.info.workflowExecution;
  if (!execution) return;
  try {
    await ctx.client.workflow
      .getHandle(execution.workflowId, execution.runId)
      .signal(toolRetriedSignal, { callId: input.toolCallId, name: input.name, attempt, reason });
  } catch (err) {
    log.warn('could not announce a retried tool call', { tool: input.name, error: String(err) });
  }
}

/** The progress a tool asked with, as plain JSON (absent when it has none or it is not JSON). */
function jsonProgress(progress: unknown): { progress?: unknown } {
  if (progress === undefined) return {};
  try {
    return { progress: JSON.parse(JSON.stringify(progress)) as unknown };
  } catch {
    return {};
  }
}

/** What a tool asks the model, as plain JSON of the contract's shape (text only, bounded). */
function modelQuestion(q: ModelQuestion): ModelQuestion {
  const messages = (q.messages ?? []).slice(-MAX_SAMPLE_MESSAGES).map((m) => ({
    role: m.role === 'assistant' ? ('assistant' as const) : ('user' as const),
    content: String(m.content ?? '').slice(0, MAX_SAMPLE_CHARS),
  }));
  return {
    messages,
    ...(q.system ? { system: String(q.system).slice(0, MAX_SAMPLE_CHARS) } : {}),
    ...(typeof q.maxTokens === 'number' ? { maxTokens: q.maxTokens } : {}),
  };
}

/** A tool's question to the model stays small in the history: its last messages, each bounded. */
const MAX_SAMPLE_MESSAGES = 20;
const MAX_SAMPLE_CHARS = 20_000;
