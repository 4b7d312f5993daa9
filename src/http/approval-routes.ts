import type { IncomingMessage } from 'node:http';
import { messageIdProblem } from '../core/messages/message-ids';
import { decideApproval } from '../client/workflow-controls';
import { HttpError, readJson, sendJson } from './http-io';
import type { RequestContext } from './route-table';

/** `POST /runs/:id/approvals/:callId` and `POST /conversations/:id/approvals/:callId`: {"approve", "reason"?}. */
export async function approve({ req, res, client, params }: RequestContext, id: string): Promise<void> {
  const body = await readJson(req);
  if (typeof body.approve !== 'boolean') throw new HttpError(400, '"approve" must be true or false');
  if (body.reason !== undefined && typeof body.reason !== 'string')
    throw new HttpError(400, '"reason" must be a string');
  const decision = {
    callId: params.callId,
    approve: body.approve,
    ...(body.reason ? { reason: body.reason as string } : {}),
  };
  sendJson(res, 200, await decideApproval(client, id, decision));
}

/**
 * The request's `Idempotency-Key` (RFC draft "The Idempotency-Key HTTP Header Field"): a request
 * sent again with the same key (a client that retried after a timeout) does not act twice.
 */
export function idempotencyKey(req: IncomingMessage): string | undefined {
  const key = req.headers['idempotency-key'];
  if (key === undefined) return undefined;
  const value = Array.isArray(key) ? key[0] : key;
  const problem = messageIdProblem(value);
  if (problem) throw new HttpError(400, `the Idempotency-Key header ${problem.replace(/^"messageId" /, '')}`);
  return value;
}
