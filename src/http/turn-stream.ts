import type { ServerResponse } from 'node:http';
import type { AgentEvent } from '../core';
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

/** Writes a followed turn as Server-Sent Events, one `data:` line per chunk, with keep-alive comments. */
export async function writeTurnStream(res: ServerResponse, o: WriteTurnOptions): Promise<void> {
  res.writeHead(200, o.headers);
  const write = (chunks: unknown[]) => {
    for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
  };
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
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
