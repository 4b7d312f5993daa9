import { randomUUID } from 'node:crypto';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { startHttpApi } from '../helpers/http-api';
import { lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/**
 * The live path (src/contracts/live-text.ts): with its worker in the HTTP API's process, a turn's
 * events and its text reach a waiting response as the workflow records them and as the model
 * writes them, not when the durable log next shows them. The worker here batches streamed text
 * once a minute, so only the live path can show a word while the model is still writing.
 */
const temporal = useTestTemporal();

/** Reads SSE `data:` chunks, calling `onChunk` with each as it arrives. */
async function readChunks(response: Response, onChunk: (chunk: any) => void): Promise<any[]> {
  const chunks: any[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(bytes, { stream: true });
    for (let cut; (cut = buffer.indexOf('\n\n')) >= 0;) {
      const line = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      const chunk = JSON.parse(line.slice(6));
      chunks.push(chunk);
      onChunk(chunk);
    }
  }
  return chunks;
}

it('streams each word to useChat and AG-UI while the model writes, each once and in order', async () => {
  // The model writes a piece only once the client has shown as many text chunks as pieces came
  // before it: without the live path the first chunk would come after the last piece (deadlock).
  let shown = 0;
  let waiters: Array<() => void> = [];
  const seen = () => {
    shown += 1;
    for (const w of waiters.splice(0)) w();
  };
  const until = async (n: number) => {
    while (shown < n) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  const m = await startModel((req: ChatRequest) => {
    shown = 0;
    waiters = [];
    const pieces = [`${lastOf(req, 'user')}: `, 'One ', 'two ', 'three.'];
    return { content: pieces.join(''), chunks: pieces, beforePiece: (i: number) => until(i) };
  });
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, {
    baseURL: m.baseURL,
    streaming: { batchIntervalMs: 60_000 },
  });
  const api = await startHttpApi({ client: t.client, taskQueue });
  try {
    await worker.runUntil(async () => {
      const id = `live-${randomUUID()}`;
      for (const text of ['first', 'second']) {
        const response = await fetch(`${api.base}/api/chat`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ id, messages: [{ id: randomUUID(), role: 'user', parts: [{ type: 'text', text }] }] }),
        });
        expect(response.status).toBe(200);
        const chunks = await readChunks(response, (c) => {
          if (c.type === 'text-delta') seen();
        });
        const deltas = chunks.filter((c) => c.type === 'text-delta').map((c) => c.delta);
        expect(deltas).toEqual([`${text}: `, 'One ', 'two ', 'three.']);
        expect(chunks.filter((c) => c.type === 'start' || c.type === 'finish').map((c) => c.type)).toEqual([
          'start',
          'finish',
        ]);
        expect(chunks[0]).toMatchObject({ type: 'start', messageId: expect.stringMatching(/-turn-\d$/) });
        expect(chunks.at(-1)).toMatchObject({ type: 'finish', messageMetadata: { status: 'completed' } });
      }

      // AG-UI follows the same way.
      const response = await fetch(`${api.base}/ag-ui`, {
        method: 'POST',
        headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
        body: JSON.stringify({
          threadId: id,
          runId: 'r3',
          messages: [{ id: randomUUID(), role: 'user', content: 'third' }],
        }),
      });
      const events = await readChunks(response, (e) => {
        if (e.type === 'TEXT_MESSAGE_CONTENT') seen();
      });
      const deltas = events.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').map((e) => e.delta);
      expect(deltas).toEqual(['third: ', 'One ', 'two ', 'three.']);
      expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED' });
    });
  } finally {
    api.close();
    await m.close();
  }
});
