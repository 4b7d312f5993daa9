import type { Client } from '@temporalio/client';
import type { AgentState } from '../core/state/run-results';
import type { PendingApproval } from '../core/state/run-state';
import { conversationStatusQuery, statusQuery } from '../contracts/definitions';
import { failingWorkflowTask } from '../client/workflow-task-failure';
import { hintCommand } from './command-name';

/** A model call that failed and is waiting for (or running) its next attempt. */
export interface ModelRetry {
  /** Which model call of the run or turn (1-based). */
  call: number;
  /** The attempt that failed. */
  attempt: number;
  maxAttempts: number;
  error: string;
  /** Until the next attempt starts; 0 when it is running. */
  retryInMs: number;
}

/** One look at a running run or conversation turn. */
export interface Progress {
  state: AgentState;
  pendingToolCalls: Array<{ id: string; name: string; arguments: Record<string, unknown> }>;
  pendingApprovals: PendingApproval[];
  /** The model call in flight, while the state is `thinking`. */
  modelCall?: number;
  retry?: ModelRetry;
}

/**
 * Reads what a run or conversation is doing: its status query, plus the pending model-call
 * activity from `describe`, whose last failure and next attempt time Temporal keeps while it
 * retries. Without this a client waits in silence while the LLM is down.
 */
export async function readProgress(
  client: Client,
  workflowId: string,
  kind: 'run' | 'conversation',
): Promise<Progress> {
  const handle = client.workflow.getHandle(workflowId);
  const [status, description] = await Promise.all([
    kind === 'run' ? handle.query(statusQuery) : handle.query(conversationStatusQuery),
    handle.describe(),
  ]);
  const turn = 'currentTurn' in status ? status.currentTurn : undefined;
  const iteration = 'iteration' in status ? status.iteration : turn?.iteration;
  const progress: Progress = {
    state: status.state,
    pendingToolCalls: 'pendingToolCalls' in status ? status.pendingToolCalls : (turn?.pendingToolCalls ?? []),
    pendingApprovals: status.pendingApprovals,
  };
  if (status.state === 'thinking' && iteration !== undefined) progress.modelCall = iteration + 1;
  const pending = description.raw.pendingActivities?.find((a) => a.activityType?.name === 'callModel' && a.lastFailure);
  if (pending && progress.modelCall !== undefined) {
    const next = pending.nextAttemptScheduleTime;
    const nextMs = next ? Number(next.seconds ?? 0) * 1000 + Math.floor((next.nanos ?? 0) / 1e6) : 0;
    progress.retry = {
      call: progress.modelCall,
      attempt: (pending.attempt ?? 2) - 1,
      maxAttempts: pending.maximumAttempts ?? 0,
      error: pending.lastFailure?.message ?? 'unknown error',
      retryInMs: Math.max(0, nextMs - Date.now()),
    };
  }
  return progress;
}

/** `model call 1 failed: <error> (attempt 3/8, retrying in 4 s)`. */
export function retryText(r: ModelRetry): string {
  const of = r.maxAttempts > 0 ? `${r.attempt}/${r.maxAttempts}` : String(r.attempt);
  const when = r.retryInMs >= 500 ? `retrying in ${Math.round(r.retryInMs / 1000)} s` : 'retrying now';
  return `model call ${r.call} failed: ${r.error} (attempt ${of}, ${when})`;
}

/** What a person runs to decide a pending approval. */
export function approvalHint(workflowId: string, p: PendingApproval): string[] {
  const who = p.agent ? ` (asked by agent ${p.agent}, run ${p.workflowId})` : '';
  const by = p.deadline ? `${p.escalated ? ' escalated;' : ''} decide by ${p.deadline}` : '';
  return [
    `awaiting approval: ${p.summary}  [call ${p.callId}]${who}${by}`,
    `  approve: ${hintCommand()} approve ${workflowId} ${p.callId}`,
    `  reject:  ${hintCommand()} reject ${workflowId} ${p.callId} --reason "..."`,
  ];
}

/**
 * Polls {@link readProgress} every `intervalMs` and reports what is new: each failed model-call
 * attempt once, each pending approval once, and why the workers fail the workflow's tasks. Stops when the returned function is called. Errors
 * (no worker yet to answer the query, a brief outage) are skipped: this is only a display.
 */
export function watchProgress(
  client: Client,
  workflowId: string,
  kind: 'run' | 'conversation',
  show: { retry(r: ModelRetry): void; approval?(p: PendingApproval): void; failing?(reason: string): void },
  intervalMs = 1_000,
): () => void {
  let stopped = false;
  const seen = new Set<string>();
  // Workers that keep failing the workflow's tasks answer no query either (the loop below then
  // waits on it): a loop of its own asks the history why, every other interval.
  if (show.failing) {
    void (async () => {
      while (!stopped) {
        await new Promise((r) => setTimeout(r, 2 * intervalMs));
        const reason = stopped ? undefined : await failingWorkflowTask(client, workflowId).catch(() => undefined);
        if (!reason || stopped || seen.has(`failing:${reason}`)) continue;
        seen.add(`failing:${reason}`);
        show.failing!(reason);
      }
    })();
  }
  void (async () => {
    while (!stopped) {
      await new Promise((r) => setTimeout(r, intervalMs));
      if (stopped) break;
      const progress = await readProgress(client, workflowId, kind).catch(() => undefined);
      if (!progress || stopped) continue;
      if (progress.retry && !seen.has(`retry:${progress.retry.call}:${progress.retry.attempt}`)) {
        seen.add(`retry:${progress.retry.call}:${progress.retry.attempt}`);
        show.retry(progress.retry);
      }
      for (const p of progress.pendingApprovals) {
        if (!show.approval || seen.has(`approval:${p.callId}`)) continue;
        seen.add(`approval:${p.callId}`);
        show.approval(p);
      }
    }
  })();
  return () => {
    stopped = true;
  };
}
