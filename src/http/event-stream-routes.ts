import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import type { AgentEvent } from '../core/events/agent-events';
import type { ConversationOptions } from '../core/conversation/conversation-state';
import { ClientError } from '../client/client-error';
import { startMessage, type MessageRequest } from '../client/conversations';
import { isTurnEnd, streamEvents } from '../client/event-stream';
import { LiveFeed, withLiveText, type LiveTextOptions } from '../client/live-events';
import { LiveTextMerge } from '../core/events/live-text-merge';
import { describeKind, lookupWorkflow } from '../client/workflow-lookup';
import { ACCEPT_WITHIN_MS, allow, HttpError } from './http-io';
import { refusalOf, unlessRefused } from './turn-stream';

/** The HTTP API's Server-Sent Events: a run's or conversation's live events, and a turn streamed as it runs. */

/** How long an event stream waits for its first event before it sends its headers anyway. */
const FIRST_EVENT_WAIT_MS = 500;

/** Whether the caller asked for Server-Sent Events. */
export function wantsEventStream(req: IncomingMessage): boolean {
  return String(req.headers.accept ?? '').includes('text/event-stream');
}

/** `GET .../events`: the live events of a run or conversation, from `Last-Event-ID` or `?after=`. */
export async function events(
  req: IncomingMessage,
  res: ServerResponse,
  client: Client,
  id: string,
  kind: 'run' | 'conversation',
  url: URL,
  method: string,
  gone: AbortSignal,
): Promise<void> {
  allow(method, 'GET');
  const raw = url.searchParams.get('after') ?? (req.headers['last-event-id'] as string | undefined);
  // An event's id is where its reader stood (an offset, and how far live text had gone beyond it).
  let from: { merge: LiveTextMerge; after?: number } = { merge: new LiveTextMerge() };
  if (raw !== undefined && raw !== null) {
    const resumed = raw.trim() === '-1' ? { merge: from.merge, after: -1 } : LiveTextMerge.resume(raw.trim());
    if (!resumed)
      throw new HttpError(
        400,
        `"after" (or Last-Event-ID) must be an event offset (a whole number, or -1 for the beginning) or an event's id, got "${raw}"`,
      );
    from = resumed;
  }
  const found = await lookupWorkflow(client, id);
  if (!found) throw new ClientError('not_found', `no ${kind === 'run' ? 'run' : 'conversation'} "${id}" exists`, id);
  if (found.kind !== kind) {
    const other = found.kind === 'run' ? 'runs' : 'conversations';
    throw new ClientError(
      'wrong_kind',
      `"${id}" is ${describeKind(found)}, not a ${kind === 'run' ? 'one-shot run' : 'conversation'}${found.kind === 'other' ? '' : `; see GET /${other}/${id}/events`}`,
      id,
    );
  }
  // Headers once the offset is known to be readable: a bad one is a plain 400 (or 410), however
  // long the first read takes on a loaded server.
  let checked!: () => void;
  const ready = new Promise<void>((resolve) => (checked = resolve));
  const { merge, after } = from;
  const { stream, idOf } = withIds(
    id,
    (live) => streamEvents(client, id, { ...live, after, signal: gone, onChecked: checked }),
    { merge },
  );
  await sendEvents(res, stream, gone, { checked: ready, idOf });
}

/**
 * `POST /conversations/:id/messages` with `Accept: text/event-stream`: sends the message and
 * streams the turn that answers it (found by the message's id: messages sent while another turn
 * runs get turns of their own). With no worker to accept it, the message is queued (Temporal keeps
 * it) and the stream says so (`event: queued`), then waits for the turn.
 */
export async function streamTurn(
  res: ServerResponse,
  client: Client,
  taskQueue: string,
  id: string,
  turn: MessageRequest,
  options: ConversationOptions,
  gone: AbortSignal,
): Promise<void> {
  // The live path from before the message is sent, so nothing of its turn is missed.
  const feed = new LiveFeed(id);
  let sent: Awaited<ReturnType<typeof startMessage>>;
  try {
    sent = await startMessage(
      client,
      id,
      turn,
      { taskQueue, options },
      { acceptWithinMs: ACCEPT_WITHIN_MS, signal: gone },
    );
  } catch (err) {
    feed.close();
    throw err;
  }
  // The turn's number is known at its start (turn_started names the message).
  let ours: number | undefined;
  const answers = (e: AgentEvent) => e.type === 'turn_started' && e.messageId === sent.messageId;
  const { stream, idOf } = withIds(
    id,
    (live) =>
      streamEvents(client, id, {
        ...live,
        messageId: sent.messageId,
        signal: gone,
        until: (e) => ours !== undefined && isTurnEnd(e, ours),
      }),
    { feed, startsWith: answers },
  );
  const mine = async function* () {
    for await (const e of stream) {
      if (ours === undefined && answers(e)) ours = e.turn;
      if (ours !== undefined && e.turn === ours) {
        yield e;
        if (isTurnEnd(e, ours)) return;
      }
    }
  };
  const events = sent.queued ? mine() : await unlessRefused(refusalOf(sent.result()), mine());
  await sendEvents(res, events, gone, { idOf, ...(sent.queued ? { queued: queuedNote(id) } : {}) });
}

/** `POST /runs` with `Accept: text/event-stream`: the run just started, streamed from its first event to its end. */
export async function streamRun(res: ServerResponse, client: Client, id: string, gone: AbortSignal): Promise<void> {
  const { stream, idOf } = withIds(id, (live) =>
    streamEvents(client, id, { ...live, after: -1, signal: gone, until: (e) => isTurnEnd(e) }),
  );
  await sendEvents(res, stream, gone, { idOf });
}

/**
 * A workflow's events with the live path merged in (see `withLiveText`), and each one's id: where
 * a reader that got it stands, which `LiveTextMerge.resume` goes on from (`Last-Event-ID`).
 */
function withIds(
  id: string,
  open: Parameters<typeof withLiveText>[1],
  options: LiveTextOptions = {},
): { stream: AsyncGenerator<AgentEvent>; idOf: (event: AgentEvent) => string } {
  const merge = options.merge ?? new LiveTextMerge();
  return { stream: withLiveText(id, open, { ...options, merge }), idOf: (e) => merge.positionOf(e) };
}

/** What a stream of a queued message says first (`event: queued`). */
function queuedNote(id: string): Record<string, string> {
  return {
    conversationId: id,
    status: 'queued',
    error: `no worker accepted the message within ${ACCEPT_WITHIN_MS / 1000} s (is a worker running on its task queue?): it is queued, durably, and answered once a worker runs the conversation; this stream waits for that turn`,
    errorType: 'Client.Queued',
  };
}

/** Options of {@link sendEvents}. */
export interface SendEventsOptions {
  /** What a stream of a queued message says first (`event: queued`). */
  queued?: Record<string, string>;
  /** Resolves when the stream can no longer fail on what was asked (see `onChecked`): the headers then go at once. */
  checked?: Promise<void>;
  /** Each event's id (default: its offset): where a reader that got it resumes from (`Last-Event-ID`). */
  idOf?: (event: AgentEvent) => string;
}

/**
 * Writes events as Server-Sent Events (`id:` = where the reader stands, `data:` = the event's
 * JSON), with a comment every 15 s so proxies keep the connection open. An error after the stream
 * has started (e.g. events no longer kept) is sent as an `error` event before the stream ends.
 */
export async function sendEvents(
  res: ServerResponse,
  stream: AsyncGenerator<AgentEvent>,
  gone: AbortSignal,
  { queued, checked, idOf = (e) => String(e.offset) }: SendEventsOptions = {},
): Promise<void> {
  // Errors before the first event (the events are no longer kept, say) become ordinary HTTP
  // errors; a stream with nothing to send yet still answers at once, so the client knows it is
  // connected rather than left waiting for headers.
  const next = stream.next();
  let timer: NodeJS.Timeout | undefined;
  const first = await Promise.race([
    next,
    checked
      ? checked.then(() => undefined)
      : new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), FIRST_EVENT_WAIT_MS))),
  ]).finally(() => clearTimeout(timer));
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.write(': durable-agents events\n\n');
  if (queued) res.write(`event: queued\ndata: ${JSON.stringify(queued)}\n\n`);
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
  const send = (e: AgentEvent) => res.write(`id: ${idOf(e)}\ndata: ${JSON.stringify(e)}\n\n`);
  try {
    const opening = first ?? (await next);
    if (!opening.done) send(opening.value);
    if (!opening.done) for await (const e of stream) send(e);
    // The stream is complete (the turn ended, or the workflow closed): say so, so that an
    // EventSource does not reconnect.
    if (!gone.aborted) res.write('event: end\ndata: {}\n\n');
  } catch (err) {
    if (!gone.aborted) {
      const body =
        err instanceof ClientError
          ? { error: err.message, errorType: err.errorType }
          : { error: err instanceof Error ? err.message : String(err), errorType: 'Http.InternalError' };
      res.write(`event: error\ndata: ${JSON.stringify(body)}\n\n`);
    }
  } finally {
    clearInterval(keepAlive);
    res.end();
  }
}
