import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import { createHttpApi } from '../src/http/http-api';

/**
 * How fast a streamed answer reaches a client through each door of the HTTP API: our own
 * Server-Sent Events (`POST /conversations/:id/messages`, `Accept: text/event-stream`), the AI
 * SDK's UI message stream (`POST /api/chat`) and AG-UI (`POST /ag-ui`). The same answer each time
 * (the scripted model writes `words` words, one every 20 ms), in a new conversation; for every
 * word, the time from the model server writing it to the client reading its last character.
 */
export interface ProtocolLatencies {
  sse: number[];
  ui: number[];
  agui: number[];
  /** One-step runs of the agent `reader`, answered: `POST /runs`, and A2A's blocking `SendMessage`. */
  roundTrip: { runs: number[]; turns: number[]; a2a: number[] };
}

/** The text each protocol carries, from one of its SSE `data:` payloads. */
const TEXT: Record<'sse' | 'ui' | 'agui', (data: any) => string | undefined> = {
  sse: (e) => (e.type === 'text_delta' ? e.delta : undefined),
  ui: (c) => (c.type === 'text-delta' ? c.delta : undefined),
  agui: (e) => (e.type === 'TEXT_MESSAGE_CONTENT' ? e.delta : undefined),
};

export async function protocolLatency(
  client: Client,
  taskQueue: string,
  words: number,
  /** When the model server wrote each word of the answer whose message carries `tag`. */
  sentTimes: (tag: string) => number[],
): Promise<ProtocolLatencies> {
  const server = createHttpApi({ client, taskQueue, chatPage: false });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const out: ProtocolLatencies = { sse: [], ui: [], agui: [], roundTrip: { runs: [], turns: [], a2a: [] } };
    for (const kind of ['sse', 'ui', 'agui'] as const) {
      const tag = randomUUID();
      const message = `stream ${words} words; delay 20 ms; id ${tag}`;
      const id = `bench-${kind}-${tag}`;
      const request =
        kind === 'sse'
          ? fetch(`${base}/conversations/${id}/messages`, {
              method: 'POST',
              headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
              body: JSON.stringify({ message }),
            })
          : kind === 'ui'
            ? fetch(`${base}/api/chat`, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({
                  id,
                  messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: message }] }],
                }),
              })
            : fetch(`${base}/ag-ui`, {
                method: 'POST',
                headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
                body: JSON.stringify({
                  threadId: id,
                  runId: 'r1',
                  messages: [{ id: 'm1', role: 'user', content: message }],
                }),
              });
      const received = await readText(await request, TEXT[kind]);
      const sent = sentTimes(tag);
      let end = 0;
      for (let i = 0; i < words; i++) {
        end += `word${i} `.length;
        out[kind].push(received[end - 1] - sent[i]);
      }
    }
    // The round trip of a one-step agent, the two doors taking turns.
    const json = (path: string, body: unknown) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
        body: JSON.stringify(body),
      });
    for (let i = 0; i < ROUND_TRIPS; i++) {
      let t = performance.now();
      const run = await json('/runs', { agent: 'reader', message: 'read 1 pages; delay 0 ms' });
      if (!run.ok) throw new Error(`POST /runs: ${run.status} ${await run.text()}`);
      out.roundTrip.runs.push(performance.now() - t);
      // The same durable work as an A2A task: a turn of a new conversation.
      t = performance.now();
      const turn = await json(`/conversations/bench-turn-${randomUUID()}/messages`, {
        agent: 'reader',
        message: 'read 1 pages; delay 0 ms',
      });
      if (!turn.ok) throw new Error(`POST /conversations/:id/messages: ${turn.status} ${await turn.text()}`);
      out.roundTrip.turns.push(performance.now() - t);
      t = performance.now();
      const task = await json('/a2a/reader', {
        jsonrpc: '2.0',
        id: i,
        method: 'SendMessage',
        params: {
          message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'read 1 pages; delay 0 ms' }] },
        },
      });
      const answer = (await task.json()) as { result?: { task?: { status?: { state?: string } } }; error?: unknown };
      if (answer.result?.task?.status?.state !== 'TASK_STATE_COMPLETED')
        throw new Error(`A2A SendMessage did not complete: ${JSON.stringify(answer)}`);
      out.roundTrip.a2a.push(performance.now() - t);
    }
    return out;
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

/** One-step runs per door per round for the round trip. */
const ROUND_TRIPS = Number(process.env.BENCH_ROUND_TRIPS ?? 10);

/** Reads an SSE response to its end; for each character of text, when it arrived. */
async function readText(response: Response, text: (data: any) => string | undefined): Promise<number[]> {
  if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  const arrived: number[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
    const now = performance.now();
    buffer += decoder.decode(bytes, { stream: true });
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      for (const line of event.split('\n')) {
        if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
        const delta = text(JSON.parse(line.slice(6)));
        if (delta) for (let i = 0; i < delta.length; i++) arrived.push(now);
      }
    }
  }
  return arrived;
}
