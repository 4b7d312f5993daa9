import { condition, setCurrentDetails, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  approvalProblem,
  decideApproval,
  expireApprovals,
  pendingApprovals,
  type EventLog,
  type PendingApproval,
  type PlannedToolCall,
  type RunState,
} from '../core';
import { decideApprovalUpdate, eventsQuery, pendingApprovalsQuery, textBatchSignal } from '../common/definitions';
import type { RunContext, RunRef } from './run-context';

/** The handlers of a workflow's event stream and approvals, and the wait for a decision. */

/**
 * Waits, durably and without holding a worker, until every pending call is decided; the approval
 * timeout (a durable timer) rejects whatever is still pending.
 */
export async function awaitApprovals(run: RunRef, pending: PendingApproval[], ctx: RunContext): Promise<void> {
  setCurrentDetails(approvalDetails(pending));
  try {
    const decided = () => pendingApprovals(callsOf(run.state)).length === 0;
    const timeoutMs = run.state.limits.approvalTimeoutMs;
    if (timeoutMs === undefined) await condition(decided);
    else if (!(await condition(decided, timeoutMs))) {
      const reason = `no decision within the approval timeout (${timeoutMs} ms)`;
      for (const p of pendingApprovals(callsOf(run.state)))
        ctx.events.emit(ctx.turn, { type: 'approval_decided', callId: p.callId, approved: false, reason });
      run.state = expireApprovals(run.state, reason);
    }
  } finally {
    setCurrentDetails('');
  }
}

/** The Temporal UI's "current details": what a person is asked to decide, and how. */
function approvalDetails(pending: PendingApproval[]): string {
  const lines = pending.map((p) => `- \`${p.callId}\`: ${p.summary}`);
  const id = workflowInfo().workflowId;
  return [
    '**Awaiting approval**',
    ...lines,
    '',
    `Decide with \`npx durable-agents approve|reject ${id} <callId>\`, the HTTP API (\`POST .../${id}/approvals/<callId>\`) or the \`decideApproval\` update.`,
  ].join('\n');
}

function callsOf(state: RunState): PlannedToolCall[] {
  return state.phase.kind === 'tools' ? state.phase.calls : [];
}

/**
 * Registers the `events` query and the text-batch signal of a workflow's event stream. The signal
 * cannot be refused; the log itself drops batches of calls and attempts that are over.
 */
export function handleEvents(events: EventLog): void {
  setHandler(eventsQuery, (request) => events.read(request));
  setHandler(textBatchSignal, (batch) => void events.applyTextBatch(batch));
}

/**
 * Registers the approval Update and query on a run that may be absent (a conversation between
 * turns); each decision is also an `approval_decided` event of the run's turn. The validator
 * rejects unknown call ids before anything reaches history.
 */
export function handleApprovals(current: () => { run: RunRef; turn: number } | undefined, events: EventLog): void {
  setHandler(pendingApprovalsQuery, () => {
    const active = current();
    return active ? pendingApprovals(callsOf(active.run.state)) : [];
  });
  setHandler(
    decideApprovalUpdate,
    (decision) => {
      const { run, turn } = current()!;
      run.state = decideApproval(run.state, decision);
      events.emit(turn, {
        type: 'approval_decided',
        callId: decision.callId,
        approved: decision.approve,
        ...(decision.reason ? { reason: decision.reason } : {}),
      });
      return {
        callId: decision.callId,
        approved: decision.approve,
        stillPending: pendingApprovals(callsOf(run.state)).length,
      };
    },
    {
      validator: (decision) => {
        const problem = approvalProblem(current()?.run.state, decision);
        if (problem) throw new Error(problem);
      },
    },
  );
}
