import { condition, setCurrentDetails, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  approvalProblem,
  approveExpired,
  decideApproval,
  expireApprovals,
  formatDuration,
  setApprovalDeadline,
  pendingApprovals,
  type EventLog,
  type PendingApproval,
  type PlannedToolCall,
  type RunState,
} from '../core';
import {
  decideApprovalUpdate,
  eventsQuery,
  pendingApprovalsQuery,
  textBatchSignal,
  toolRetriedSignal,
} from '../common/definitions';
import type { RunContext, RunRef } from './run-context';
import { ApprovalRelay } from './child-approvals';

/** The handlers of a workflow's event stream and approvals, and the wait for a decision. */

/**
 * Waits, durably and without holding a worker, until every pending call is decided. With an
 * approval timeout (a durable timer), what is still pending when it runs out is rejected (the
 * default), approved, or escalated: an `approval_escalated` event, `AgentStatus=escalated`, and a
 * second period of the same length, after which it is rejected. A run called as a tool tells its
 * caller what it waits on (see ApprovalRelay).
 */
export async function awaitApprovals(run: RunRef, pending: PendingApproval[], ctx: RunContext): Promise<void> {
  setCurrentDetails(approvalDetails(pending));
  ctx.approvals?.notifyParent();
  try {
    const decided = () => pendingApprovals(callsOf(run.state)).length === 0;
    const timeoutMs = run.state.limits.approvalTimeoutMs;
    if (timeoutMs === undefined) {
      await condition(decided);
      return;
    }
    if (await condition(decided, timeoutMs)) return;
    const onTimeout = run.state.limits.onApprovalTimeout ?? 'reject';
    const late = pendingApprovals(callsOf(run.state));
    if (onTimeout === 'escalate') {
      const deadline = new Date(Date.now() + timeoutMs).toISOString();
      run.state = setApprovalDeadline(run.state, deadline, true);
      for (const p of late) ctx.events.emit(ctx.turn, { type: 'approval_escalated', callId: p.callId, deadline });
      setCurrentDetails(approvalDetails(pendingApprovals(callsOf(run.state)), true));
      const self = workflowInfo().workflowId;
      ctx.approvals?.notifyParent({ escalated: late.map((p) => ({ callId: p.callId, deadline, workflowId: self })) });
      if (await condition(decided, timeoutMs)) return;
    }
    const still = pendingApprovals(callsOf(run.state));
    if (onTimeout === 'approve') {
      const reason = `approved when the approval timeout ran out (${formatDuration(timeoutMs)})`;
      for (const p of still)
        ctx.events.emit(ctx.turn, { type: 'approval_decided', callId: p.callId, approved: true, reason });
      run.state = approveExpired(run.state);
      notifyDecided(ctx, still, true, reason);
      return;
    }
    const reason =
      onTimeout === 'escalate'
        ? `no decision within the approval timeout, escalated once (${formatDuration(2 * timeoutMs)} in all)`
        : `no decision within the approval timeout (${timeoutMs} ms)`;
    for (const p of still)
      ctx.events.emit(ctx.turn, { type: 'approval_decided', callId: p.callId, approved: false, reason });
    run.state = expireApprovals(run.state, reason);
    notifyDecided(ctx, still, false, reason);
  } finally {
    setCurrentDetails('');
  }
}

/** Tells the caller (if any) that the timeout decided these calls. */
function notifyDecided(ctx: RunContext, calls: PendingApproval[], approved: boolean, reason: string): void {
  const workflowId = workflowInfo().workflowId;
  ctx.approvals?.notifyParent({ decided: calls.map((p) => ({ callId: p.callId, approved, reason, workflowId })) });
}

/** The Temporal UI's "current details": what a person is asked to decide, and how. */
function approvalDetails(pending: PendingApproval[], escalated = false): string {
  const lines = pending.map((p) => `- \`${p.callId}\`: ${p.summary}${p.deadline ? ` (decide by ${p.deadline})` : ''}`);
  const id = workflowInfo().workflowId;
  return [
    escalated ? '**Awaiting approval: escalated**' : '**Awaiting approval**',
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
export function handleEvents(events: EventLog, turn: () => number = () => 1): void {
  setHandler(eventsQuery, (request) => events.read(request));
  setHandler(textBatchSignal, (batch) => void events.applyTextBatch(batch));
  // A tool call tried again: said on the stream as it starts (the result says how many attempts it took).
  setHandler(toolRetriedSignal, ({ callId, name, attempt, reason }) => {
    events.emit(turn(), { type: 'tool_retried', id: callId, name, attempt, reason });
  });
}

/**
 * Registers the approval Update and query on a run that may be absent (a conversation between
 * turns); each decision is also an `approval_decided` event of the run's turn. The validator
 * rejects unknown call ids before anything reaches history. The query lists, after the run's own,
 * the calls agents it called wait on (see ApprovalRelay, which it returns).
 */
export function handleApprovals(
  current: () => { run: RunRef; turn: number } | undefined,
  events: EventLog,
  lastTurn: () => number = () => 1,
): ApprovalRelay {
  const own = () => {
    const active = current();
    return active
      ? { pending: pendingApprovals(callsOf(active.run.state)), agent: active.run.state.agent.name }
      : { pending: [] };
  };
  const relay = new ApprovalRelay(events, () => current()?.turn ?? lastTurn(), own);
  setHandler(pendingApprovalsQuery, () => [...own().pending, ...relay.fromChildren()]);
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
      relay.notifyParent({
        decided: [
          {
            callId: decision.callId,
            approved: decision.approve,
            ...(decision.reason ? { reason: decision.reason } : {}),
            workflowId: workflowInfo().workflowId,
          },
        ],
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
  return relay;
}
