import type { Client } from '@temporalio/client';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  ElicitResultSchema,
  type ElicitRequest,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { decideApproval } from '../client/workflow-controls';
import type { AgentEvent } from '../core';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * An approval the agent needs, asked of the MCP client that called it (when the client declared
 * `elicitation`): `elicitation/create` on the call's own stream, with the call and its arguments,
 * and a form of `approve` (yes or no) and `reason`. The answer decides the approval in the
 * workflow: accepted with `approve`, it is approved (its reason, the answer to a tool's
 * question); accepted without, or declined, it is rejected. A client that cancels the form leaves
 * the approval waiting, for the CLI, the HTTP API or another client to decide. An approval
 * decided elsewhere first stays as decided.
 */
export async function askByElicitation(
  client: Client,
  workflowId: string,
  event: Extract<AgentEvent, { type: 'approval_requested' }>,
  extra: Extra,
): Promise<void> {
  const who = event.agent ? ` (asked by the agent ${event.agent})` : '';
  const message = event.question
    ? `${event.question}${who}`
    : `Approve ${event.summary}${who}? The agent's run ${workflowId} waits for this decision.`;
  const request: ElicitRequest = {
    method: 'elicitation/create',
    params: {
      mode: 'form',
      message,
      requestedSchema: {
        type: 'object',
        properties: {
          approve: {
            type: 'boolean',
            title: event.question ? 'Answer' : 'Approve',
            description: event.question ? 'Answer (no: decline)' : `Let ${event.tool} run with these arguments`,
            default: false,
          },
          reason: {
            type: 'string',
            title: event.question ? 'Your answer' : 'Reason',
            description: event.question ? 'What the tool asked for' : 'Why (the agent reads it when you refuse)',
          },
        },
        required: ['approve'],
      },
    },
  };
  let answer;
  try {
    answer = await extra.sendRequest(request, ElicitResultSchema, {
      signal: extra.signal,
      timeout: ELICITATION_TIMEOUT_MS,
    });
  } catch {
    return; // the client went away or took too long: the approval waits for another way
  }
  if (answer.action === 'cancel') return;
  const content = (answer.content ?? {}) as { approve?: unknown; reason?: unknown };
  const reason = typeof content.reason === 'string' && content.reason.trim() ? content.reason.trim() : undefined;
  // A tool's question answered in words is answered, box ticked or not.
  const approve = answer.action === 'accept' && (content.approve === true || (!!event.question && !!reason));
  await decideApproval(client, workflowId, {
    callId: event.callId,
    approve,
    ...(reason ? { reason } : answer.action === 'decline' ? { reason: 'declined by the MCP client' } : {}),
  }).catch(() => undefined); // decided elsewhere meanwhile
}

/** How long a client may take to answer (a person at the other end): a day. */
const ELICITATION_TIMEOUT_MS = 24 * 3600_000;
