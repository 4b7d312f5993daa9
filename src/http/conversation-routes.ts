import type { ServerResponse } from 'node:http';
import type { ConversationOptions } from '../core/conversation/conversation-state';
import { readStatus, readTranscript } from '../client/workflow-controls';
import { ClientError } from '../client/client-error';
import { startMessage, stopTurn, type MessageRequest } from '../client/conversations';
import { deleteRun } from '../client/delete-run';
import { listRoute } from './list-routes';
import { events, streamTurn, wantsEventStream } from './event-stream-routes';
import { deliverEventRoute } from './event-routes';
import { approve, idempotencyKey } from './approval-routes';
import { branchRoutes } from './branch-routes';
import {
  ACCEPT_WITHIN_MS,
  busyOf,
  HttpError,
  imagesOf,
  MAX_MESSAGE_BODY_BYTES,
  messageExtrasOf,
  readJson,
  sendJson,
  sendStillRunning,
  tenantOf,
} from './http-io';
import { AGENT_INPUT_FIELD_NAMES, unknownFieldProblem } from '../core/run/run-input';
import type { RequestContext, Route } from './route-table';

/**
 * Conversations:
 *
 *   GET  /conversations                          the conversations (see list-routes.ts)
 *   GET  /conversations/:id                      its status and transcript (`?branch=`: another branch's)
 *   DELETE /conversations/:id                    an ended conversation, its payloads and workspace states (409 while open)
 *   POST /conversations/:id/messages             {"message", "images"?, "tools"?, "approvalTools"?, "agent"?, "busy"?, "fork"?} → the turn result
 *   POST /conversations/:id/approvals/:callId    {"approve": true|false, "reason"?}
 *   POST /conversations/:id/cancel               cancels the running turn; answers once it has ended
 *   GET  /conversations/:id/events               the live events (Server-Sent Events)
 *   POST /conversations/:id/events/:name         deliver an event to a wait_for_event
 *   and its branches (branch-routes.ts)
 */
export const conversationRoutes: Route[] = [
  {
    method: 'GET',
    path: '/conversations',
    handle: async (c) => sendJson(c.res, 200, await listRoute(c.client, c.url, c.scope, 'conversations')),
  },
  { method: 'GET', path: '/conversations/:conversation', handle: conversationStatus },
  {
    method: 'DELETE',
    path: '/conversations/:conversation',
    handle: async (c) =>
      sendJson(c.res, 200, await deleteRun(c.client, c.params.conversation, { kind: 'conversation' })),
  },
  { method: 'POST', path: '/conversations/:conversation/messages', handle: sendMessageRoute },
  {
    method: 'POST',
    path: '/conversations/:conversation/approvals/:callId',
    handle: (c) => approve(c, c.params.conversation),
  },
  { method: 'POST', path: '/conversations/:conversation/cancel', handle: cancelTurn },
  {
    method: 'GET',
    path: '/conversations/:conversation/events',
    handle: (c) => events(c.req, c.res, c.client, c.params.conversation, 'conversation', c.url, c.method, c.gone),
  },
  {
    method: 'POST',
    path: '/conversations/:conversation/events/:name',
    handle: (c) => deliverEventRoute(c.req, c.res, c.o, c.params.conversation, c.params.name, c.method),
  },
  ...branchRoutes,
];

async function conversationStatus({ res, url, client, params }: RequestContext): Promise<void> {
  const id = params.conversation;
  const status = await readStatus(client, id);
  if (status.kind !== 'conversation')
    throw new ClientError('wrong_kind', `"${id}" is a one-shot run, not a conversation; see GET /runs/${id}`, id);
  const branch = url.searchParams.get('branch') ?? undefined;
  return sendJson(res, 200, {
    ...status,
    ...(await readTranscript(client, id, branch === undefined ? {} : { branch })),
    ...(branch !== undefined ? { branch } : {}),
  });
}

/** What a message takes; a conversation's other options come from its agent or the API's settings. */
const MESSAGE_FIELDS = ['message', 'images', 'tools', 'approvalTools', 'agent', 'user', 'tenant', 'busy', 'fork'];

/** Refuses a field a message does not take (400), naming where a run option goes instead. */
function messageFieldsCheck(body: Record<string, unknown>): void {
  const problem = unknownFieldProblem(body, MESSAGE_FIELDS);
  if (!problem) return;
  const option = Object.keys(body).find((k) => !MESSAGE_FIELDS.includes(k) && AGENT_INPUT_FIELD_NAMES.includes(k));
  throw new HttpError(
    400,
    option
      ? `a message does not take "${option}": a conversation's options come from its agent ("agent": one defined with defineAgent or the agents file) or the server's conversationOptions`
      : problem,
  );
}

async function sendMessageRoute(c: RequestContext): Promise<void> {
  const { req, res, url, o, scope, gone, bounded } = c;
  const id = c.params.conversation;
  const body = await readJson(req, MAX_MESSAGE_BODY_BYTES);
  messageFieldsCheck(body);
  const turn: MessageRequest = { message: body.message as string };
  // A message sent again with the same key is the same message: answered once.
  const key = idempotencyKey(req);
  if (key !== undefined) turn.messageId = key;
  const images = imagesOf(body);
  if (images) turn.images = images;
  // The turn's tools; on the message that starts the conversation, its tools and user too.
  const { user, tools, approvalTools } = messageExtrasOf(body);
  if (tools !== undefined) turn.tools = tools;
  if (approvalTools !== undefined) turn.approvalTools = approvalTools;
  if (body.busy !== undefined) turn.busy = busyOf(body.busy);
  // In place of an earlier user message: the conversation forks there (see branch-routes.ts).
  if (body.fork !== undefined) turn.fork = body.fork as MessageRequest['fork'];
  // A named agent (body or ?agent=) applies when this message starts the conversation.
  const agent = body.agent ?? url.searchParams.get('agent') ?? undefined;
  const tenant = tenantOf(scope, body.tenant);
  const options: ConversationOptions = {
    ...o.conversationOptions,
    ...(agent !== undefined ? { agent: agent as string } : {}),
    ...(tenant !== undefined ? { tenant } : {}),
    ...(user !== undefined ? { user } : {}),
    ...(tools !== undefined ? { tools } : {}),
    ...(approvalTools !== undefined ? { approvalTools } : {}),
  };
  try {
    if (wantsEventStream(req)) return await streamTurn(res, o.client, o.taskQueue, id, turn, options, gone);
    // Only the wait for the answer is bounded: the message itself is always kept, queued
    // durably when no worker accepts it now (none runs, or the conversation's died).
    const sent = await startMessage(
      o.client,
      id,
      turn,
      { taskQueue: o.taskQueue, options },
      { acceptWithinMs: ACCEPT_WITHIN_MS, signal: gone },
    );
    if (sent.queued) return sendQueued(res, id, sent.messageId);
    const result = await bounded(() => sent.result());
    if (result === undefined)
      return sendStillRunning(res, `/conversations/${encodeURIComponent(id)}`, { conversationId: id });
    return sendJson(res, 200, result);
  } catch (err) {
    // The id is taken by a one-shot run: this request cannot create a conversation under it.
    if (err instanceof ClientError && err.kind === 'wrong_kind') throw new HttpError(409, err.message, err.errorType);
    throw err;
  }
}

/**
 * Stop: answers once the turn has ended (a Stop button may send the next message right after).
 * A Stop is idempotent: when no turn runs (another Stop ended it), there is nothing to do.
 */
async function cancelTurn({ res, client, params }: RequestContext): Promise<void> {
  const stopped = await stopTurn(client, params.conversation);
  if (!stopped) {
    res.writeHead(204).end();
    return;
  }
  return sendJson(res, 200, stopped);
}

/** 202 for a message no worker accepted now: it is queued, durably, and answered once a worker runs the conversation. */
function sendQueued(res: ServerResponse, id: string, messageId: string): void {
  const location = `/conversations/${encodeURIComponent(id)}`;
  res.setHeader('location', location);
  sendJson(res, 202, {
    conversationId: id,
    messageId,
    status: 'queued',
    location,
    error: `no worker accepted the message within ${ACCEPT_WITHIN_MS / 1000} s (is a worker running on the conversation's task queue?): it is queued, durably, and answered once a worker runs the conversation; follow it at GET ${location}/events`,
    errorType: 'Client.Queued',
  });
}
