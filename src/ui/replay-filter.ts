/** A UI message chunk, as far as the filter reads it. */
export interface Chunk {
  type: string;
  id?: string;
  delta?: string;
}

/**
 * Drops what a replayed stream repeats. After a reconnect the server replays the turn from its
 * start (`GET /api/chat/:id/stream`); the client has shown part of it. Text and reasoning deltas
 * are kept by position (a replay may cut the same text into other pieces: the live path and the
 * durable log batch it differently), every other chunk by how many times the same chunk came.
 */
export class ReplayFilter {
  /** Characters shown per text or reasoning part id. */
  private readonly shown = new Map<string, number>();
  /** How many times each other chunk (as JSON) was shown. */
  private readonly counts = new Map<string, number>();
  /** The same, for the stream being read now (reset at each reconnect). */
  private replayChars = new Map<string, number>();
  private replayCounts = new Map<string, number>();

  /** A new stream begins (a reconnect): it repeats what was shown from its start. */
  reconnected(): void {
    this.replayChars = new Map();
    this.replayCounts = new Map();
  }

  /** The chunk to pass on for `chunk`, or undefined when it was shown already. */
  accept<C extends Chunk>(chunk: C): C | undefined {
    if ((chunk.type === 'text-delta' || chunk.type === 'reasoning-delta') && chunk.id !== undefined) {
      const delta = chunk.delta ?? '';
      const at = this.replayChars.get(chunk.id) ?? 0;
      this.replayChars.set(chunk.id, at + delta.length);
      const shown = this.shown.get(chunk.id) ?? 0;
      if (at + delta.length <= shown) return undefined;
      this.shown.set(chunk.id, at + delta.length);
      return at >= shown ? chunk : { ...chunk, delta: delta.slice(shown - at) };
    }
    const key = JSON.stringify(chunk);
    const seen = (this.replayCounts.get(key) ?? 0) + 1;
    this.replayCounts.set(key, seen);
    if (seen <= (this.counts.get(key) ?? 0)) return undefined;
    this.counts.set(key, seen);
    return chunk;
  }
}
