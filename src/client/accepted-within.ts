import type { Client } from '@temporalio/client';
import { ClientError } from './client-error';

/**
 * How long a surface (HTTP, A2A, MCP) waits for a worker to accept a message before keeping it
 * queued instead (no worker runs, or the one that ran the conversation died): the message is
 * never lost, and the request is answered (202, or a stream or task that waits for the turn).
 */
export const ACCEPT_WITHIN_MS = 10_000;

/**
 * `send` (an Update waiting for acceptance), or `'not accepted'` when no worker accepted it within
 * `acceptWithinMs`: the call is cancelled where the connection can cancel it, and left to end by
 * itself where it cannot (a worker's native connection).
 */
export async function acceptedWithin<T>(
  client: Client,
  send: (signal: AbortSignal) => Promise<T>,
  wait: { acceptWithinMs: number; signal?: AbortSignal },
): Promise<T | 'not accepted'> {
  const give = new AbortController();
  const signal = wait.signal ? AbortSignal.any([give.signal, wait.signal]) : give.signal;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'not accepted'>((resolve) => {
    timer = setTimeout(() => resolve('not accepted'), wait.acceptWithinMs);
  });
  const sending = client.withAbortSignal(signal, () => send(signal));
  try {
    const first = await Promise.race([sending, timedOut]);
    if (first === 'not accepted') {
      give.abort();
      sending.catch(() => undefined);
      // The caller left meanwhile: nothing more is sent for them.
      wait.signal?.throwIfAborted();
    }
    return first;
  } finally {
    clearTimeout(timer);
  }
}

/** What a message queued because no worker accepted it says to a caller that waits for its result. */
export function notAcceptedYet(conversationId: string, waitedMs: number): ClientError {
  return new ClientError(
    'queued',
    `no worker accepted the message for "${conversationId}" within ${Math.round(waitedMs / 1000)} s (is a worker running on its task queue?): it is queued, durably, and the conversation answers it once a worker runs it; its answer will be in the conversation's history and event stream`,
    conversationId,
  );
}
