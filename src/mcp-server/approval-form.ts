import type { AgentEvent } from '../core/events/agent-events';
import type { PendingApproval } from '../core/state/run-state';

/**
 * An approval the agent needs, as an MCP client is asked it: a form of `approve` (yes or no) and
 * `reason`. The same form goes out on both revisions: as a server-to-client `elicitation/create`
 * on 2025-11-25 (see approval-elicitation.ts), as an `input_required` result's input request on
 * 2026-07-28 (see modern/). Plain data, so both SDKs' types take it.
 */

/** What a person is asked about: an approval event, or a pending approval as `status` lists it. */
export interface ApprovalAsk {
  callId: string;
  /** The tool that would run (or asks). */
  tool: string;
  summary: string;
  question?: string;
  agent?: string;
}

/** The ask of an `approval_requested` event or of a pending approval. */
export function approvalAsk(from: Extract<AgentEvent, { type: 'approval_requested' }> | PendingApproval): ApprovalAsk {
  const tool = 'tool' in from ? from.tool : from.name;
  return {
    callId: from.callId,
    tool,
    summary: from.summary,
    ...(from.question ? { question: from.question } : {}),
    ...(from.agent ? { agent: from.agent } : {}),
  };
}

/** The elicitation form (`mode: 'form'`) that asks for one approval of the run `workflowId`. */
export function approvalForm(
  ask: ApprovalAsk,
  workflowId: string,
): {
  mode: 'form';
  message: string;
  requestedSchema: {
    type: 'object';
    properties: {
      approve: { type: 'boolean'; title: string; description: string; default: boolean };
      reason: { type: 'string'; title: string; description: string };
    };
    required: string[];
  };
} {
  const who = ask.agent ? ` (asked by the agent ${ask.agent})` : '';
  const message = ask.question
    ? `${ask.question}${who}`
    : `Approve ${ask.summary}${who}? The agent's run ${workflowId} waits for this decision.`;
  return {
    mode: 'form',
    message,
    requestedSchema: {
      type: 'object',
      properties: {
        approve: {
          type: 'boolean',
          title: ask.question ? 'Answer' : 'Approve',
          description: ask.question ? 'Answer (no: decline)' : `Let ${ask.tool} run with these arguments`,
          default: false,
        },
        reason: {
          type: 'string',
          title: ask.question ? 'Your answer' : 'Reason',
          description: ask.question ? 'What the tool asked for' : 'Why (the agent reads it when you refuse)',
        },
      },
      required: ['approve'],
    },
  };
}

/**
 * The decision a client's answer to {@link approvalForm} makes, or undefined when it makes none
 * (the form was cancelled, or the answer is no elicitation result): the approval then waits for
 * another way (the CLI, the HTTP API, another client). Accepted with `approve`, it is approved;
 * accepted without, or declined, it is refused. A tool's question answered in words is answered,
 * box ticked or not.
 */
export function decisionOf(
  ask: Pick<ApprovalAsk, 'question'>,
  answer: unknown,
): { approve: boolean; reason?: string } | undefined {
  if (typeof answer !== 'object' || answer === null) return undefined;
  const { action, content } = answer as { action?: unknown; content?: unknown };
  if (action !== 'accept' && action !== 'decline') return undefined;
  const fields = (typeof content === 'object' && content !== null ? content : {}) as Record<string, unknown>;
  const reason = typeof fields.reason === 'string' && fields.reason.trim() ? fields.reason.trim() : undefined;
  const approve = action === 'accept' && (fields.approve === true || (!!ask.question && !!reason));
  return {
    approve,
    ...(reason ? { reason } : action === 'decline' ? { reason: 'declined by the MCP client' } : {}),
  };
}
