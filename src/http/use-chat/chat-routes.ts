import type { ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import { messageIdProblem } from '../../core/messages/message-ids';
import type { ConversationOptions } from '../../core/conversation/conversation-state';
import type { TenantScope } from '../../core/fleet/tenants';
import { scopedWorkflowId } from '../../client/tenant-scope';
import { ClientError } from '../../client/client-error';
import { readStatus, readTranscript } from '../../client/workflow-controls';
import { startMessage, stopTurn } from '../../client/conversations';
import { listBranches, switchBranch } from '../../client/branches';
import { describeKind, explainFailure, lookupWorkflow, withinQueryWait } from '../../client/workflow-lookup';
import { ACCEPT_WITHIN_MS, HttpError, MAX_MESSAGE_BODY_BYTES, readJson, sendJson, tenantOf } from '../http-io';
import type { RequestContext, Route } from '../route-table';
import { decideAnswered, followTurn, pausedTurn, turnInProgress } from '../../client/turn-follow';
import { LiveFeed, withLiveText } from '../../client/live-events';
import { refusalOf, TURN_KEEP_ALIVE_MS, unlessRefused, writeTurnStream } from '../turn-stream';
import { eventsPosition, keptEvents, streamEvents } from '../../client/event-stream';
import {
  SSE_DONE,
  turnMetadata,
  UiMessageEncoder,
  UI_MESSAGE_STREAM_HEADERS,
  type UiTurnMetadata,
} from './ui-message-chunks';
import { chatRequest, uiMessages } from './ui-messages';

/**
 * The AI SDK's chat routes, where `DefaultChatTransport` looks for them, so a `useChat` front end
 * talks to durable conversations unchanged:
 *
 *   POST /api/chat                   a new user message (or answers to approval requests): the turn as a UI message stream
 *   GET  /api/chat/:id/stream        the turn in progress, replayed from its start (`resume: true`); 204 when none is;
 *                                    `?messageId=`: the turn answering that message, running or ended
 *   GET  /api/chat/:id/messages      the conversation as UIMessage[], for a front end to load; `?branch=`: a branch that is not current
 *   GET  /api/chat/:id/branches      the chat's branches (regenerate and edit make them), the current one first
 *   POST /api/chat/:id/branch        {"branch"}: makes that branch current again (between turns); answers with the branches
 *   GET  /api/chat/:id/turns         the chat's turns as they start and end (SSE), from the current one, for a page that follows other tabs; 204 when no chat
 *   POST /api/chat/:id/stop          Stop: cancels the running turn, answers once it ended (200), or 204 when none runs
 *
 * Every stream is read from the conversation's durable event log, never from this server's
 * memory: a server restarted mid-turn resumes the turn whole.
 */

/** What the chat routes need from the HTTP API. */
export interface ChatRouteOptions {
  client: Client;
  taskQueue: string;
  /** Options for conversations started here (an `agent` in the request picks the agent). */
  conversationOptions?: ConversationOptions;
}

/** The chat routes of the route table. */
export const chatRoutes: Route[] = [
  {
    method: 'POST',
    path: '/api/chat',
    handle: async ({ req, res, o, gone, scope }) =>
      post(res, o, await readJson(req, MAX_MESSAGE_BODY_BYTES), gone, scope),
  },
  {
    method: 'GET',
    path: '/api/chat/:chat/stream',
    handle: ({ res, url, o, params, gone }) => {
      const messageId = url.searchParams.get('messageId') ?? undefined;
      if (messageId !== undefined && messageIdProblem(messageId))
        throw new HttpError(400, messageIdProblem(messageId)!);
      return resume(res, o.client, params.chat, gone, messageId);
    },
  },
  {
    method: 'GET',
    path: '/api/chat/:chat/turns',
    handle: ({ res, o, params, gone }) => turns(res, o.client, params.chat, gone),
  },
  { method: 'POST', path: '/api/chat/:chat/stop', handle: stop },
  {
    method: 'GET',
    path: '/api/chat/:chat/branches',
    handle: async ({ res, client, params }) => {
      if (!(await chatExists(client, params.chat))) return sendJson(res, 200, []);
      return sendJson(res, 200, await listBranches(client, params.chat));
    },
  },
  { method: 'POST', path: '/api/chat/:chat/branch', handle: switchChatBranch },
  { method: 'GET', path: '/api/chat/:chat/messages', handle: chatMessages },
];

async function stop({ res, client, params }: RequestContext): Promise<void> {
  const id = params.chat;
  if (!(await chatExists(client, id))) throw new HttpError(404, `there is no chat "${id}" to stop`, 'Client.NotFound');
  const stopped = await stopTurn(client, id);
  if (!stopped) {
    res.writeHead(204).end();
    return;
  }
  return sendJson(res, 200, stopped);
}

async function switchChatBranch({ req, res, client, params }: RequestContext): Promise<void> {
  const id = params.chat;
  const { branch } = await readJson(req);
  if (typeof branch !== 'string' || branch === '')
    throw new HttpError(400, '"branch" must be the id of one of the chat\'s branches (GET /api/chat/:id/branches)');
  if (!(await chatExists(client, id))) throw new HttpError(404, `there is no chat "${id}"`, 'Client.NotFound');
  return sendJson(res, 200, await switchBranch(client, id, branch));
}

async function chatMessages({ res, url, client, params }: RequestContext): Promise<void> {
  const id = params.chat;
  const branch = url.searchParams.get('branch') ?? undefined;
  if (!(await chatExists(client, id))) return sendJson(res, 200, []);
  const status = await readStatus(client, id);
  // A branch that is not current has no turn running (its answers are all there).
  const current = branch === undefined || ('branch' in status ? (status.branch ?? 'main') : 'main') === branch;
  const running = current && status.state !== 'idle' && status.state !== 'closed';
  const [{ messages }, events] = await Promise.all([
    readTranscript(client, id, branch === undefined ? {} : { branch }),
    keptEvents(client, id),
  ]);
  // Each answer's metadata, as its stream ended it, for the turns the conversation still keeps.
  const metadata = new Map<number, UiTurnMetadata>();
  for (const e of events)
    if (e.type === 'turn_completed') metadata.set(e.turn, turnMetadata(id, e.turn, e.result.status, e.result));
    else if (e.type === 'turn_failed') metadata.set(e.turn, turnMetadata(id, e.turn, 'failed'));
  return sendJson(res, 200, uiMessages(id, messages, running, 'turns' in status ? status.turns : undefined, metadata));
}

async function post(
  res: ServerResponse,
  o: ChatRouteOptions,
  body: Record<string, unknown>,
  gone: AbortSignal,
  scope: TenantScope,
) {
  const request = chatRequest(body);
  const { action } = request;
  // In the caller's tenant's id space: another tenant's chat is no chat to it, a new one its own.
  const id = await scopedWorkflowId(o.client, scope, request.id, 'conversation');
  const tenant = tenantOf(scope, undefined);
  const stream = { headers: UI_MESSAGE_STREAM_HEADERS, trailer: SSE_DONE, gone };
  if (action.kind === 'message') {
    const { user, tools, approvalTools } = request.extras;
    const options: ConversationOptions = {
      stream: true,
      ...o.conversationOptions,
      ...(request.agent ? { agent: request.agent } : {}),
      ...(tenant !== undefined ? { tenant } : {}),
      // The user (memory's scope) and tools apply when this message starts the chat.
      ...(user !== undefined ? { user } : {}),
      ...(tools !== undefined ? { tools } : {}),
      ...(approvalTools !== undefined ? { approvalTools } : {}),
    };
    // The UI message's id is the message's: a message sent again is answered once, and this
    // response follows the turn that answers it, whatever other turns run before it. With no
    // worker to accept it, the message is kept (queued) and the stream waits for its turn.
    // Opened before the message goes: its turn's first events can come at once (see live-events.ts).
    const live = new LiveFeed(id);
    let sent;
    try {
      sent = await startMessage(
        o.client,
        id,
        action.message,
        { taskQueue: o.taskQueue, options },
        { acceptWithinMs: ACCEPT_WITHIN_MS, signal: gone },
      );
    } catch (err) {
      live.close();
      throw err;
    }
    const steps = followTurn(o.client, id, { messageId: sent.messageId, live, signal: gone });
    return writeTurnStream(res, {
      ...stream,
      steps: sent.queued ? steps : await unlessRefused(refusalOf(sent.result()), steps),
      encoderFor: (turn) => new UiMessageEncoder(id, turn),
    });
  }
  // Answers to approval requests: the message that asked them goes on from where its stream paused.
  if (!(await chatExists(o.client, id)))
    throw new HttpError(
      404,
      `there is no chat "${id}" to answer approval requests in: answers go to the chat that asked (its id, as useChat sends it)`,
      'Client.NotFound',
    );
  const paused = await withinQueryWait(o.client, () => pausedTurn(o.client, id)).catch(async (err: unknown) => {
    throw await explainFailure(o.client, id, err, 'conversation');
  });
  if (!paused) throw new HttpError(409, `the conversation "${id}" has no approval request in its current turn`);
  const encoder = new UiMessageEncoder(id, paused.turn);
  for (const e of paused.events) encoder.encode(e);
  encoder.pause();
  const decided = await decideAnswered(o.client, id, action.decisions);
  const pending = paused.pending.filter((callId) => !decided.has(callId));
  return writeTurnStream(res, {
    ...stream,
    encoder,
    steps: followTurn(o.client, id, { after: paused.after, turn: paused.turn, pending, signal: gone }),
  });
}

/**
 * Whether a chat (a conversation) exists under `id`. An id that belongs to a one-shot run is no
 * chat, on every chat route alike: 404 (`Client.WrongKind`), saying where the run is.
 */
async function chatExists(client: Client, id: string): Promise<boolean> {
  const found = await lookupWorkflow(client, id);
  if (!found) return false;
  if (found.kind !== 'conversation')
    throw new ClientError(
      'wrong_kind',
      `"${id}" is ${describeKind(found)}, not a chat (a conversation)${found.kind === 'run' ? `: see GET /runs/${id}` : ''}`,
      id,
    );
  return true;
}

/**
 * `GET /api/chat/:id/stream`: the turn in progress from its first event, or 204. With
 * `?messageId=`: the turn that answers that message, from its first event, whether it still runs
 * or has ended (while the conversation keeps it): how a transport that lost its stream picks it up.
 */
async function resume(
  res: ServerResponse,
  client: Client,
  id: string,
  gone: AbortSignal,
  messageId?: string,
): Promise<void> {
  if (!(await chatExists(client, id)) || (messageId === undefined && !(await turnInProgress(client, id)))) {
    res.writeHead(204).end();
    return;
  }
  return writeTurnStream(res, {
    headers: UI_MESSAGE_STREAM_HEADERS,
    trailer: SSE_DONE,
    gone,
    steps: followTurn(client, id, { signal: gone, ...(messageId !== undefined ? { messageId } : {}) }),
    encoderFor: (turn) => new UiMessageEncoder(id, turn),
  });
}

/**
 * `GET /api/chat/:id/turns`: Server-Sent Events of the chat's turns, from the current (or last)
 * one's start, whoever sent
 * their message: `{"type": "turn-started", "turn", "messageId"?}` and `{"type": "turn-finished",
 * "turn", "status"}`, and `{"type": "branch-switched", "branch"}` when another branch was made
 * current (the page loads the chat again). A page open on a chat (a second tab, a phone) follows it: a turn it did not
 * start, it loads and resumes (see `watchChatTurns` in `durable-agents/ui`). 204 while the chat does
 * not exist yet.
 */
async function turns(res: ServerResponse, client: Client, id: string, gone: AbortSignal): Promise<void> {
  if (!(await chatExists(client, id))) {
    res.writeHead(204).end();
    return;
  }
  // From the start of the current (or last) turn, not from now: a page loads the chat, then
  // watches, and a turn another tab started in between would otherwise never be seen to start. A
  // page skips the turns it has (by their message ids). A chat not running starts afresh at 0.
  const from = (await eventsPosition(client, id)) === -1 ? { after: -1 } : {};
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
  res.flushHeaders();
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), TURN_KEEP_ALIVE_MS);
  try {
    for await (const e of withLiveText(id, (live) => streamEvents(client, id, { ...live, ...from, signal: gone }))) {
      const chunk =
        e.type === 'turn_started'
          ? { type: 'turn-started', turn: e.turn, ...(e.messageId ? { messageId: e.messageId } : {}) }
          : e.type === 'turn_completed'
            ? { type: 'turn-finished', turn: e.turn, status: e.result.status }
            : e.type === 'turn_failed'
              ? { type: 'turn-finished', turn: e.turn, status: 'failed' }
              : e.type === 'branch_switched'
                ? { type: 'branch-switched', branch: e.branch }
                : undefined;
      if (chunk) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    }
  } catch (err) {
    if (!gone.aborted) res.write(`data: ${JSON.stringify({ type: 'error', errorText: (err as Error).message })}\n\n`);
  } finally {
    clearInterval(keepAlive);
    res.end();
  }
}
