import type { ServerResponse } from 'node:http';
import type { AgentEvent } from '../core/events/agent-events';
import type { TurnStep } from '../client/turn-follow';

/**
 * A followed turn (see `client/turn-follow.ts`) written as Server-Sent Events by a protocol's
 * encoder: the HTTP side the UI message stream and AG-UI share.
 */

/** What an adapter writes for a turn: chunks of its protocol, each one SSE `data:` line. */
export interface TurnEncoder {
  /** The response's first chunks. */
  begin(): unknown[];
  /** The chunks of one event of the turn. */
  encode(event: AgentEvent): unknown[];
  /** The turn waits for a person's decisions: the response ends here. */
  pause(): unknown[];
  /** The stream broke (the conversation could not be read): the response ends with this. */
  failure(message: string): unknown[];
}

/** Options of {@link writeTurnStream}. */
export interface WriteTurnOptions {
  headers: Record<string, string>;
  steps: AsyncGenerator<TurnStep>;
  /** The encoder, from the start (its `begin` is written at once)... */
  encoder?: TurnEncoder;
  /** ...or made when the turn's first event shows which turn it is. */
  encoderFor?: (turn: number) => TurnEncoder;
  /** Written after the last chunk (the AI SDK's `[DONE]`). */
  trailer?: string;
  gone: AbortSignal;
}

/** How often a turn's stream writes a keep-alive comment while nothing else is written. */
export const TURN_KEEP_ALIVE_MS = 5_000;

/** Writes a followed turn as Server-Sent Events, one `data:` line per chunk, with keep-alive comments. */
export async function writeTurnStream(res: ServerResponse, o: WriteTurnOptions): Promise<void> {
  res.writeHead(200, o.headers);
  // Out at once: the client learns its message was taken even when the turn starts later (it is
  // queued behind another, or waits for a worker), not only with the first chunk or keep-alive.
  res.flushHeaders();
  const write = (chunks: unknown[]) => {
    for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
  };
  // Often enough that a client (DurableChatTransport) can take silence for a dead connection.
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), TURN_KEEP_ALIVE_MS);
  let encoder = o.encoder;
  if (encoder) write(encoder.begin());
  const made = (turn: number) => {
    encoder = o.encoderFor!(turn);
    write(encoder.begin());
    return encoder;
  };
  try {
    for await (const step of o.steps) {
      if (step.kind === 'paused') {
        if (encoder) write(encoder.pause());
        break;
      }
      write((encoder ?? made(step.event.turn)).encode(step.event));
    }
  } catch (err) {
    if (!o.gone.aborted) write((encoder ?? made(0)).failure(err instanceof Error ? err.message : String(err)));
  } finally {
    clearInterval(keepAlive);
    if (!o.gone.aborted && o.trailer) res.write(o.trailer);
    res.end();
  }
}

/** How long a message route waits, before it writes its stream's first byte, for the conversation to refuse the message. */
const REFUSAL_GRACE_MS = 5_000;

/**
 * A followed turn that ends with the conversation's refusal of its message, when there is one
 * (`refusal`: the message's result, resolved with the error it failed with, or undefined): a
 * refused message (no such agent, an unknown tool, a conversation that is ending) starts no turn,
 * and its stream would otherwise wait forever. A refusal that comes before the turn's first item
 * or within {@link REFUSAL_GRACE_MS} is thrown from here, before anything is written, so the
 * request is answered as `POST /conversations/:id/messages` answers it (400 with the reason); a
 * later one ends the stream.
 */
export async function unlessRefused<T>(
  refusal: Promise<unknown>,
  items: AsyncGenerator<T>,
): Promise<AsyncGenerator<T>> {
  let why: unknown;
  const refused = refusal.then((err) => {
    if (err === undefined) return new Promise<never>(() => undefined); // answered: no refusal to come
    why = err;
    return 'refused' as const;
  });
  const first = items.next();
  first.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const quiet = new Promise<'quiet'>((resolve) => (timer = setTimeout(() => resolve('quiet'), REFUSAL_GRACE_MS)));
  const early = await Promise.race([
    first.then(
      () => 'item' as const,
      () => 'broken' as const,
    ),
    refused,
    quiet,
  ]);
  clearTimeout(timer);
  // The stream broke at once (a refused first message's conversation is removed): the refusal says why.
  if (early === 'broken') await Promise.race([refused, new Promise((r) => setTimeout(r, 1_000))]);
  if (early === 'refused' || why !== undefined) {
    void items.return(undefined as never).catch(() => undefined);
    throw why;
  }
  return (async function* () {
    try {
      for (let next = first; ; next = items.next()) {
        const step = await Promise.race([
          next,
          refused.then(() => {
            throw why;
          }),
        ]);
        if (step.done) return;
        yield step.value;
      }
    } finally {
      void items.return(undefined as never).catch(() => undefined);
    }
  })();
}

/** What a sent message's result says of a refusal: the error it failed with, or undefined once it is answered. */
export function refusalOf(result: Promise<unknown>): Promise<unknown> {
  return result.then(
    () => undefined,
    (err: unknown) => err,
  );
}
