import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  CLIENT_CAPABILITIES_META_KEY,
  SUBSCRIPTION_ID_META_KEY,
  type ServerEvent,
  type ServerEventBus,
} from '@modelcontextprotocol/server';
import type { AgentMcpServerOptions } from '../mcp-server-options';
import { watchResource } from '../mcp-resources';
import { MAX_FOLLOWED_PER_STREAM } from './listened-resources';
import { getModernTask, TASKS_EXTENSION } from './modern-tasks';

/** The most task listen streams open at once per handler (the SDK's own listen router allows as many). */
const MAX_LISTEN_STREAMS = 1024;
/** How often a quiet listen stream says it is alive (a proxy would cut an idle one). */
const KEEP_ALIVE_MS = 15_000;
/** How long a task whose run ended is checked for its final status (the run closes just after its last event). */
const SETTLING_MS = 10_000;
/** How often a followed task is read besides its run's changes (see followTask). */
const SETTLE_MS = 2000;
/** How long a task that asked for input is given before it is read again as working. */
const RECHECK_MS = 300;
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/**
 * The tasks a `subscriptions/listen` request follows (`notifications.taskIds`), when its client
 * declared the tasks extension (in the request's `_meta`); undefined for any other request.
 */
export function listenedTaskIds(body: unknown): string[] | undefined {
  const request = body as {
    id?: unknown;
    method?: unknown;
    params?: { notifications?: { taskIds?: unknown }; _meta?: Record<string, unknown> };
  };
  if (request?.method !== 'subscriptions/listen') return undefined;
  if (typeof request.id !== 'string' && typeof request.id !== 'number') return undefined;
  const ids = request.params?.notifications?.taskIds;
  if (!Array.isArray(ids) || ids.length === 0) return undefined;
  const capabilities = request.params?._meta?.[CLIENT_CAPABILITIES_META_KEY] as
    { extensions?: Record<string, unknown> } | undefined;
  if (!capabilities?.extensions || !(TASKS_EXTENSION in capabilities.extensions)) return undefined;
  return [...new Set(ids.filter((id): id is string => typeof id === 'string'))].slice(0, MAX_FOLLOWED_PER_STREAM);
}

/**
 * A `subscriptions/listen` stream that carries task status (the tasks extension, SEP-2663): the
 * acknowledgement names the tasks it follows (the caller's own; another tenant's task is no task
 * to it), then each task's status comes as `notifications/tasks` (the task as `tasks/get` gives
 * it) when it changes, its current status first, until it ends. Whatever else the request asks
 * for (list changes, `resourceSubscriptions`) comes from the handler's bus, as on the SDK's own
 * listen streams.
 *
 * Hand-written: the SDK's listen router serves only its four change kinds (it drops `taskIds`
 * from the acknowledgement and ends a stream that asks for nothing else), and the extension's
 * package has no server runtime yet. The frames are the SDK's: SSE `message` events, each
 * stamped with the subscription id (the listen request's id).
 */
export async function listenToTasks(
  body: { id?: unknown; params?: { notifications?: Record<string, unknown> } },
  taskIds: string[],
  req: IncomingMessage,
  res: ServerResponse,
  options: AgentMcpServerOptions,
  streams: ListenStreams,
): Promise<void> {
  const subscriptionId = body.id as string | number;
  const requested = body.params?.notifications ?? {};
  const answer = (error: { code: number; message: string }) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: subscriptionId, error }));
  };
  const subscriptions = requested.resourceSubscriptions;
  if (
    subscriptions !== undefined &&
    !(Array.isArray(subscriptions) && subscriptions.every((u) => typeof u === 'string'))
  )
    return answer({ code: -32602, message: 'Invalid params: resourceSubscriptions must be a list of resource URIs' });
  if (streams.open.size >= MAX_LISTEN_STREAMS) return answer({ code: -32603, message: 'Subscription limit reached' });
  // Registered before the reads below: a client that leaves meanwhile ends it all the same.
  const stop = new AbortController();
  const cleanups: Array<() => void> = [];
  const close = () => {
    if (stop.signal.aborted) return;
    stop.abort();
    streams.open.delete(close);
    for (const cleanup of cleanups) cleanup();
    if (!res.writableEnded) res.end();
  };
  streams.open.add(close);
  res.once('close', close);
  req.once('close', () => {
    if (res.writableEnded || !res.headersSent) close();
  });
  // The caller's own tasks only, as tasks/get would find them.
  const found = await Promise.all(
    taskIds.map(async (id) => ({ id, task: await getModernTask(options, id).catch(() => undefined) })),
  );
  if (stop.signal.aborted) return;
  const followed = found.filter((f) => f.task !== undefined);
  const honored: Record<string, unknown> = {};
  for (const kind of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'])
    if (requested[kind] === true) honored[kind] = true;
  if (subscriptions?.length) honored.resourceSubscriptions = subscriptions;
  honored.taskIds = followed.map((f) => f.id);

  const frame = (message: Record<string, unknown>) => {
    if (!stop.signal.aborted) res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...message })}\n\n`);
  };
  const stamp = (params: Record<string, unknown>) => ({
    ...params,
    _meta: { ...(params._meta as object | undefined), [SUBSCRIPTION_ID_META_KEY]: subscriptionId },
  });
  const write = (method: string, params: Record<string, unknown>) => frame({ method, params: stamp(params) });
  res.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  write('notifications/subscriptions/acknowledged', { notifications: honored });
  // Nothing to tell (none of the tasks is the caller's, nothing else asked for): ended at once, as
  // the SDK ends a listen that asks for nothing it serves.
  if (followed.length === 0 && Object.keys(honored).length === 1) {
    frame({ id: subscriptionId, result: stamp({ resultType: 'complete' }) });
    return close();
  }
  const unsubscribe = streams.bus.subscribe((event) => {
    const note = busNotification(event, honored);
    if (note) write(note.method, note.params);
  });
  const keepAlive = setInterval(() => res.write(': keepalive\n\n'), KEEP_ALIVE_MS);
  cleanups.push(unsubscribe, () => clearInterval(keepAlive));
  for (const { id, task } of followed)
    void followTask(id, task!, options, stop.signal, (t) => write('notifications/tasks', t));
}

/** The task listen streams of one handler: its bus, and how to end each open one (the server closes). */
export interface ListenStreams {
  bus: ServerEventBus;
  open: Set<() => void>;
}

/** Tells a task's status as it changes (its current one first), until it ends or the stream does. */
async function followTask(
  taskId: string,
  first: Record<string, unknown>,
  options: AgentMcpServerOptions,
  signal: AbortSignal,
  tell: (task: Record<string, unknown>) => void,
): Promise<void> {
  let told = '';
  const tellIfChanged = (task: Record<string, unknown>) => {
    // What a client acts on: the status and what it asks for, not the clock of the last update.
    const { lastUpdatedAt: _, ...what } = task;
    const key = JSON.stringify(what);
    if (key === told) return TERMINAL.has(String(task.status));
    told = key;
    tell(task);
    return TERMINAL.has(String(task.status));
  };
  if (tellIfChanged(first)) return;
  const watch = new AbortController();
  const ended = () => watch.abort();
  signal.addEventListener('abort', ended, { once: true });
  let checking = Promise.resolve();
  let inFlight = false;
  let lastStatus = String(first.status);
  // One read at a time: a tick that comes while one is under way is that read's (no queue grows
  // while Temporal is slow), and none starts once the stream or the task has ended.
  const check = () => {
    if (inFlight || watch.signal.aborted) return checking;
    inFlight = true;
    return (checking = checking
      .then(async () => {
        let task = await getModernTask(options, taskId).catch(() => undefined);
        // A task that asked for input is read again before it is told working: its run's status and
        // its pending approvals are two reads, and between them a paused run can look busy.
        if (task?.status === 'working' && lastStatus === 'input_required') {
          await new Promise((r) => setTimeout(r, RECHECK_MS));
          task = await getModernTask(options, taskId).catch(() => undefined);
        }
        if (!task || watch.signal.aborted) return;
        lastStatus = String(task.status);
        if (tellIfChanged(task)) watch.abort();
      })
      .finally(() => (inFlight = false)));
  };
  // Each change of its run is read at once; and every SETTLE_MS besides, as a run's events can
  // come before the workflow's state that tasks/get reads (its pending approvals) has taken them,
  // or before this watch began (between the first read and the watch's start).
  const every = setInterval(() => void check(), SETTLE_MS);
  try {
    await watchResource(options.client, options.scope ?? {}, taskId, watch.signal, () => void check());
  } finally {
    clearInterval(every);
  }
  await checking;
  // The run's events ended (its workflow closed): its final status, once the workflow says so.
  for (const deadline = Date.now() + SETTLING_MS; !watch.signal.aborted && Date.now() < deadline;) {
    await check();
    if (!watch.signal.aborted) await new Promise((r) => setTimeout(r, 250));
  }
  signal.removeEventListener('abort', ended);
}

/** A bus event as the notification this stream carries, when the request asked for its kind. */
function busNotification(
  event: ServerEvent,
  honored: Record<string, unknown>,
): { method: string; params: Record<string, unknown> } | undefined {
  switch (event.kind) {
    case 'tools_list_changed':
      return honored.toolsListChanged ? { method: 'notifications/tools/list_changed', params: {} } : undefined;
    case 'prompts_list_changed':
      return honored.promptsListChanged ? { method: 'notifications/prompts/list_changed', params: {} } : undefined;
    case 'resources_list_changed':
      return honored.resourcesListChanged ? { method: 'notifications/resources/list_changed', params: {} } : undefined;
    case 'resource_updated':
      return (honored.resourceSubscriptions as string[] | undefined)?.includes(event.uri)
        ? { method: 'notifications/resources/updated', params: { uri: event.uri } }
        : undefined;
    default:
      return undefined;
  }
}
