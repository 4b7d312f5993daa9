import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import type { AgentEvent, ConversationOptions } from '../core';
import { ClientError } from '../client/client-error';
import { startMessage, type MessageRequest } from '../client/conversations';
import { eventsPosition, isTurnEnd, streamEvents } from '../client/event-stream';
import { describeKind, lookupWorkflow } from '../client/workflow-lookup';
import { allow, HttpError } from './http-io';

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
  let after: number | undefined;
  if (raw !== undefined && raw !== null) {
    if (!/^-?\d+$/.test(raw.trim()) || Number(raw) < -1)
      throw new HttpError(
        400,
        `"after" (or Last-Event-ID) must be an event offset (a whole number, or -1 for the beginning), got "${raw}"`,
      );
    after = Number(raw);
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
  await sendEvents(res, streamEvents(client, id, { after, signal: gone }), gone);
}

/** `POST /conversations/:id/messages` with `Accept: text/event-stream`: sends the message and streams its turn. */
export async function streamTurn(
  res: ServerResponse,
  client: Client,
  taskQueue: string,
  id: string,
  turn: MessageRequest,
  options: ConversationOptions,
  gone: AbortSignal,
): Promise<void> {
  const after = await eventsPosition(client, id);
  const sent = await startMessage(client, id, turn, { taskQueue, options });
  // The turn's number is known when its result arrives; its events may end before or after that.
  const stop = new AbortController();
  const ended = new Set<number>();
  let ours: number | undefined;
  sent.result().then(
    (result) => {
      ours = result.turn;
      if (ended.has(ours)) stop.abort();
    },
    () => stop.abort(),
  );
  const stream = streamEvents(client, id, {
    after,
    signal: AbortSignal.any([gone, stop.signal]),
    until: (e) => {
      if (isTurnEnd(e)) ended.add(e.turn);
      return ours !== undefined && isTurnEnd(e, ours);
    },
  });
  await sendEvents(res, stream, gone);
}

/**
 * Writes events as Server-Sent Events (`id:` = offset, `data:` = the event's JSON), with a
 * comment every 15 s so proxies keep the connection open. An error after the stream has started
 * (e.g. events no longer kept) is sent as an `error` event before the stream ends.
 */
export async function sendEvents(
  res: ServerResponse,
  stream: AsyncGenerator<AgentEvent>,
  gone: AbortSignal,
): Promise<void> {
  // Errors before the first event (the events are no longer kept, say) become ordinary HTTP
  // errors; a stream with nothing to send yet still answers at once, so the client knows it is
  // connected rather than left waiting for headers.
  const next = stream.next();
  const first = await Promise.race([
    next,
    new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), FIRST_EVENT_WAIT_MS)),
  ]);
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.write(': durable-agents events\n\n');
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
  const send = (e: AgentEvent) => res.write(`id: ${e.offset}\ndata: ${JSON.stringify(e)}\n\n`);
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
