import { sseData } from './sse-chunks';

/** A turn of a chat starting or ending, whoever sent its message. */
export type ChatTurnEvent =
  | { type: 'turn-started'; turn: number; messageId?: string }
  | { type: 'turn-finished'; turn: number; status: string }
  /** Another branch was made current (`POST /api/chat/:id/branch`): load the chat again. */
  | { type: 'branch-switched'; branch: string };

/** Options of {@link watchChatTurns}. */
export interface WatchChatTurnsOptions {
  /** The chat routes' base; default `/api/chat`. */
  api?: string;
  headers?: Record<string, string>;
  /** Ends the watch. */
  signal?: AbortSignal;
  /** Default: the global `fetch`. */
  fetch?: typeof fetch;
  /** How long to wait before watching again after the stream ended or failed (default 1 s). */
  retryMs?: number;
}

/**
 * Follows a chat's turns as they start and end (`GET /api/chat/:id/turns`), whoever sent their
 * message: a second tab, a phone, a script. A page that sees a turn start that it did not send
 * loads the chat (`GET /api/chat/:id/messages`) and resumes the turn (`useChat`'s `resumeStream`),
 * so every open page shows every turn live. Watches until `signal` aborts, reconnecting as needed.
 */
export async function watchChatTurns(
  chatId: string,
  onTurn: (event: ChatTurnEvent) => void,
  options: WatchChatTurnsOptions = {},
): Promise<void> {
  const api = (options.api ?? '/api/chat').replace(/\/+$/, '');
  const get = options.fetch ?? fetch;
  while (!options.signal?.aborted) {
    try {
      const response = await get(`${api}/${encodeURIComponent(chatId)}/turns`, {
        headers: options.headers,
        signal: options.signal,
      });
      if (response.ok && response.status !== 204 && response.body)
        // Silent for 15 s (keep-alives come every 5 s): the API is gone, whatever proxy holds the connection.
        for await (const data of sseData(response.body, 15_000)) {
          const event = data as ChatTurnEvent | { type: 'error' };
          if (event.type === 'turn-started' || event.type === 'turn-finished' || event.type === 'branch-switched')
            onTurn(event);
        }
    } catch {
      // A dropped watch (the network, a restarted API): watch again.
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, options.retryMs ?? 1_000);
      options.signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
  }
}
