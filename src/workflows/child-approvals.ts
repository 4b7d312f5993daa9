import { getExternalWorkflowHandle, patched, setHandler, workflowInfo } from '@temporalio/workflow';
import type { EventLog, PendingApproval } from '../core';
import { childApprovalsSignal, type ChildApprovals } from '../common/definitions';

/**
 * Approvals across agents called as tools. A child run (an agent called as a tool) tells its
 * caller, by signal, every call it waits on (its own and, at any depth, its children's, each naming
 * its run's workflow id), whenever that list changes; the caller lists them with its own
 * (`pendingApprovals`, `status`) and announces them on its event stream, so a person watching the
 * top run sees and decides them there. Deciding goes to the run that asked: clients look the call
 * up in the caller's list (`decideApproval`), at any depth. A signal, not a query: a workflow
 * cannot query another, and the caller's list must be right while no client is asking.
 */
export class ApprovalRelay {
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
    // Runs recorded before the relay did not signal their caller: they replay without it.
    if (!patched('child-approvals-relay')) return;
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
        type: 'approval_requested',
        callId: p.callId,
        tool: p.name,
        arguments: p.arguments,
        summary: p.summary,
        ...(p.deadline ? { deadline: p.deadline } : {}),
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

function key(p: PendingApproval): string {
  return `${p.workflowId ?? ''}\u0000${p.callId}`;
}
