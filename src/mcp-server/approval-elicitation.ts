import type { Client } from '@temporalio/client';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  ElicitResultSchema,
  type ElicitRequest,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { decideApproval } from '../client/workflow-controls';
import type { AgentEvent } from '../core/events/agent-events';
import { approvalAsk, approvalForm, decisionOf } from './approval-form';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * An approval the agent needs, asked of the MCP client that called it (when the client declared
 * `elicitation`): `elicitation/create` on the call's own stream, with the form of approval-form.ts. The answer decides the approval in the
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
  const ask = approvalAsk(event);
  const request: ElicitRequest = { method: 'elicitation/create', params: approvalForm(ask, workflowId) };
  let answer;
  try {
    answer = await extra.sendRequest(request, ElicitResultSchema, {
      signal: extra.signal,
      timeout: ELICITATION_TIMEOUT_MS,
    });
  } catch {
    return; // the client went away or took too long: the approval waits for another way
  }
  const decision = decisionOf(ask, answer);
  if (!decision) return;
  await decideApproval(client, workflowId, { callId: event.callId, ...decision }).catch(() => undefined); // decided elsewhere meanwhile
}

/** How long a client may take to answer (a person at the other end): a day. */
const ELICITATION_TIMEOUT_MS = 24 * 3600_000;
