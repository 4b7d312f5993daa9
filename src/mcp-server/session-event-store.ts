import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** How many messages a 2025-11-25 session keeps for a client that reconnects. */
export const SESSION_EVENTS_KEPT = 1000;

/**
 * What a 2025-11-25 session sent on its server-sent event streams, for a client whose stream broke
 * (a proxy's timeout, a network change, the server closing it to make the client poll): it comes
 * back with the last event id it saw (`Last-Event-ID`) and gets what it missed, a tool's result
 * included. With it the transport also sends each stream's priming event and the `retry` field.
 * One per session, in its process, as the session itself is; the last {@link SESSION_EVENTS_KEPT}
 * messages. Hand-written: the SDK's own store is an example, and keeps everything for ever.
 */
export class SessionEventStore implements EventStore {
  private readonly events = new Map<string, { streamId: string; message: JSONRPCMessage }>();
  private next = 0;

  constructor(private readonly kept = SESSION_EVENTS_KEPT) {}

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    // `<stream>_<n>`: ids grow, so "after" is a position; the stream is in the id for a lost entry.
    const eventId = `${streamId}_${String(this.next++).padStart(12, '0')}`;
    this.events.set(eventId, { streamId, message });
    if (this.events.size > this.kept) this.events.delete(this.events.keys().next().value!);
    return eventId;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.events.get(eventId)?.streamId ?? streamOf(eventId);
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const streamId = this.events.get(lastEventId)?.streamId ?? streamOf(lastEventId);
    if (streamId === undefined) return '';
    for (const [eventId, event] of this.events)
      if (event.streamId === streamId && eventId > lastEventId) await send(eventId, event.message);
    return streamId;
  }
}

/** The stream an id of ours names (`<stream>_<n>`), or undefined for one that is not ours. */
function streamOf(eventId: string): string | undefined {
  const at = eventId.lastIndexOf('_');
  return at > 0 && /^\d{12}$/.test(eventId.slice(at + 1)) ? eventId.slice(0, at) : undefined;
}
