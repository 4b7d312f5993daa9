import type { ServerResponse, IncomingMessage } from 'node:http';
import type { Client } from '@temporalio/client';
import type { AgentEvent, ConversationOptions } from '../../core';
import { ClientError } from '../../client/client-error';
import { decideApproval, readStatus, readTranscript } from '../../client/agent-workflows';
import { startMessage } from '../../client/conversations';
import { currentTurnEvents, eventsPosition, streamEvents } from '../../client/event-stream';
import { lookupWorkflow } from '../../client/workflow-lookup';
import { allow, HttpError, MAX_MESSAGE_BODY_BYTES, readJson, sendJson } from '../http-io';
import {
  sseChunk,
  SSE_DONE,
  UiMessageEncoder,
  UI_MESSAGE_STREAM_HEADERS,
  type UiMessageChunk,
} from './ui-message-chunks';
import { chatRequest, uiMessages } from './ui-messages';

/**
 * The AI SDK's chat routes, where `DefaultChatTransport` looks for them, so a `useChat` front end
 * talks to durable conversations unchanged:
 *
 *   POST /api/chat                   a new user message (or answers to approval requests): the turn as a UI message stream
 *   GET  /api/chat/:id/stream        the turn in progress, replayed from its start (`resume: true`); 204 when none is
 *   GET  /api/chat/:id/messages      the conversation as UIMessage[], for a front end to load
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

/** How long the stream waits for more events before it takes the turn to be waiting for a person. */
const SETTLE_MS = 50;

/** Answers `/api/chat/...`; `parts` is the path split at `/`. */
export async function chatRoute(
  req: IncomingMessage,
  res: ServerResponse,
  o: ChatRouteOptions,
  parts: readonly string[],
  method: string,
  gone: AbortSignal,
): Promise<void> {
  if (parts.length === 2) {
    allow(method, 'POST');
    return post(res, o, await readJson(req, MAX_MESSAGE_BODY_BYTES), gone);
  }
  const id = parts[2];
  if (parts.length === 4 && parts[3] === 'stream') {
    allow(method, 'GET');
    return resume(res, o.client, id, gone);
  }
  if (parts.length === 4 && parts[3] === 'messages') {
    allow(method, 'GET');
    const found = await lookupWorkflow(o.client, id);
    if (!found) return sendJson(res, 200, []);
    if (found.kind !== 'conversation')
      throw new ClientError('wrong_kind', `"${id}" is not a conversation, so it is no chat`, id);
    const status = await readStatus(o.client, id);
    const running = status.state !== 'idle' && status.state !== 'closed';
    const { messages } = await readTranscript(o.client, id);
    return sendJson(res, 200, uiMessages(id, messages, running, 'turns' in status ? status.turns : undefined));
  }
  throw new HttpError(404, `no route ${method} /${parts.join('/')}`, 'Http.NotFound');
}

async function post(res: ServerResponse, o: ChatRouteOptions, body: Record<string, unknown>, gone: AbortSignal) {
  const request = chatRequest(body);
  const { id, action } = request;
  if (action.kind === 'message') {
    const after = await eventsPosition(o.client, id);
    const options: ConversationOptions = {
      stream: true,
      ...o.conversationOptions,
      ...(request.agent ? { agent: request.agent } : {}),
    };
    const sent = await startMessage(o.client, id, action.message, { taskQueue: o.taskQueue, options });
    // The turn is followed through its events; its result is not waited for here.
    sent.result().catch(() => undefined);
    return writeTurn(res, o.client, id, after, undefined, gone);
  }
  // Answers to approval requests: the message that asked them goes on from where its stream paused.
  const events = await currentTurnEvents(o.client, id);
  let paused = events.length - 1;
  while (paused >= 0 && events[paused].type !== 'approval_requested') paused--;
  if (paused < 0) throw new HttpError(409, `the conversation "${id}" has no approval request in its current turn`);
  const encoder = new UiMessageEncoder(id, events[paused].turn);
  for (const e of events.slice(0, paused + 1)) encoder.encode(e);
  encoder.pauseForApproval();
  const status = await readStatus(o.client, id);
  const pending = new Set(status.pendingApprovals.map((p) => p.callId));
  // Answers to calls no longer pending (decided elsewhere, timed out) change nothing; the stream shows what happened.
  for (const decision of action.decisions)
    if (pending.has(decision.callId)) await decideApproval(o.client, id, decision);
  return writeTurn(res, o.client, id, events[paused].offset, encoder, gone);
}

/** `GET /api/chat/:id/stream`: the turn in progress from its first event, or 204. */
async function resume(res: ServerResponse, client: Client, id: string, gone: AbortSignal): Promise<void> {
  const found = await lookupWorkflow(client, id);
  if (!found?.running || found.kind !== 'conversation') {
    res.writeHead(204).end();
    return;
  }
  const status = await readStatus(client, id);
  if (status.state === 'idle' || status.state === 'closed') {
    res.writeHead(204).end();
    return;
  }
  return writeTurn(res, client, id, undefined, undefined, gone);
}

/**
 * Streams one turn as UI message chunks: the events after `after` (absent: from the current
 * turn's start), from the first `turn_started` on unless an `encoder` already holds the turn's
 * beginning. Ends when the turn ends or waits for a person's approval.
 */
async function writeTurn(
  res: ServerResponse,
  client: Client,
  id: string,
  after: number | undefined,
  given: UiMessageEncoder | undefined,
  gone: AbortSignal,
): Promise<void> {
  const stop = new AbortController();
  const events = streamEvents(client, id, { after, signal: AbortSignal.any([gone, stop.signal]) });
  res.writeHead(200, UI_MESSAGE_STREAM_HEADERS);
  const write = (chunks: UiMessageChunk[]) => {
    for (const c of chunks) res.write(sseChunk(c));
  };
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
  let encoder = given;
  if (encoder) write(encoder.start());
  try {
    for (let next = events.next(); ; next = events.next()) {
      let step = await settled(next);
      if (step === 'quiet') {
        if (encoder?.awaitingApproval) {
          write(encoder.pauseForApproval());
          next.catch(() => undefined); // ended by `stop` below
          break;
        }
        step = await next;
      }
      if (step.done) break;
      const e: AgentEvent = step.value;
      if (!encoder) {
        if (e.type !== 'turn_started') continue;
        encoder = new UiMessageEncoder(id, e.turn);
        write(encoder.start());
      }
      write(encoder.encode(e));
      if (encoder.done) break;
    }
  } catch (err) {
    if (!gone.aborted) write([{ type: 'error', errorText: err instanceof Error ? err.message : String(err) }]);
  } finally {
    clearInterval(keepAlive);
    stop.abort();
    events.return(undefined).catch(() => undefined);
    if (!gone.aborted) res.write(SSE_DONE);
    res.end();
  }
}

/** The next event if it comes within {@link SETTLE_MS}, else `quiet`. */
function settled<T>(next: Promise<T>): Promise<T | 'quiet'> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    next,
    new Promise<'quiet'>((resolve) => (timer = setTimeout(() => resolve('quiet'), SETTLE_MS))),
  ]).finally(() => clearTimeout(timer));
}
