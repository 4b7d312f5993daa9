import type { Client } from '@temporalio/client';

/**
 * Conversations this process sent a message to in the last {@link OPEN_FOR_MS}: the next message
 * to one skips the lookup before it (a round trip to the server on the way to the first token of
 * every chat message). Should one have closed meanwhile, the message starts it again, as it would
 * anyway; only an empty conversation a refused message started is then left to its idle timeout.
 */
const recent = new WeakMap<Client, Map<string, number>>();
const OPEN_FOR_MS = 60_000;
const RECENT_MAX = 1_000;

/** Whether this process sent `conversationId` a message in the last minute (or started it). */
export function recentlyOpen(client: Client, conversationId: string): boolean {
  const at = recent.get(client)?.get(conversationId);
  return at !== undefined && Date.now() - at < OPEN_FOR_MS;
}

/** Notes a conversation as open (it took a message, or was just started): the next message skips the lookup. */
export function seenOpen(client: Client, conversationId: string): void {
  let seen = recent.get(client);
  if (!seen) recent.set(client, (seen = new Map()));
  seen.delete(conversationId);
  seen.set(conversationId, Date.now());
  if (seen.size > RECENT_MAX) seen.delete(seen.keys().next().value!);
}

/** Forgets a conversation that is ending: the next message to it looks it up. */
export function forgetOpen(client: Client, conversationId: string): void {
  recent.get(client)?.delete(conversationId);
}
