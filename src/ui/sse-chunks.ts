/**
 * Reads a Server-Sent Events body as the JSON of its `data:` lines, one value per event, until
 * `[DONE]` or the end. Hand-written: the AI SDK's parser sits in `@ai-sdk/provider-utils`, a
 * dependency this module, which runs in pages, should not add for twenty lines.
 */
export async function* sseData(body: ReadableStream<Uint8Array>, stallMs?: number): AsyncGenerator<unknown> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await readWithin(reader, stallMs);
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
        const event = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = event
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
          .join('\n');
        if (data === '') continue;
        if (data === '[DONE]') return;
        yield JSON.parse(data);
      }
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * The reader's next chunk; with `stallMs`, an error when none comes that long (the server sends a
 * keep-alive comment every few seconds, so silence means the connection is dead, even where a
 * proxy in between keeps it open: Vite's dev proxy kept a dead API's stream open for minutes).
 */
async function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  stallMs: number | undefined,
): ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']> {
  if (stallMs === undefined) return reader.read();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void reader.cancel().catch(() => undefined);
      reject(new Error(`nothing came for ${stallMs / 1000} s (the server's keep-alives stopped)`));
    }, stallMs);
  });
  try {
    return await Promise.race([reader.read(), stalled]);
  } finally {
    clearTimeout(timer);
  }
}
