import type { ServerResponse } from 'node:http';
import { chatCompletionsTools, type ChatAnswer, type ChatRequest } from './chat-request';

/**
 * The scripted model server's OpenAI Responses API (`POST /v1/responses`): a request becomes the
 * same {@link ChatRequest} the Chat Completions route gives handlers (the raw body beside it),
 * and the answer goes back as a response (reasoning items with their encrypted content, a
 * message, function calls), or as its Server-Sent Events when the request streams.
 */

type Item = Record<string, unknown> & { type?: string; role?: string };

/** `input_image` parts as their URLs. */
function imagesOf(parts: Item[]): string[] {
  return parts.filter((p) => p.type === 'input_image').map((p) => String(p.image_url ?? p.file_id ?? ''));
}

/** A Responses API request as a {@link ChatRequest}. */
export function fromResponsesRequest(body: Record<string, unknown>): ChatRequest {
  const messages: ChatRequest['messages'] = [];
  if (typeof body.instructions === 'string' && body.instructions)
    messages.push({ role: 'system', content: body.instructions });
  const input: Item[] =
    typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : ((body.input ?? []) as Item[]);
  for (const item of input) {
    if (item.type === 'function_call') {
      const last = messages[messages.length - 1];
      const call = {
        id: String(item.call_id),
        function: { name: String(item.name), arguments: String(item.arguments) },
      };
      if (last?.role === 'assistant') last.tool_calls = [...(last.tool_calls ?? []), call];
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (item.type === 'function_call_output') {
      const output = Array.isArray(item.output) ? (item.output as Item[]) : [{ type: 'input_text', text: item.output }];
      const images = imagesOf(output);
      messages.push({
        role: 'tool',
        tool_call_id: String(item.call_id),
        content: output.map((p) => (p.type === 'input_text' ? String(p.text ?? '') : '')).join(''),
        ...(images.length ? { images } : {}),
      });
    } else if (item.type === 'reasoning') {
      continue; // in `raw` for tests that look; not part of the conversation's text
    } else if (item.role) {
      const content = Array.isArray(item.content)
        ? (item.content as Item[]).map((p) => String(p.text ?? '')).join('')
        : String(item.content ?? '');
      const images = Array.isArray(item.content) ? imagesOf(item.content as Item[]) : [];
      messages.push({
        role: item.role === 'developer' ? 'system' : String(item.role),
        content,
        ...(images.length ? { images } : {}),
      });
    }
  }
  const format = (body.text as { format?: { type?: string; schema?: unknown } } | undefined)?.format;
  return {
    model: String(body.model ?? ''),
    messages,
    ...chatCompletionsTools(body.tools as Array<Record<string, unknown>> | undefined, 'parameters'),
    ...(format?.type === 'json_schema'
      ? { response_format: { type: 'json_schema', json_schema: { name: 'output', schema: format.schema } } }
      : {}),
    stream: body.stream === true,
    wire: 'responses',
    raw: body,
  };
}

/** Writes a handler's answer as a response: reasoning items, the message, function calls, usage. */
export async function sendResponsesAnswer(
  res: ServerResponse,
  request: ChatRequest,
  answer: Exclude<ChatAnswer, { http: unknown }>,
  id: string,
): Promise<void> {
  const output: Item[] = [];
  (answer.reasoning ?? []).forEach((r, i) =>
    output.push({
      type: 'reasoning',
      id: `rs_${id}_${i}`,
      summary: 'text' in r && r.text ? [{ type: 'summary_text', text: r.text }] : [],
      // The scripted reasoning's signature plays OpenAI's encrypted content.
      encrypted_content: 'signature' in r ? r.signature : r.redacted,
    }),
  );
  const content = answer.content ?? null;
  if (content)
    output.push({
      type: 'message',
      id: `msg_${id}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: content, annotations: [] }],
    });
  (answer.toolCalls ?? []).forEach((c, i) =>
    output.push({
      type: 'function_call',
      id: `fc_${id}_${i}`,
      call_id: c.id ?? `call_${id}_${i}`,
      name: c.name,
      arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
      status: 'completed',
    }),
  );
  const inputTokens =
    answer.usage?.promptTokens ?? Math.ceil(JSON.stringify(request.raw ?? request.messages).length / 4);
  const outputTokens = answer.usage?.completionTokens ?? Math.ceil(JSON.stringify(output).length / 4);
  const response = {
    id: `resp_${id}`,
    object: 'response',
    created_at: 1_700_000_000,
    model: request.model,
    status: 'completed',
    output,
    usage: {
      input_tokens: inputTokens,
      input_tokens_details: { cached_tokens: answer.usage?.cachedPromptTokens ?? 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: answer.usage?.reasoningTokens ?? 0 },
      total_tokens: inputTokens + outputTokens,
    },
  };
  if (!request.stream || answer.noStreaming) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(response));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const delayMs = answer.chunkDelayMs ?? 0;
  const held: string[] = [];
  let sequence = 0;
  const event = (type: string, data: object) => {
    const text = `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`;
    if (delayMs > 0 || answer.beforePiece) res.write(text);
    else held.push(text);
  };
  event('response.created', { response: { ...response, status: 'in_progress', output: [] } });
  if (content) {
    const pieces = answer.chunks ?? content.match(/\S+\s*|\s+/g) ?? [content];
    for (const [i, piece] of pieces.entries()) {
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      await answer.beforePiece?.(i);
      if (res.destroyed) return;
      event('response.output_text.delta', {
        item_id: `msg_${id}`,
        output_index: output.findIndex((o) => o.type === 'message'),
        content_index: 0,
        delta: piece,
        logprobs: [],
      });
      answer.onPiece?.(i);
    }
  }
  event('response.completed', { response });
  res.end(held.join(''));
}
