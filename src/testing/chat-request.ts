/** What a scripted model's handler reads and answers, whatever the wire format it was asked in. */

/** The parts of a chat-completions request a scripted model looks at. */
export interface ChatRequest {
  model: string;
  messages: Array<{
    role: string;
    content?: string | null;
    tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
    tool_call_id?: string;
    /** The images the message carried (a tool result's too), as the wire gave them: http(s) or `data:` URLs. */
    images?: string[];
  }>;
  tools?: Array<{
    type: 'function';
    function: { name: string; description?: string; parameters?: unknown; strict?: boolean };
  }>;
  temperature?: number;
  /** The wire format it came in: Chat Completions (the default) or Anthropic's Messages API, turned into this shape. */
  wire?: 'chat-completions' | 'anthropic' | 'responses';
  /** The request as it came, for other wire formats, and for Chat Completions requests with content parts (images). */
  raw?: Record<string, unknown>;
  [key: string]: unknown;
}

/** An answer: assistant text and/or tool calls, or a raw HTTP response (errors, malformed bodies). */
export type ChatAnswer =
  | {
      content?: string | null;
      toolCalls?: Array<{ id?: string; name: string; arguments: unknown }>;
      /** A streaming request gets the content in these pieces (default: word by word). */
      chunks?: string[];
      /** Pause before each streamed piece, in ms (default 0). */
      chunkDelayMs?: number;
      /** Answer a streaming request with a plain JSON completion, as servers that cannot stream do. */
      noStreaming?: boolean;
      /** Called as each streamed piece is written (the bench measures delivery latency with it). */
      onPiece?: (index: number) => void;
      /**
       * Awaited before each streamed piece (after `chunkDelayMs`), to hold the answer mid-way: e.g.
       * until a client has shown the pieces before it. Pieces go out as they are written.
       */
      beforePiece?: (index: number) => Promise<void> | void;
      /** Reasoning before the answer: Anthropic's thinking blocks (`signature` kept as given) or redacted ones; for the Responses API, reasoning items whose encrypted content is the signature. */
      reasoning?: Array<{ text: string; signature: string } | { redacted: string }>;
      /** Token details to report: cache reads and writes, reasoning. */
      usage?: {
        promptTokens?: number;
        completionTokens?: number;
        cachedPromptTokens?: number;
        cacheWriteTokens?: number;
        reasoningTokens?: number;
      };
    }
  | { http: { status: number; body?: unknown; headers?: Record<string, string> } };

/** Answers one chat request. */
export type ChatHandler = (request: ChatRequest) => ChatAnswer | Promise<ChatAnswer>;

/**
 * Another wire format's tools in the Chat Completions shape handlers read (`schema` is the field
 * that holds a tool's JSON Schema there: `input_schema`, `parameters`).
 */
export function chatCompletionsTools(
  tools: ReadonlyArray<Record<string, unknown>> | undefined,
  schema: string,
): Pick<ChatRequest, 'tools'> {
  if (!tools?.length) return {};
  return {
    tools: tools.map((t) => ({
      type: 'function' as const,
      function: { name: String(t.name), description: t.description as string | undefined, parameters: t[schema] },
    })),
  };
}

/**
 * A Chat Completions request with content parts (text and `image_url`) in the shape handlers
 * read: each message's text joined, its images in `images`, the request as sent in `raw`.
 */
export function withTextContent(request: ChatRequest): ChatRequest {
  if (!request.messages?.some((m) => Array.isArray(m.content))) return request;
  const raw = structuredClone(request) as Record<string, unknown>;
  const messages = request.messages.map((m) => {
    if (!Array.isArray(m.content)) return m;
    const parts = m.content as Array<{ type: string; text?: string; image_url?: { url: string } }>;
    const images = parts.filter((p) => p.type === 'image_url').map((p) => p.image_url?.url ?? '');
    const content = parts
      .filter((p) => p.type === 'text')
      .map((p) => p.text ?? '')
      .join('\n');
    return { ...m, content, ...(images.length ? { images } : {}) };
  });
  return { ...request, messages, raw };
}
