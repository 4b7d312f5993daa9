import type { ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import type { TenantScope } from '../../core/fleet/tenants';
import { watchResource, workflowIdOf } from '../mcp-resources';

/** The most runs and conversations one listen stream follows (the first it names). */
export const MAX_FOLLOWED_PER_STREAM = 100;

/**
 * Resource subscriptions on 2026-07-28: a client names the resources it follows in its
 * `subscriptions/listen` request (`notifications.resourceSubscriptions`), and the listen stream
 * (the SDK's) carries `notifications/resources/updated` for each, from what is published on its
 * handler's bus. This watches each run or conversation named (from its durable event log, as a
 * 2025-11-25 session's `resources/subscribe` does) while some stream listens to it, and publishes
 * its changes. One per tenant's handler: a tenant's streams hear of its own runs only.
 */
export class ListenedResources {
  private readonly watched = new Map<string, { streams: number; stop: AbortController }>();

  constructor(
    private readonly client: Client,
    private readonly scope: TenantScope,
    private readonly updated: (uri: string) => void,
  ) {}

  /** Watches what a `subscriptions/listen` request (its parsed body) names, until its response ends. */
  follow(body: unknown, res: ServerResponse): void {
    // Ours only, each once, and a bounded number: each is a watch (a poll while it does not exist yet).
    const uris = [...new Set(resourceSubscriptionsOf(body).filter((uri) => workflowIdOf(uri) !== undefined))].slice(
      0,
      MAX_FOLLOWED_PER_STREAM,
    );
    if (uris.length === 0) return;
    for (const uri of uris) this.start(uri);
    res.once('close', () => {
      for (const uri of uris) this.end(uri);
    });
  }

  /** Stops every watch (the server closes). */
  close(): void {
    for (const { stop } of this.watched.values()) stop.abort();
    this.watched.clear();
  }

  private start(uri: string): void {
    const known = this.watched.get(uri);
    if (known) return void known.streams++;
    const stop = new AbortController();
    this.watched.set(uri, { streams: 1, stop });
    void watchResource(this.client, this.scope, workflowIdOf(uri)!, stop.signal, () => this.updated(uri));
  }

  private end(uri: string): void {
    const known = this.watched.get(uri);
    if (!known || --known.streams > 0) return;
    known.stop.abort();
    this.watched.delete(uri);
  }
}

/** The resource URIs a `subscriptions/listen` request names (none for any other request). */
export function resourceSubscriptionsOf(body: unknown): string[] {
  const request = body as { method?: unknown; params?: { notifications?: { resourceSubscriptions?: unknown } } };
  if (request?.method !== 'subscriptions/listen') return [];
  const uris = request.params?.notifications?.resourceSubscriptions;
  return Array.isArray(uris) ? uris.filter((u): u is string => typeof u === 'string') : [];
}
