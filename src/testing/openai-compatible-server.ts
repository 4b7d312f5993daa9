import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fromAnthropicRequest, sendAnthropicAnswer } from './anthropic-wire';
import { withTextContent, type ChatHandler, type ChatRequest } from './chat-request';
import { fromResponsesRequest, sendResponsesAnswer } from './responses-wire';
import { embeddingsAnswer } from './scripted-embeddings';

export type { ChatAnswer, ChatHandler, ChatRequest } from './chat-request';

/** A running server; `baseURL` is what `OPENAI_BASE_URL` should be. */
export interface OpenAICompatibleServer {
  baseURL: string;
  /** Every chat request received, in order. */
  requests: ChatRequest[];
  close(): Promise<void>;
}

/**
 * A scripted model server on loopback, speaking the providers' wire formats: OpenAI's Chat
 * Completions (`POST /v1/chat/completions`, `GET /v1/models`), OpenAI's Responses API
 * (`POST /v1/responses`), Anthropic's Messages API (`POST /v1/messages`; point
 * `ANTHROPIC_BASE_URL` at the server without `/v1`) and embeddings (`POST /v1/embeddings`, deterministic:
 * see scriptedEmbedding). Every request
 * reaches the handler in the Chat Completions shape, so one script answers any adapter. The
 * providers' real SDKs talk to it, so the demo and the tests exercise the same HTTP path as
 * production.
 *
 * @experimental The test kit (`durable-agents/testing`) grows; names may change.
 */
export async function startOpenAICompatibleServer(
  handler: ChatHandler,
  options: { port?: number; model?: string } = {},
): Promise<OpenAICompatibleServer> {
  const requests: ChatRequest[] = [];
  const modelName = options.model ?? 'offline-demo';
  let counter = 0;
  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((err) =>
      send(res, 500, { error: { message: String(err?.message ?? err), type: 'server_error' } }),
    );
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '').split('?')[0].replace(/\/+$/, '');
    if (req.method === 'GET' && path.endsWith('/models'))
      return send(res, 200, { object: 'list', data: [{ id: modelName, object: 'model', owned_by: 'durable-agents' }] });
    if (req.method === 'POST' && path.endsWith('/messages')) return answerOther(req, res, 'anthropic');
    if (req.method === 'POST' && path.endsWith('/responses')) return answerOther(req, res, 'responses');
    if (req.method === 'POST' && path.endsWith('/embeddings')) {
      let answer: Record<string, unknown> | undefined;
      try {
        answer = embeddingsAnswer(JSON.parse(await readBody(req)));
      } catch {
        // Not JSON: the same answer as a body without "input".
      }
      return answer
        ? send(res, 200, answer)
        : send(res, 400, { error: { message: '"input" must be a string or strings', type: 'invalid_request_error' } });
    }
    if (req.method !== 'POST' || !path.endsWith('/chat/completions'))
      return send(res, 404, { error: { message: `no route ${req.method} ${path}`, type: 'invalid_request_error' } });
    let request: ChatRequest;
    try {
      request = withTextContent(JSON.parse(await readBody(req)) as ChatRequest);
    } catch {
      return send(res, 400, { error: { message: 'request body is not JSON', type: 'invalid_request_error' } });
    }
    requests.push(request);
    const answer = await handler(request);
    if ('http' in answer) return send(res, answer.http.status, answer.http.body ?? {}, answer.http.headers);
    counter += 1;
    const toolCalls = (answer.toolCalls ?? []).map((c, i) => ({
      id: c.id ?? `call_${counter}_${i}`,
      type: 'function',
      function: {
        name: c.name,
        arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
      },
    }));
    const content = answer.content ?? null;
    // A request in the legacy `functions` format gets the legacy answer: one `function_call`.
    const legacy = Array.isArray(request.functions) && toolCalls.length > 0;
    const promptTokens = answer.usage?.promptTokens ?? Math.ceil(JSON.stringify(request.messages).length / 4);
    const completionTokens =
      answer.usage?.completionTokens ?? Math.ceil(((content ?? '').length + JSON.stringify(toolCalls).length) / 4);
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
      ...(answer.usage?.cachedPromptTokens
        ? { prompt_tokens_details: { cached_tokens: answer.usage.cachedPromptTokens } }
        : {}),
      ...(answer.usage?.reasoningTokens
        ? { completion_tokens_details: { reasoning_tokens: answer.usage.reasoningTokens } }
        : {}),
    };
    if (request.stream === true && !answer.noStreaming) {
      const pieces = answer.chunks ?? (content ? (content.match(/\S+\s*|\s+/g) ?? [content]) : []);
      return streamAnswer(
        res,
        { id: `chatcmpl-${counter}`, model: request.model || modelName, created: 1_700_000_000 + counter },
        pieces,
        toolCalls,
        legacy,
        usage,
        answer.chunkDelayMs ?? 0,
        answer.onPiece,
        answer.beforePiece,
      );
    }
    send(res, 200, {
      id: `chatcmpl-${counter}`,
      object: 'chat.completion',
      created: 1_700_000_000 + counter,
      model: request.model || modelName,
      choices: [
        {
          index: 0,
          message: legacy
            ? { role: 'assistant', content, function_call: toolCalls[0].function }
            : { role: 'assistant', content, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
          finish_reason: legacy ? 'function_call' : toolCalls.length ? 'tool_calls' : 'stop',
        },
      ],
      usage,
    });
  }

  /** The other wire formats: the request in the Chat Completions shape for the handler, the answer in its own. */
  async function answerOther(
    req: IncomingMessage,
    res: ServerResponse,
    wire: 'anthropic' | 'responses',
  ): Promise<void> {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(await readBody(req)) as Record<string, unknown>;
    } catch {
      return send(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'body is not JSON' } });
    }
    const request = wire === 'anthropic' ? fromAnthropicRequest(body) : fromResponsesRequest(body);
    requests.push(request);
    const answer = await handler(request);
    if ('http' in answer) return send(res, answer.http.status, answer.http.body ?? {}, answer.http.headers);
    counter += 1;
    return (wire === 'anthropic' ? sendAnthropicAnswer : sendResponsesAnswer)(res, request, answer, String(counter));
  }

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A streamed answer, as OpenAI sends it: Server-Sent Events of `chat.completion.chunk`s (the role
 * first, then text pieces, tool calls with their arguments in two pieces, the finish reason, the
 * usage), then `data: [DONE]`. With a pause between pieces each event is written as it comes;
 * without one the model has the whole answer at once, and it goes out in one write, as a server
 * holding it all would send it (separate writes would cost the client a wakeup per event, which
 * a real model's pieces pay while it is still generating, not after).
 */
async function streamAnswer(
  res: ServerResponse,
  base: { id: string; model: string; created: number },
  pieces: string[],
  toolCalls: Array<{ id: string; type: string; function: { name: string; arguments: string } }>,
  legacy: boolean,
  usage: unknown,
  delayMs: number,
  onPiece?: (index: number) => void,
  beforePiece?: (index: number) => Promise<void> | void,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const held: string[] = [];
  const write = (event: string) => (delayMs > 0 || beforePiece ? res.write(event) : held.push(event));
  const chunk = (delta: unknown, finish: string | null = null, extra: object = {}) =>
    write(
      `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`,
    );
  chunk({ role: 'assistant', content: '' });
  for (const [index, piece] of pieces.entries()) {
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    await beforePiece?.(index);
    if (res.destroyed) return;
    chunk({ content: piece });
    onPiece?.(index);
  }
  toolCalls.slice(0, legacy ? 1 : undefined).forEach((c, index) => {
    const half = Math.floor(c.function.arguments.length / 2);
    if (legacy) {
      chunk({ function_call: { name: c.function.name, arguments: c.function.arguments.slice(0, half) } });
      chunk({ function_call: { arguments: c.function.arguments.slice(half) } });
    } else {
      chunk({
        tool_calls: [
          {
            index,
            id: c.id,
            type: 'function',
            function: { name: c.function.name, arguments: c.function.arguments.slice(0, half) },
          },
        ],
      });
      chunk({ tool_calls: [{ index, function: { arguments: c.function.arguments.slice(half) } }] });
    }
  });
  chunk({}, legacy && toolCalls.length ? 'function_call' : toolCalls.length ? 'tool_calls' : 'stop');
  write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage })}\n\n`);
  res.end(`${held.join('')}data: [DONE]\n\n`);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(text);
}
