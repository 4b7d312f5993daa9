import type { ApprovalState, PendingApproval, PlannedToolCall, RunState } from '../state/run-state';
import { toolCallSummary } from '../context/summaries';
import { toolErrorText } from '../messages/tool-results';
import type { ToolInfo } from '../messages/tool-info';

/** A human's decision on a pending tool call (the approve/reject Update's argument). */
export interface ApprovalDecision {
  callId: string;
  approve: boolean;
  /** Why it was rejected; the LLM reads it as the tool's result. */
  reason?: string;
}

/**
 * Human approval of tool calls. A call to a tool that needs approval is planned as `pending`; the
 * run then waits (durably, holding no worker) until a person approves or rejects it by call id.
 * A rejection never runs the tool: its reason goes back to the LLM as the tool's result.
 */

/** The initial approval state for a call to `tool`, or undefined when the tool needs none. */
export function approvalOf(tool: ToolInfo): ApprovalState | undefined {
  return tool.needsApproval ? { status: 'pending' } : undefined;
}

/** The calls still waiting for a decision. */
export function pendingApprovals(calls: readonly PlannedToolCall[]): PendingApproval[] {
  return calls
    .filter((c) => c.approval?.status === 'pending')
    .map((c) => {
      const question = c.approval?.status === 'pending' ? c.approval.question : undefined;
      const pending: PendingApproval = {
        callId: c.call.id,
        name: c.call.function.name,
        arguments: c.arguments,
        summary: question ?? toolCallSummary(c.call.function.name, c.arguments),
        ...(question !== undefined ? { question } : {}),
      };
      if (c.approval?.status === 'pending' && c.approval.deadline) pending.deadline = c.approval.deadline;
      if (c.approval?.status === 'pending' && c.approval.escalated) pending.escalated = true;
      return pending;
    });
}

/** Sets the deadline of every pending call (the approval timeout's end), and marks them escalated when it is the second. */
export function setApprovalDeadline(state: RunState, deadline: string, escalated = false): RunState {
  return updatePending(state, (c) =>
    c.approval?.status === 'pending'
      ? {
          ...c,
          approval: {
            ...c.approval,
            deadline,
            ...(escalated || c.approval.escalated ? { escalated: true as const } : {}),
          },
        }
      : c,
  );
}

/** Approves every pending call: the approval timeout ran out with `onApprovalTimeout: 'approve'`. */
export function approveExpired(state: RunState): RunState {
  return updatePending(state, (c) => (c.approval?.status === 'pending' ? decided(c, true, undefined) : c));
}

/**
 * Why `decision` cannot be applied now, or undefined when it can. Update validators call it, so a
 * wrong call id is rejected before anything is written to history.
 */
export function approvalProblem(state: RunState | undefined, decision: unknown): string | undefined {
  if (decision === null || typeof decision !== 'object')
    return 'the decision must be an object {"callId", "approve", "reason"?}';
  const d = decision as Record<string, unknown>;
  if (typeof d.callId !== 'string' || d.callId === '')
    return '"callId" must be the id of a tool call awaiting approval';
  if (typeof d.approve !== 'boolean') return '"approve" must be true or false';
  if (d.reason !== undefined && typeof d.reason !== 'string') return '"reason" must be a string';
  const pending = state && state.phase.kind === 'tools' ? pendingApprovals(state.phase.calls) : [];
  if (!pending.some((p) => p.callId === d.callId)) {
    const waiting = pending.map((p) => `${p.callId} (${p.summary})`).join(', ');
    return `no tool call "${d.callId}" is awaiting approval${waiting ? `; awaiting: ${waiting}` : ' (nothing is awaiting approval)'}`;
  }
  return undefined;
}

/** Applies a valid decision (see {@link approvalProblem}). */
export function decideApproval(state: RunState, decision: ApprovalDecision): RunState {
  const problem = approvalProblem(state, decision);
  if (problem) throw new Error(problem);
  return updatePending(state, (c) =>
    c.call.id === decision.callId ? decided(c, decision.approve, decision.reason) : c,
  );
}

/** Rejects every pending call: the approval timeout ran out. */
export function expireApprovals(state: RunState, reason: string): RunState {
  return updatePending(state, (c) => (c.approval?.status === 'pending' ? decided(c, false, reason) : c));
}

function updatePending(state: RunState, update: (c: PlannedToolCall) => PlannedToolCall): RunState {
  if (state.phase.kind !== 'tools') return state;
  // The policies' check is kept (an approval does not ask them again); `guarded` is not, as runs
  // recorded before check their tool guardrails again after an approval (replays must too).
  const policed = state.phase.policed ? { policed: true as const } : {};
  return { ...state, phase: { kind: 'tools', calls: state.phase.calls.map(update), ...policed } };
}

function decided(call: PlannedToolCall, approve: boolean, reason: string | undefined): PlannedToolCall {
  // A running tool's question: the answer goes back to the tool, which decides what it means.
  if (call.approval?.status === 'pending' && call.approval.question !== undefined)
    return { ...call, approval: { status: 'answered', approved: approve, ...(reason ? { reason } : {}) } };
  if (approve) return { ...call, approval: { status: 'approved' } };
  const text = `the user rejected this call to ${call.call.function.name}${reason ? `. Reason: ${reason}` : ''}`;
  // Resolved without an activity; an error, so an immediate tool that was refused does not end the run.
  return {
    call: call.call,
    arguments: call.arguments,
    immediate: false,
    approval: reason ? { status: 'rejected', reason } : { status: 'rejected' },
    resolved: { result: toolErrorText(text), error: true },
  };
}

/**
 * A status with the approvals agents the run called wait on (at any depth) listed after its own:
 * a run whose tools wait on them shows as awaiting approval (or escalated).
 */
export function withChildApprovals<T extends { state: string; pendingApprovals: PendingApproval[] }>(
  status: T,
  children: readonly PendingApproval[],
): T {
  if (children.length === 0) return status;
  const waiting = status.state === 'running_tools' || status.state === 'waiting';
  const state = waiting ? (children.some((c) => c.escalated) ? 'escalated' : 'awaiting_approval') : status.state;
  return { ...status, state, pendingApprovals: [...status.pendingApprovals, ...children] };
}

/**
 * A person's answer to a running tool's question (see `ToolContext.askPerson`): the call waits
 * for it as for an approval, under the same timeout rules, while its tool is suspended.
 */
export function askPerson(state: RunState, callId: string, question: string): RunState {
  return updateCall(state, callId, (c) => ({ ...c, approval: { status: 'pending', question } }));
}

/** The answer a person gave the call's question, once given. */
export function personAnswer(state: RunState, callId: string): { approved: boolean; text?: string } | undefined {
  const call = state.phase.kind === 'tools' ? state.phase.calls.find((c) => c.call.id === callId) : undefined;
  if (call?.approval?.status !== 'answered') return undefined;
  return { approved: call.approval.approved, ...(call.approval.reason ? { text: call.approval.reason } : {}) };
}

/** Puts back the call's approval as it was before its tool asked (the tool has its answer). */
export function settleQuestion(state: RunState, callId: string, before: ApprovalState | undefined): RunState {
  return updateCall(state, callId, (c) => {
    if (before) return { ...c, approval: before };
    const { approval: _, ...rest } = c;
    return rest as PlannedToolCall;
  });
}

function updateCall(state: RunState, callId: string, update: (c: PlannedToolCall) => PlannedToolCall): RunState {
  return updatePending(state, (c) => (c.call.id === callId ? update(c) : c));
}
