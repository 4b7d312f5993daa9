import {
  condition,
  getExternalWorkflowHandle,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  approvalProblem,
  approveExpired,
  decideApproval,
  expireApprovals,
  setApprovalDeadline,
  pendingApprovals,
} from '../core/tool-calls/approvals';
import { formatDuration } from '../core/time/duration';
import type { EventLog } from '../core/events/event-log';
import type { NextStep, PendingApproval, PlannedToolCall, RunState } from '../core/state/run-state';
import {
  childApprovalsSignal,
  decideApprovalUpdate,
  pendingApprovalsQuery,
  type ChildApprovals,
} from '../contracts/definitions';
import type { ApprovalNotifier, RunContext, RunRef } from './run-context';
import { versionDetails } from './details';

/** The handlers of a workflow's event stream and approvals, and the wait for a decision. */

/**
 * Waits, durably and without holding a worker, until every pending call is decided. With an
 * approval timeout (a durable timer), what is still pending when it runs out is rejected (the
 * default), approved, or escalated: an `approval_escalated` event, `AgentStatus=escalated`, and a
 * second period of the same length, after which it is rejected. A run called as a tool tells its
 * caller what it waits on (see ApprovalRelay).
 */
export async function awaitApprovals(run: RunRef, pending: PendingApproval[], ctx: RunContext): Promise<void> {
  setCurrentDetails(withVersion(approvalDetails(pending), run.state));
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
      setCurrentDetails(withVersion(approvalDetails(pendingApprovals(callsOf(run.state)), true), run.state));
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
    setCurrentDetails(versionDetails(run.state));
  }
}

/** Tells the caller (if any) that the timeout decided these calls. */
function notifyDecided(ctx: RunContext, calls: PendingApproval[], approved: boolean, reason: string): void {
  const workflowId = workflowInfo().workflowId;
  ctx.approvals?.notifyParent({ decided: calls.map((p) => ({ callId: p.callId, approved, reason, workflowId })) });
}

function withVersion(details: string, state: RunState): string {
  const version = versionDetails(state);
  return version ? `${details}\n\n${version}` : details;
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

/**
 * Approvals across agents called as tools. A child run (an agent called as a tool) tells its
 * caller, by signal, every call it waits on (its own and, at any depth, its children's, each naming
 * its run's workflow id), whenever that list changes; the caller lists them with its own
 * (`pendingApprovals`, `status`) and announces them on its event stream, so a person watching the
 * top run sees and decides them there. Deciding goes to the run that asked: clients look the call
 * up in the caller's list (`decideApproval`), at any depth. A signal, not a query: a workflow
 * cannot query another, and the caller's list must be right while no client is asking.
 */
export class ApprovalRelay implements ApprovalNotifier {
  private readonly children = new Map<string, PendingApproval[]>();
  private lastSent = '[]';
  private readonly parent = workflowInfo().parent;

  constructor(
    private readonly events: EventLog,
    private readonly turn: () => number,
    /** The run's own pending approvals, and the agent it speaks as. */
    private readonly own: () => { pending: PendingApproval[]; agent?: string },
  ) {
    setHandler(childApprovalsSignal, (message) => this.receive(message));
  }

  /** The calls waiting in agents this run called (at any depth), each naming its run. */
  fromChildren(): PendingApproval[] {
    return [...this.children.values()].flat();
  }

  /**
   * Tells the caller (when this run is an agent called as a tool) what is pending here now, with
   * what was decided or escalated since; nothing when the list did not change and nothing happened.
   */
  notifyParent(changes: Pick<ChildApprovals, 'decided' | 'escalated'> = {}): void {
    if (!this.parent) return;
    const pending = [...this.own().pending.map((p) => this.named(p)), ...this.fromChildren()];
    const text = JSON.stringify(pending);
    if (text === this.lastSent && !changes.decided?.length && !changes.escalated?.length) return;
    this.lastSent = text;
    const { agent } = this.own();
    const message: ChildApprovals = { workflowId: workflowInfo().workflowId, pending, ...changes };
    if (agent) message.agent = agent;
    // The caller may have ended meanwhile (cancelled): nothing is left to tell.
    getExternalWorkflowHandle(this.parent.workflowId, this.parent.runId)
      .signal(childApprovalsSignal, message)
      .catch(() => undefined);
  }

  /** A run of ours waits on the approvals of an agent it called: list them, announce them, pass them up. */
  private receive(message: ChildApprovals): void {
    const before = new Set((this.children.get(message.workflowId) ?? []).map(key));
    const turn = this.turn();
    for (const p of message.pending) {
      if (before.has(key(p))) continue;
      this.events.emit(turn, {
        ...approvalRequested(p),
        workflowId: p.workflowId ?? message.workflowId,
        ...((p.agent ?? message.agent) ? { agent: p.agent ?? message.agent } : {}),
      });
    }
    for (const d of message.decided ?? [])
      this.events.emit(turn, {
        type: 'approval_decided',
        callId: d.callId,
        approved: d.approved,
        ...(d.reason ? { reason: d.reason } : {}),
        workflowId: d.workflowId,
      });
    for (const e of message.escalated ?? [])
      this.events.emit(turn, {
        type: 'approval_escalated',
        callId: e.callId,
        deadline: e.deadline,
        workflowId: e.workflowId,
      });
    if (message.pending.length > 0) this.children.set(message.workflowId, message.pending);
    else this.children.delete(message.workflowId);
    this.notifyParent({ decided: message.decided, escalated: message.escalated });
  }

  /** A pending call of this run, named as its callers see it. */
  private named(p: PendingApproval): PendingApproval {
    const agent = this.own().agent;
    return { ...p, workflowId: workflowInfo().workflowId, ...(agent ? { agent } : {}) };
  }
}

/** The `approval_requested` event of a pending call. */
function approvalRequested(p: PendingApproval) {
  return {
    type: 'approval_requested' as const,
    callId: p.callId,
    tool: p.name,
    arguments: p.arguments,
    summary: p.summary,
    ...(p.deadline ? { deadline: p.deadline } : {}),
  };
}

function key(p: PendingApproval): string {
  return `${p.workflowId ?? ''}\u0000${p.callId}`;
}

/**
 * Asks for the pending approvals (with their deadline, under an approval timeout) and waits,
 * durably, until they are decided; the decisions arrive through the approval Update's handler.
 */
export async function approvalStep(
  run: RunRef,
  step: Extract<NextStep, { type: 'await_approval' }>,
  ctx: RunContext,
): Promise<RunState> {
  // With a timeout, people see when it applies (the calls keep their deadline).
  const timeoutMs = run.state.limits.approvalTimeoutMs;
  if (timeoutMs !== undefined)
    run.state = setApprovalDeadline(run.state, new Date(Date.now() + timeoutMs).toISOString());
  const pending = run.state.phase.kind === 'tools' ? pendingApprovals(run.state.phase.calls) : step.pending;
  for (const p of pending) ctx.events.emit(ctx.turn, approvalRequested(p));
  await awaitApprovals(run, pending, ctx);
  return run.state;
}
