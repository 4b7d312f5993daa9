/**
 * The messages of a conversation and what a model call returns, in plain JSON: the provider
 * adapters translate them to and from each provider's wire format.
 */

/**
 * A tool call: its id (the model's, or one the core derives), the tool's name and its arguments
 * as the model wrote them (JSON text). Each adapter writes it in its provider's format.
 */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/**
 * One conversation message, provider-neutral: system and user text, the assistant's text, tool
 * calls and reasoning, and tool results. Each model adapter writes it in its provider's wire
 * format. (Its field names follow the OpenAI Chat Completions format it started from, which the
 * recorded histories keep.)
 */
export type ChatMessage = (
  | {
      role: 'system';
      content: string;
      /** Set on a summary of earlier messages (`[from, to)` of the run's messages): models see it after the system message. */
      summary?: { from: number; to: number };
      /** Set on a summary that quoted or covered facts deleted from memory since (see `forgetQuotes`). */
      forgotten?: ForgottenMark;
    }
  | {
      role: 'user';
      content: string;
      /** Images the user sent with the text: references, never the bytes (see {@link ImageRef}). */
      images?: ImageRef[];
      /** Sent while the turn ran, with `busy: "steer"`: it joined that turn (no turn of its own). */
      steered?: true;
      /** The turn that answers it (conversations): a branch's turns are not numbered one after another. */
      turn?: number;
      /** The id its sender gave it (`TurnInput.messageId`): a fork names the message it replaces by it. */
      messageId?: string;
      /** With a workspace: its committed state when the message was sent (a fork from here starts from it). Never sent to a provider. */
      workspace?: string;
    }
  | {
      role: 'assistant';
      content: string | null;
      tool_calls?: ToolCall[];
      /** The model's reasoning before this reply, kept byte for byte for the provider that wrote it. */
      reasoning?: ReasoningPart[];
      /** The person stopped the turn while the model wrote this: the text is what it had written by then. */
      stopped?: true;
    }
  | {
      role: 'tool';
      tool_call_id: string;
      content: string;
      /** `content` is the JSON of the non-string value the tool returned (see `ToolOutcome.json`), whole. Never sent to a provider. */
      json?: true;
      /** Images the tool returned (an MCP tool's image content, say), for models that accept images. */
      images?: ImageRef[];
      /** The call changed the workspace: the state it committed (a manifest's reference). Never sent to a provider. */
      workspace?: string;
    }
) & {
  /**
   * With memory by tokens: the message's size in tokens, as the model-call activity counted it the
   * first time it was sent (with a real tokenizer where the worker has one). Bookkeeping: never
   * sent to a provider.
   */
  tokens?: number;
};

/** What a summary that quoted (or covered) facts since deleted from memory is marked with (see `forgetQuotes`). */
export interface ForgottenMark {
  /** When the deletion was made (ISO 8601). */
  at: string;
  /** How many of the deleted facts it quoted or covered. */
  facts: number;
}

/**
 * An image in a conversation, by reference: the bytes never enter a workflow's history (a
 * conversation holding a few screenshots would soon pass Temporal's limits), only this does.
 * Either a URL the provider fetches itself, or a blob in the workers' blob store, which the
 * model-call activity reads and sends inline. Clients store the bytes and make the reference
 * (`startAgentRun({ images })`, `--image`, HTTP `images`).
 */
export interface ImageRef {
  /** An `http:` or `https:` URL: sent to the provider as it is. */
  url?: string;
  /** A blob in the blob store: `sha256:<64 hex digits>`, the hash of its bytes. */
  blob?: string;
  /** `image/png`, `image/jpeg`, `image/gif` or `image/webp` (set for blobs; known for URLs only when given). */
  mediaType?: string;
  /** Its size in bytes (blobs). */
  bytes?: number;
  /** A name to show for it (its file name). */
  name?: string;
}
/**
 * Reasoning a model returned with its reply. Providers need it back unchanged on the following
 * requests of the run (Anthropic checks a thinking block's signature; OpenAI's Responses API
 * continues from its encrypted reasoning), so its opaque fields are kept exactly as received, and
 * only the adapter of the provider that wrote it sends it back.
 */
export interface ReasoningPart {
  /** The wire format it belongs to (`ai-sdk`: a model of an AI SDK provider package). */
  provider: 'anthropic' | 'openai-responses' | 'ai-sdk';
  /** `thinking` or `redacted_thinking` (Anthropic), `reasoning` (an OpenAI reasoning item). */
  type: 'thinking' | 'redacted_thinking' | 'reasoning';
  /** Readable reasoning: Anthropic's thinking text, or the summary of an OpenAI reasoning item. */
  text?: string;
  /** Anthropic: the thinking block's signature. Opaque. */
  signature?: string;
  /** Anthropic: a redacted thinking block's data. Opaque. */
  data?: string;
  /** OpenAI Responses: the reasoning item's id. */
  id?: string;
  /** OpenAI Responses: `encrypted_content`, for stateless requests. Opaque. */
  encryptedContent?: string;
  /** AI SDK: the part's provider metadata (where providers keep signatures), as plain JSON. Opaque. */
  metadata?: Record<string, unknown>;
}

/** Tokens used, as the LLM endpoint reports them. */
export interface Usage {
  /** Input tokens, cached ones included. */
  promptTokens: number;
  /** Output tokens, reasoning included. */
  completionTokens: number;
  totalTokens: number;
  /** Input tokens read from the provider's prompt cache (billed at a discount). */
  cachedPromptTokens?: number;
  /** Input tokens written to the provider's prompt cache (Anthropic bills them at a premium). */
  cacheWriteTokens?: number;
  /** Output tokens the model spent reasoning. */
  reasoningTokens?: number;
  /** What the tokens cost, in US dollars, by the worker's price table (absent when a model has no price). */
  costUsd?: number;
  /** The same counts per model (by the name runs use: `anthropic:claude-sonnet-4-5`, a named model). */
  byModel?: Record<string, Omit<Usage, 'byModel'>>;
}

/** Upper bound on one page's JSON size: well under gRPC's default 4 MB message limit. */
export const MAX_PAGE_CHARS = 1_000_000;

/**
 * The messages the `messages` query returns for `{ offset, limit }`: at most `limit` messages and
 * about `maxChars` characters of JSON, but always at least one message when any remain, so a
 * caller paging through a conversation of huge tool outputs still makes progress.
 */
export function messagesPage(
  messages: readonly ChatMessage[],
  range: { offset?: number; limit?: number } = {},
  maxChars = MAX_PAGE_CHARS,
): ChatMessage[] {
  const offset = Math.max(0, range.offset ?? 0);
  const end =
    range.limit === undefined ? messages.length : Math.min(messages.length, offset + Math.max(0, range.limit));
  const page: ChatMessage[] = [];
  let chars = 0;
  for (let i = offset; i < end; i++) {
    chars += JSON.stringify(messages[i]).length;
    if (page.length > 0 && chars > maxChars) break;
    page.push(messages[i]);
  }
  return page;
}
