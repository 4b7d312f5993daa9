import type { ChatTransport, UIMessage, UIMessageChunk } from 'ai';
import { ReplayFilter } from './replay-filter';
import { sseData } from './sse-chunks';

/** Options of {@link DurableChatTransport}. */
export interface DurableChatTransportOptions {
  /** The chat routes' base (`durable-agents serve` serves `/api/chat`); default `/api/chat`. */
  api?: string;
  /** Headers of every request, e.g. `{ authorization: 'Bearer ...' }`; a function is called per request. */
  headers?: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>);
  /**
   * Fields added to every message's body: `agent` (which agent a new chat talks to) and `busy`
   * (what a message does while a turn runs: `enqueue`, `reject`, `interrupt` or `steer`).
   */
  body?: Record<string, unknown> | (() => Record<string, unknown> | Promise<Record<string, unknown>>);
  /** Default `same-origin`. */
  credentials?: 'omit' | 'same-origin' | 'include';
  /** Default: the global `fetch`. */
  fetch?: typeof fetch;
  /**
   * After a dropped stream (the network, a restarted API), how often to reconnect before the
   * message ends with an error (default 10), and the first pause (default 500 ms, doubling up to
   * 5 s). `false`: never.
   */
  reconnect?: { attempts?: number; delayMs?: number } | false;
  /** Told of each reconnect, e.g. to show "reconnecting..." (the attempt, from 1, and why). */
  onReconnect?: (attempt: number, reason: unknown) => void;
  /**
   * How long a stream may stay silent before it counts as dropped and is reconnected (default
   * 15 s): the server writes a keep-alive every 5 s, so silence means the API (or the connection to
   * it) is gone, whatever sits between (a dev server's proxy keeps a dead stream open).
   */
  stallMs?: number;
}

/** How long a stream may be silent before it is reconnected (the server's keep-alives come every 5 s). */
const DEFAULT_STALL_MS = 15_000;

/**
 * The AI SDK's chat transport for durable conversations (`useChat({ transport })`, or any
 * `Chat`): it speaks to the chat routes of `durable-agents serve` (or `createHttpApi`) as
 * `DefaultChatTransport` does, and adds what a durable turn makes possible:
 *
 * - **Stop that stops.** `stop()` cancels the durable turn too (`POST /api/chat/:id/stop`): the
 *   model call and the tools are cancelled, and the next message is answered at once. A reload
 *   or a lost connection never cancels: only `stop()` aborts a request.
 * - **Reconnects by itself.** A stream that drops before its end (the network, an API process
 *   that died or restarted) is picked up again from the conversation's durable log: the turn is
 *   replayed from its start and what the page showed already is skipped, so nothing is lost or
 *   shown twice, and the page needs no reload.
 *
 * It reads the stream as the server writes it; the message ids, parts and metadata are those of
 * `GET /api/chat/:id/messages`, so a page can load a chat and go on.
 */
export class DurableChatTransport<M extends UIMessage = UIMessage> implements ChatTransport<M> {
  /** `GET /api/chat/:id/stream` replays a turn from its start: the AI SDK resets the message it resumes. */
  readonly resumeStreamIsReplay = true;
  private readonly api: string;
  /** Per chat: the loaded history's last message, when it is a user message its page has no answer to yet. */
  private readonly unanswered = new Map<string, string>();

  constructor(private readonly options: DurableChatTransportOptions = {}) {
    this.api = (options.api ?? '/api/chat').replace(/\/+$/, '');
  }

  async sendMessages(
    request: Parameters<ChatTransport<M>['sendMessages']>[0],
  ): Promise<ReadableStream<UIMessageChunk>> {
    const { chatId, messages, abortSignal, trigger, messageId } = request;
    this.unanswered.delete(chatId);
    const body = {
      ...(await resolve(this.options.body)),
      ...(request.body ?? {}),
      id: chatId,
      messages,
      trigger,
      messageId,
    };
    const response = await this.fetch(this.api, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await this.headers(request.headers)) },
      body: JSON.stringify(body),
      signal: abortSignal,
    });
    if (!response.ok || !response.body) throw await ChatRequestError.of(response, messages[messages.length - 1]?.id);
    // Only `stop()` aborts a request: it stops the durable turn as well.
    abortSignal?.addEventListener('abort', () => void this.stop(chatId).catch(() => undefined), { once: true });
    const last = messages[messages.length - 1];
    // A reconnect follows the turn that answers this message, even if it ended meanwhile.
    const follow = last?.role === 'user' ? `?messageId=${encodeURIComponent(last.id)}` : '';
    return this.read(chatId, response.body, follow, abortSignal);
  }

  /**
   * Tells the transport the messages a page loaded (`GET /api/chat/:id/messages`) before it
   * resumes (`resume: true`, `resumeStream()`). When the last is a user message (its turn still
   * runs, or waits), the resume follows the turn that answers it, running or ended: a turn that
   * ends between the load and the resume is shown all the same, not lost until the next load.
   */
  loaded(chatId: string, messages: readonly UIMessage[]): void {
    const last = messages[messages.length - 1];
    if (last?.role === 'user') this.unanswered.set(chatId, last.id);
    else this.unanswered.delete(chatId);
  }

  async reconnectToStream(
    request: Parameters<ChatTransport<M>['reconnectToStream']>[0],
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    // Kept until the page sends a message: a resume that is aborted and asked again (React's
    // development mode mounts twice) follows the same turn.
    const waiting = this.unanswered.get(request.chatId);
    const follow = waiting === undefined ? '' : `?messageId=${encodeURIComponent(waiting)}`;
    const response = await this.fetch(`${this.api}/${encodeURIComponent(request.chatId)}/stream${follow}`, {
      headers: await this.headers(request.headers),
      signal: request.abortSignal,
    });
    if (response.status === 204) return null;
    if (!response.ok || !response.body) throw await ChatRequestError.of(response);
    return this.read(request.chatId, response.body, follow, request.abortSignal);
  }

  /**
   * Sends `text` into the chat's running turn (`busy: "steer"`): the model reads it before its
   * next call, and the page shows it in the running answer, as its `data-steered` part, on the
   * stream the page already reads. Unlike `sendMessage` with `busy: "steer"`, no user message is
   * added to the page and no second stream competes with the first. Resolves once the chat took
   * the message (with no turn running, it starts one, as any message does: the page then sees it
   * start through `watchChatTurns`); a refusal is a {@link ChatRequestError}.
   */
  async steer(chatId: string, text: string, options: { messageId?: string } = {}): Promise<{ messageId: string }> {
    const messageId = options.messageId ?? randomId();
    const response = await this.fetch(this.api, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await this.headers()) },
      body: JSON.stringify({
        ...(await resolve(this.options.body)),
        id: chatId,
        messages: [{ id: messageId, role: 'user', parts: [{ type: 'text', text }] }],
        busy: 'steer',
      }),
    });
    if (!response.ok) throw await ChatRequestError.of(response, messageId);
    // Taken: the running turn's own stream shows it; this one is not read.
    await response.body?.cancel().catch(() => undefined);
    return { messageId };
  }

  /**
   * Stops the chat's running turn (`POST /api/chat/:id/stop`); resolves once it has ended, with
   * its number and status (`cancelled`), or undefined when none ran. Called by a page's Stop
   * button (instead of `useChat`'s `stop()`), the page's request is left open: the turn's end
   * comes down its stream (`finish`, with `status: "cancelled"` and `stopped: true` in the
   * message's metadata), so the page shows it at once. `useChat`'s `stop()` calls it too, but
   * aborts the request first: the page then learns the status at its next load.
   */
  async stop(chatId: string): Promise<{ turn: number; status: string } | undefined> {
    const response = await this.fetch(`${this.api}/${encodeURIComponent(chatId)}/stop`, {
      method: 'POST',
      headers: await this.headers(),
      // Sent even if the page goes away meanwhile.
      keepalive: true,
    });
    if (response.status === 204 || response.status === 404) return undefined;
    if (!response.ok) throw await ChatRequestError.of(response);
    return (await response.json()) as { turn: number; status: string };
  }

  /** The chunks of a turn's stream, reconnecting when it drops (or goes silent) before its end. */
  private read(
    chatId: string,
    first: ReadableStream<Uint8Array>,
    follow: string,
    signal: AbortSignal | undefined,
  ): ReadableStream<UIMessageChunk> {
    const filter = new ReplayFilter();
    const reconnect = this.options.reconnect === false ? { attempts: 0 } : (this.options.reconnect ?? {});
    const attempts = reconnect.attempts ?? 10;
    const firstDelay = reconnect.delayMs ?? 500;
    const stallMs = this.options.stallMs ?? DEFAULT_STALL_MS;
    let body: ReadableStream<Uint8Array> | undefined = first;
    let ended = false;
    // The page stopped reading (it closed the message, or failed on a chunk): nothing more is
    // enqueued, and no reconnect is made for nobody.
    let cancelled = false;
    return new ReadableStream<UIMessageChunk>({
      start: async (controller) => {
        const push = (chunk: UIMessageChunk) => {
          if (cancelled) return;
          try {
            controller.enqueue(chunk);
          } catch {
            cancelled = true;
          }
        };
        const close = () => {
          if (cancelled) return;
          cancelled = true;
          try {
            controller.close();
          } catch {
            // closed by the page already
          }
        };
        for (let attempt = 0; ;) {
          let reason: unknown = new Error('the stream ended before the turn did');
          try {
            for await (const data of sseData(body!, stallMs)) {
              if (cancelled) break;
              const chunk = filter.accept(data as UIMessageChunk & { id?: string; delta?: string });
              if (chunk) {
                push(chunk);
                attempt = 0;
              }
              if ((data as UIMessageChunk).type === 'finish' || (data as UIMessageChunk).type === 'error') ended = true;
            }
          } catch (err) {
            reason = err;
          }
          if (ended || cancelled || signal?.aborted) return close();
          // Dropped (or silent) before its end: the durable log has the rest.
          if (++attempt > attempts) {
            push({ type: 'error', errorText: `lost the stream and could not reconnect: ${message(reason)}` });
            return close();
          }
          this.options.onReconnect?.(attempt, reason);
          await pause(Math.min(firstDelay * 2 ** (attempt - 1), 5_000), signal);
          if (cancelled || signal?.aborted) return close();
          const resumed = await this.resume(chatId, follow, signal).catch(() => undefined);
          if (resumed === null) return close(); // no turn to follow: nothing more to show
          filter.reconnected();
          // Not reachable yet: an empty stream, and the next attempt.
          body = resumed ?? new ReadableStream({ start: (c) => c.close() });
        }
      },
      cancel: () => {
        cancelled = true;
        void body?.cancel().catch(() => undefined);
      },
    });
  }

  /** The turn again from its start, or null when there is none (204). */
  private async resume(chatId: string, follow: string, signal: AbortSignal | undefined) {
    const response = await this.fetch(`${this.api}/${encodeURIComponent(chatId)}/stream${follow}`, {
      headers: await this.headers(),
      signal,
    });
    if (response.status === 204) return null;
    if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
    return response.body;
  }

  private fetch(url: string, init: RequestInit): Promise<Response> {
    return (this.options.fetch ?? fetch)(url, { credentials: this.options.credentials ?? 'same-origin', ...init });
  }

  private async headers(extra?: Record<string, string> | Headers): Promise<Record<string, string>> {
    const more = extra instanceof Headers ? Object.fromEntries(extra.entries()) : (extra ?? {});
    return { ...(await resolve(this.options.headers)), ...more };
  }
}

/**
 * A chat request the server refused or failed, with its words: `message` is the server's sentence
 * (not its JSON), `status` the HTTP status, `errorType` the server's (`Client.Busy` for a message
 * refused while a turn runs, with `busy: "reject"`), and `messageId` the user message the request
 * sent, which the chat did not take: drop it from the page, or mark it.
 */
export class ChatRequestError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly errorType?: string,
    readonly messageId?: string,
  ) {
    super(message);
    this.name = 'ChatRequestError';
  }

  /** The error a non-OK response says (`{"error", "errorType"}`, or its text). */
  static async of(response: Response, messageId?: string): Promise<ChatRequestError> {
    const text = await response.text().catch(() => '');
    let error = text || `HTTP ${response.status}`;
    let errorType: string | undefined;
    try {
      const body = JSON.parse(text) as { error?: unknown; errorType?: unknown };
      if (typeof body.error === 'string') error = body.error;
      if (typeof body.errorType === 'string') errorType = body.errorType;
    } catch {
      // not JSON: its text
    }
    return new ChatRequestError(error, response.status, errorType, messageId);
  }
}

/** An id for a message the transport makes itself. */
function randomId(): string {
  return typeof crypto !== 'undefined' && 'randomUUID' in crypto
    ? crypto.randomUUID()
    : `m-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

async function resolve<T extends object>(
  value: T | (() => T | Promise<T>) | undefined,
): Promise<T | Record<string, never>> {
  if (value === undefined) return {};
  return typeof value === 'function' ? await (value as () => T | Promise<T>)() : value;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((done) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), done()), { once: true });
  });
}
