import type { ServerResponse } from 'node:http';
import { chatCompletionsTools, type ChatAnswer, type ChatRequest } from './chat-request';

/**
 * The scripted model server's Anthropic Messages API (`POST /v1/messages`): a request is turned
 * into the same {@link ChatRequest} the Chat Completions route gives handlers (so one script
 * answers any adapter), with the raw body beside it; the answer goes back as a Messages API
 * message, or as its Server-Sent Events when the request streams.
 */

type Block = Record<string, unknown> & { type: string };

/** A Messages API request as a {@link ChatRequest}: system, user and tool messages, assistant tool calls. */
export function fromAnthropicRequest(body: Record<string, unknown>): ChatRequest {
  const messages: ChatRequest['messages'] = [];
  const system = body.system;
  const systemText = typeof system === 'string' ? system : Array.isArray(system) ? textOf(system as Block[]) : '';
  if (systemText) messages.push({ role: 'system', content: systemText });
  for (const m of (body.messages ?? []) as Array<{ role: string; content: string | Block[] }>) {
    const blocks: Block[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    if (m.role === 'user') {
      for (const b of blocks.filter((x) => x.type === 'tool_result')) {
        const inner = typeof b.content === 'string' ? [{ type: 'text', text: b.content }] : (b.content ?? []);
        const images = imagesOf(inner as Block[]);
        messages.push({
          role: 'tool',
          tool_call_id: String(b.tool_use_id),
          content: textOf(inner as Block[]),
          ...(images.length ? { images } : {}),
        });
      }
      const text = textOf(blocks);
      const images = imagesOf(blocks);
      if (text.trim() || images.length)
        messages.push({ role: 'user', content: text, ...(images.length ? { images } : {}) });
    } else {
      const calls = blocks
        .filter((b) => b.type === 'tool_use')
        .map((b) => ({
          id: String(b.id),
          function: { name: String(b.name), arguments: JSON.stringify(b.input ?? {}) },
        }));
      const text = textOf(blocks);
      messages.push({
        role: 'assistant',
        content: text.trim() ? text : null,
        ...(calls.length ? { tool_calls: calls } : {}),
      });
    }
  }
  const format = (body.output_config as { format?: { schema?: unknown } } | undefined)?.format;
  return {
    model: String(body.model ?? ''),
    messages,
    ...chatCompletionsTools(body.tools as Array<Record<string, unknown>> | undefined, 'input_schema'),
    ...(typeof body.temperature === 'number' ? { temperature: body.temperature } : {}),
    ...(format?.schema
      ? { response_format: { type: 'json_schema', json_schema: { name: 'output', schema: format.schema } } }
      : {}),
    stream: body.stream === true,
    wire: 'anthropic',
    raw: body,
  };
}

/** Image blocks as URLs: base64 sources as `data:` URLs. */
function imagesOf(blocks: Block[]): string[] {
  return blocks
    .filter((b) => b.type === 'image')
    .map((b) => {
      const source = b.source as { type: string; media_type?: string; data?: string; url?: string };
      return source.type === 'base64' ? `data:${source.media_type};base64,${source.data}` : String(source.url);
    });
}

function textOf(blocks: Block[]): string {
  return blocks
    .filter((b) => b.type === 'text')
    .map((b) => String(b.text))
    .join('');
}

/** Writes a handler's answer as a Messages API reply: thinking, text and tool_use blocks, with usage. */
export async function sendAnthropicAnswer(
  res: ServerResponse,
  request: ChatRequest,
  answer: Exclude<ChatAnswer, { http: unknown }>,
  id: string,
): Promise<void> {
  const blocks: Block[] = [];
  for (const r of answer.reasoning ?? []) {
    if ('redacted' in r) blocks.push({ type: 'redacted_thinking', data: r.redacted });
    else blocks.push({ type: 'thinking', thinking: r.text, signature: r.signature });
  }
  const content = answer.content ?? null;
  if (content) blocks.push({ type: 'text', text: content });
  (answer.toolCalls ?? []).forEach((c, i) =>
    blocks.push({
      type: 'tool_use',
      id: c.id ?? `toolu_${id}_${i}`,
      name: c.name,
      input: typeof c.arguments === 'string' ? JSON.parse(c.arguments || '{}') : (c.arguments ?? {}),
    }),
  );
  const stopReason = answer.toolCalls?.length ? 'tool_use' : 'end_turn';
  const raw = JSON.stringify(request.raw ?? request.messages);
  const cached = answer.usage?.cachedPromptTokens ?? 0;
  const written = answer.usage?.cacheWriteTokens ?? 0;
  const usage = {
    // A scripted count is all input tokens (the seam's meaning); Anthropic's input_tokens leaves the cache out.
    input_tokens: Math.max(
      answer.usage?.promptTokens === undefined ? 1 : 0,
      (answer.usage?.promptTokens ?? Math.ceil(raw.length / 4)) - cached - written,
    ),
    output_tokens: answer.usage?.completionTokens ?? Math.ceil(JSON.stringify(blocks).length / 4),
    cache_read_input_tokens: cached,
    cache_creation_input_tokens: written,
    ...(answer.usage?.reasoningTokens
      ? { output_tokens_details: { thinking_tokens: answer.usage.reasoningTokens } }
      : {}),
  };
  const message = { id: `msg_${id}`, type: 'message', role: 'assistant', model: request.model, content: blocks };
  if (!request.stream || answer.noStreaming) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...message, stop_reason: stopReason, stop_sequence: null, usage }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const delayMs = answer.chunkDelayMs ?? 0;
  const held: string[] = [];
  const event = (type: string, data: object) => {
    const text = `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    if (delayMs > 0 || answer.beforePiece) res.write(text);
    else held.push(text);
  };
  event('message_start', {
    message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
  });
  for (const [index, block] of blocks.entries()) {
    if (block.type === 'thinking') {
      event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: block.thinking } });
      event('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } });
    } else if (block.type === 'redacted_thinking') {
      event('content_block_start', { index, content_block: block });
    } else if (block.type === 'text') {
      event('content_block_start', { index, content_block: { type: 'text', text: '' } });
      const pieces = answer.chunks ?? String(block.text).match(/\S+\s*|\s+/g) ?? [String(block.text)];
      for (const [i, piece] of pieces.entries()) {
        if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
        await answer.beforePiece?.(i);
        if (res.destroyed) return;
        event('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
        answer.onPiece?.(i);
      }
    } else {
      const json = JSON.stringify(block.input);
      const half = Math.floor(json.length / 2);
      event('content_block_start', { index, content_block: { ...block, input: {} } });
      event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json.slice(0, half) } });
      event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json.slice(half) } });
    }
    event('content_block_stop', { index });
  }
  event('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage });
  event('message_stop', {});
  res.end(held.join(''));
}
