/** The floor's activities: a model call that only waits, one that only makes the HTTP request, a tool that does nothing. */

/** A model call that only waits the scripted model's delay. */
export async function waitLikeAModel(delayMs: number): Promise<void> {
  if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
}

const PAGE = `page 1: ${'lorem ipsum '.repeat(Number(process.env.BENCH_OUTPUT_BYTES ?? 2_000) / 12)}`;

/**
 * A model call that is only its HTTP request: the request an agent sends at step `step` (its
 * question and, per step so far, a tool call and a 2 KB tool output), to the bench's scripted
 * model, with the runtime's own `fetch` (what the `openai` client uses underneath), the answer
 * read and dropped. The model waits the delay its message asks for, as for the agents.
 */
export async function askTheModel(message: string, step: number): Promise<void> {
  const messages: unknown[] = [{ role: 'user', content: message }];
  for (let i = 0; i < step; i++) {
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: `call_${i}`, type: 'function', function: { name: 'fetch_doc', arguments: `{"page":${i + 1}}` } },
      ],
    });
    messages.push({ role: 'tool', tool_call_id: `call_${i}`, content: PAGE });
  }
  const response = await fetch(`${process.env.OPENAI_BASE_URL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'bench', messages }),
  });
  if (!response.ok) throw new Error(`the scripted model answered ${response.status}`);
  await response.json();
}

/** The floor's local tool. */
export async function returnAtOnce(): Promise<void> {}
