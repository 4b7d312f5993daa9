import { randomUUID } from 'node:crypto';
import { joinLivePieces, liveText, type LiveBridge, type LiveItem } from '../contracts/live-text';
import { withoutPassword } from '../memory-store/sql-client';

/**
 * The live path between processes over Redis Pub/Sub (`AGENT_LIVE_URL=redis://host:port[/db]`,
 * `rediss://` with TLS, a password in the URL): each model call's text and each event a workflow
 * records, published by the worker that has them on its workflow's channel, reach every API
 * replica (and worker) with a reader of that workflow, which merge them with the durable log as
 * in one process (see contracts/live-text.ts). Redis is never the record: whatever it drops (down,
 * restarting, a slow reader cut off) is shown from the log, once, in order.
 *
 * Two connections per process: one publishes, one subscribes (a subscribed Redis connection can do
 * nothing else). Commands are not queued while Redis is away: a piece written then is dropped at
 * once, never held back to arrive late. The client reconnects by itself and subscribes again.
 *
 * Hand-written over the `redis` client (an optional peer dependency): the channel is a few lines of
 * Pub/Sub, and no maintained library carries our items between the two sides.
 */

/** The packages `AGENT_LIVE_URL` needs. */
const REDIS_PACKAGE = 'redis';

/** The longest a reconnecting client waits between attempts. */
const MAX_RECONNECT_DELAY_MS = 2_000;

/**
 * One message on a channel: who sent it (its own are not delivered twice) and the items published
 * in one turn of its event loop (`items`, text pieces joined), or one item (`item`, as processes
 * before the items were gathered sent them).
 */
interface Envelope {
  from: string;
  items?: LiveItem[];
  item?: LiveItem;
}

/** A Redis URL without its password, for messages (as the memory store's URLs are shown). */
export const redactedRedisUrl = withoutPassword;

/** Why `url` is not a Redis URL we take, or undefined. */
export function redisUrlProblem(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `AGENT_LIVE_URL must be a Redis URL like redis://localhost:6379, got "${url}"`;
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:')
    return `AGENT_LIVE_URL must start with redis:// or rediss://, got "${redactedRedisUrl(url)}"`;
  if (u.pathname && u.pathname !== '/' && !/^\/\d+$/.test(u.pathname))
    return `AGENT_LIVE_URL's path is a database number (redis://host:6379/0), got "${u.pathname}"`;
  return undefined;
}

/**
 * The live channel's URL: the option given (`false`: none), else `AGENT_LIVE_URL`; an error naming
 * what is wrong with one that is not a Redis URL.
 */
export function liveUrlSetting(option: string | false | undefined, env: string | undefined): { liveUrl?: string } {
  const url = option === false ? undefined : (option ?? (env?.trim() || undefined));
  if (url === undefined) return {};
  const problem = redisUrlProblem(url);
  if (problem) throw new Error(option === undefined ? problem : problem.replace('AGENT_LIVE_URL', 'liveUrl'));
  return { liveUrl: url };
}

/**
 * A {@link LiveBridge} over Redis, connecting in the background. `warn` hears once when Redis
 * cannot be reached (and once when it is back); the live path then carries nothing between
 * processes, and readers read the durable log.
 */
export function redisLiveBridge(options: {
  url: string;
  /** The Temporal namespace: workflows of two namespaces sharing a Redis never meet. */
  namespace: string;
  warn?: (message: string) => void;
}): LiveBridge {
  const problem = redisUrlProblem(options.url);
  if (problem) throw new Error(problem);
  let redis: typeof import('redis');
  try {
    // Synchronous on purpose: settings are read synchronously. An optional package, so required here.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    redis = require(REDIS_PACKAGE);
  } catch (err) {
    throw new Error(
      `AGENT_LIVE_URL needs the Redis client: npm install ${REDIS_PACKAGE} (${(err as Error).message.split('\n')[0]})`,
    );
  }
  const location = redactedRedisUrl(options.url);
  const warn = options.warn ?? ((m: string) => process.stderr.write(`durable-agents: ${m}\n`));
  const self = randomUUID();
  const channelOf = (workflowId: string) => `durable-agents:live:${options.namespace}:${workflowId}`;
  const prefix = channelOf('');

  let down = false;
  const onError = (err: Error) => {
    if (down) return;
    down = true;
    warn(
      `the live channel at AGENT_LIVE_URL=${location} is unreachable (${err.message || err.name}); text and events reach readers through Temporal meanwhile`,
    );
  };
  const onReady = () => {
    if (!down) return;
    down = false;
    warn(`the live channel at AGENT_LIVE_URL=${location} is back`);
  };
  const clientOptions = {
    url: options.url,
    disableOfflineQueue: true,
    socket: { reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, MAX_RECONNECT_DELAY_MS) },
  };
  const publisher = redis.createClient(clientOptions);
  const subscriber = redis.createClient(clientOptions);
  for (const c of [publisher, subscriber]) {
    c.on('error', onError);
    c.on('ready', onReady);
  }
  // In the background: a process whose Redis is down at start runs on the durable path.
  const connected = Promise.allSettled([publisher.connect(), subscriber.connect()]);
  const ignore = () => undefined;

  const watched = new Set<string>();
  // Channels let go of while Redis was away: the client keeps its subscriptions across a
  // reconnection and would take them up again, so they are given up once it is back.
  const leftWhileDown = new Set<string>();
  const subscribe = (workflowId: string) => subscriber.subscribe(channelOf(workflowId), receive).catch(ignore);
  // Whenever it is (again) connected: every channel read here, once more (the same listener is
  // kept once), in case a subscription was asked for while Redis was away.
  subscriber.on('ready', () => {
    for (const workflowId of leftWhileDown)
      if (!watched.has(workflowId)) void subscriber.unsubscribe(channelOf(workflowId)).catch(ignore);
    leftWhileDown.clear();
    for (const workflowId of watched) void subscribe(workflowId);
  });
  const receive = (message: string, channel: string) => {
    let envelope: Envelope;
    try {
      envelope = JSON.parse(message) as Envelope;
    } catch {
      return; // not ours
    }
    if (envelope?.from === self || !channel.startsWith(prefix)) return;
    const workflowId = channel.slice(prefix.length);
    const items = Array.isArray(envelope?.items) ? envelope.items : envelope?.item ? [envelope.item] : [];
    for (const item of items) if (item?.workflowId === workflowId) liveText.deliver(item);
  };
  // What was published in this turn of the event loop, by channel, sent at its end (when the
  // client would write it anyway): a burst of text is one message, not one per token.
  const pending = new Map<string, LiveItem[]>();
  let flushing: NodeJS.Immediate | undefined;
  const flush = () => {
    flushing = undefined;
    for (const [channel, items] of pending)
      publisher.publish(channel, JSON.stringify({ from: self, items: joinLivePieces(items) })).catch(ignore);
    pending.clear();
  };

  return {
    location,
    get up() {
      return publisher.isReady;
    },
    publish(item) {
      if (!publisher.isReady) return;
      const channel = channelOf(item.workflowId);
      const items = pending.get(channel);
      if (items) items.push(item);
      else pending.set(channel, [item]);
      flushing ??= setImmediate(flush);
    },
    watch(workflowId) {
      if (watched.has(workflowId)) return;
      watched.add(workflowId);
      if (subscriber.isReady) void subscribe(workflowId);
    },
    unwatch(workflowId) {
      if (!watched.delete(workflowId)) return;
      if (subscriber.isReady) void subscriber.unsubscribe(channelOf(workflowId)).catch(ignore);
      else leftWhileDown.add(workflowId);
    },
    async close() {
      if (flushing) clearImmediate(flushing);
      pending.clear();
      // At once, whether connected or still trying: nothing it carries is the record.
      for (const c of [publisher, subscriber])
        try {
          c.destroy();
        } catch {
          // already closed
        }
      await connected;
    },
  };
}

let shared: { url: string; bridge: LiveBridge; holders: number } | undefined;

/**
 * Connects this process's live path to Redis at `url` for as long as the returned function is
 * not called: workers (`AgentsPlugin`, while they run) and API processes (`connectTemporal`, until
 * closed) hold it when `AGENT_LIVE_URL` is set. One channel per process, whoever holds it; the last
 * to let go closes it, so it never keeps a process alive.
 */
export function holdRedisLiveChannel(options: {
  url: string;
  namespace: string;
  warn?: (message: string) => void;
}): () => Promise<void> {
  if (shared && shared.url !== options.url)
    throw new Error(
      `this process's live channel is ${shared.bridge.location}; it cannot also use ${redactedRedisUrl(options.url)} (give every worker and client the same AGENT_LIVE_URL)`,
    );
  if (!shared) {
    shared = { url: options.url, bridge: redisLiveBridge(options), holders: 0 };
    liveText.useBridge(shared.bridge);
  }
  const held = shared;
  held.holders += 1;
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    held.holders -= 1;
    if (held.holders > 0 || shared !== held) return;
    shared = undefined;
    if (liveText.bridge === held.bridge) liveText.useBridge(undefined);
    await held.bridge.close();
  };
}
