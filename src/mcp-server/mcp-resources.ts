import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ErrorCode,
  McpError,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type ReadResourceResult,
} from '@modelcontextprotocol/sdk/types.js';
import { readStatus, readTranscript } from '../client/workflow-controls';
import { streamEvents } from '../client/event-stream';
import { eventsQuery } from '../contracts/definitions';
import { listAgentRuns } from '../client/list-runs';
import { scopedWorkflowId } from '../client/tenant-scope';
import type { TenantScope } from '../core/fleet/tenants';

/**
 * Runs and conversations as MCP resources: `durable-agents://runs/{id}` and
 * `durable-agents://conversations/{id}` (templates, so any id can be read, and the recent ones
 * are listed), each read as JSON (its status and its latest messages, from Temporal). A client
 * that subscribes to one gets `notifications/resources/updated` as it changes (from its durable
 * event log, at most twice a second) until it closes or the client unsubscribes.
 */

/** The resource URI of a run or conversation. */
export function resourceUri(kind: 'run' | 'conversation', workflowId: string): string {
  return `${SCHEME}${kind === 'run' ? 'runs' : 'conversations'}/${encodeURIComponent(workflowId)}`;
}

const SCHEME = 'durable-agents://';

/** The newest messages a resource shows (the whole transcript is `durable-agents history <id>`). */
const MESSAGES_SHOWN = 50;

/** How often a subscription to a run or conversation not started yet looks for it. */
const NOT_YET_EVERY_MS = 1000;

/** How often, at most, a subscriber is told that a resource changed. */
const UPDATE_EVERY_MS = 500;

/** The resource template of runs or of conversations: its name, URI template and metadata. */
export function resourceTemplate(kind: 'run' | 'conversation'): {
  name: string;
  template: string;
  metadata: { title: string; description: string; mimeType: string };
} {
  const plural = kind === 'run' ? 'runs' : 'conversations';
  return {
    name: plural,
    template: `${SCHEME}${plural}/{id}`,
    metadata: {
      title: kind === 'run' ? 'Agent runs' : 'Conversations',
      description: `A durable agent ${kind}: its status and latest messages (JSON)`,
      mimeType: 'application/json',
    },
  };
}

/**
 * The recent runs or conversations as resources: of the task queue this server serves (the
 * namespace may hold other teams'), of the session's tenant when it has one.
 */
export async function listAgentResources(
  client: Client,
  taskQueue: string,
  scope: TenantScope,
  kind: 'run' | 'conversation',
): Promise<{
  resources: { uri: string; name: string; title: string; description: string; mimeType: string }[];
}> {
  const { runs } = await listAgentRuns(client, { limit: 50, taskQueue, only: kind, ...scope });
  return {
    resources: runs.map((r) => ({
      uri: resourceUri(kind, r.workflowId),
      name: r.workflowId,
      title: `${kind} ${r.workflowId}${r.agent ? ` (${r.agent})` : ''}`,
      description: `${r.agentStatus ?? r.executionStatus}, started ${r.startTime}`,
      mimeType: 'application/json',
    })),
  };
}

/** Registers the resources and their subscriptions on `server` (one client's session); `complete` in agent-mcp-server completes their ids. */
export function registerResources(server: McpServer, client: Client, taskQueue: string, scope: TenantScope = {}): void {
  for (const kind of ['run', 'conversation'] as const) {
    const { name, template, metadata } = resourceTemplate(kind);
    server.registerResource(
      name,
      new ResourceTemplate(template, { list: () => listAgentResources(client, taskQueue, scope, kind) }),
      metadata,
      async (uri, { id }) =>
        readAgentResource(client, uri.href, String(id), scope, (m) => new McpError(ErrorCode.InvalidParams, m)),
    );
  }
  const watching = new Map<string, AbortController>();
  server.server.registerCapabilities({ resources: { subscribe: true } });
  server.server.setRequestHandler(SubscribeRequestSchema, (request) => {
    const { uri } = request.params;
    // A URI that is not ours never changes: the subscription is kept, and never fires.
    if (watching.has(uri)) return {};
    const stop = new AbortController();
    watching.set(uri, stop);
    const id = workflowIdOf(uri);
    if (id) void watch(id, uri, stop.signal);
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    watching.get(request.params.uri)?.abort();
    watching.delete(request.params.uri);
    return {};
  });
  const closed = server.server.onclose;
  server.server.onclose = () => {
    for (const stop of watching.values()) stop.abort();
    watching.clear();
    closed?.();
  };

  function watch(workflowId: string, uri: string, signal: AbortSignal): Promise<void> {
    return watchResource(client, scope, workflowId, signal, () => {
      server.server.sendResourceUpdated({ uri }).catch(() => undefined);
    });
  }
}

/**
 * Calls `tell` when the run or conversation `workflowId` (in `scope`'s id space) changes, from its
 * durable event log, at most every {@link UPDATE_EVERY_MS}, until `signal` aborts or it is gone:
 * a resource subscription, on either revision.
 */
export async function watchResource(
  client: Client,
  scope: TenantScope,
  workflowId: string,
  signal: AbortSignal,
  tell: () => void,
): Promise<void> {
  let last = 0;
  let pending: NodeJS.Timeout | undefined;
  const told = () => {
    pending = undefined;
    last = Date.now();
    tell();
  };
  try {
    // In the session's tenant's id space: another tenant's run never changes, to this session.
    const id = await scopedWorkflowId(client, scope, workflowId);
    // From what comes next: what happened before the subscription is no change to tell. One that
    // does not exist yet is waited for, and all it does is new.
    let after: number | undefined;
    for (let waited = false; after === undefined; waited = true) {
      try {
        const { next } = await client.workflow.getHandle(id).query(eventsQuery, { limit: 1 });
        after = waited ? -1 : next - 1;
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError || (err as { code?: number }).code === 5)) throw err;
        await new Promise((resolve) => setTimeout(resolve, NOT_YET_EVERY_MS));
        if (signal.aborted) return;
      }
    }
    const events = streamEvents(client, id, { signal, after });
    for (let next = await events.next(); !next.done; next = await events.next()) {
      if (pending) continue;
      const wait = last + UPDATE_EVERY_MS - Date.now();
      if (wait <= 0) told();
      else pending = setTimeout(told, wait);
    }
  } catch {
    // Gone or never there: nothing more will change.
  } finally {
    if (pending) {
      clearTimeout(pending);
      if (!signal.aborted) told();
    }
  }
}

/** The workflow id a resource URI of ours names, or undefined. */
export function workflowIdOf(uri: string): string | undefined {
  const m = /^durable-agents:\/\/(runs|conversations)\/([^/?#]+)$/.exec(uri);
  if (!m) return undefined;
  try {
    return decodeURIComponent(m[2]);
  } catch {
    return undefined;
  }
}

/**
 * A run or conversation read as a resource. A bad id is the client's mistake, thrown as `invalid`
 * makes it (each SDK has its own error class for -32602).
 */
export async function readAgentResource(
  client: Client,
  uri: string,
  id: string,
  scope: TenantScope,
  invalid: (message: string) => Error,
): Promise<ReadResourceResult> {
  let workflowId = decodeURIComponent(id);
  let status;
  try {
    // In the session's tenant's id space: another tenant's run is, to this session, no run at all.
    workflowId = await scopedWorkflowId(client, scope, workflowId);
    status = await readStatus(client, workflowId);
  } catch (err) {
    throw invalid(`${uri}: ${(err as Error).message}`);
  }
  const expected = uri.includes('://runs/') ? 'run' : 'conversation';
  if (status.kind !== expected)
    throw invalid(`${workflowId} is a ${status.kind}: read ${resourceUri(status.kind, workflowId)}`);
  const transcript = await readTranscript(client, workflowId).catch(() => ({ messages: [] }));
  const messages = transcript.messages.slice(-MESSAGES_SHOWN);
  const body = {
    status,
    messages,
    ...(transcript.messages.length > messages.length
      ? { earlierMessages: transcript.messages.length - messages.length }
      : {}),
  };
  return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(body, null, 2) }] };
}
