/**
 * Reads a Server-Sent Events body as the JSON of its `data:` lines, one value per event, until
 * `[DONE]` or the end. Hand-written: the AI SDK's parser sits in `@ai-sdk/provider-utils`, a
 * dependency this module, which runs in pages, should not add for twenty lines.
 */
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<unknown> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
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
