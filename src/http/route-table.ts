import type { IncomingMessage, ServerResponse } from 'node:http';
import type { A2AHandler } from '../a2a/a2a-server';
import type { Client } from '@temporalio/client';
import { workflowIdProblem } from '../core/run/run-input';
import type { TenantScope } from '../core/fleet/tenants';
import type { AgentSummary } from '../contracts/activity-interface';
import { scopedWorkflowId } from '../client/tenant-scope';
import type { HttpApiOptions } from './http-api-options';
import { boundedWait, HttpError, pathParts, waitMs } from './http-io';

/**
 * The HTTP API's one dispatch: a table of routes, each a method, a path pattern and a handler
 * (one module per area: runs, conversations, branches, chat, AG-UI, schedules, memory, tenants,
 * deployments, pages), as hono routes. A pattern's segments are literal, or `:name` for a
 * parameter; the parameters that name a workflow (`:run`, `:conversation`, `:chat`) are checked
 * and taken into the caller's tenant's id space before the handler sees them. A path that
 * matches routes of other methods only is 405, naming them; one that matches none is 404.
 */

/** One route of the table. */
export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** `/runs/:run/approvals/:callId`: literal segments, and `:name` parameters. */
  path: string;
  /** Whether the route is served (the chat page can be turned off); default always. */
  when?: (o: RouteContext) => boolean;
  handle: (c: RequestContext) => Promise<void> | void;
}

/** What routes use: the API's options, and its caches. */
export interface RouteContext extends HttpApiOptions {
  /** `GET /healthz`'s answer, asked of Temporal at most once a second. */
  health: () => Promise<[number, unknown]>;
  /** The workers' agents, reused for a while (each page load of the chat lists them). */
  agents: () => Promise<AgentSummary[]>;
  /** Counts a wrong webhook signature against its address (see `AccessChecker.failedCredential`). */
  failedCredential: (req: IncomingMessage) => number;
  /** The A2A routes (`/a2a/<agent>/...`), loaded on their first request. */
  a2aHandler: () => Promise<A2AHandler>;
}

/** One request, as a route's handler gets it. */
export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  method: string;
  /** The path's parameters, decoded; workflow ids in the caller's id space. */
  params: Record<string, string>;
  o: RouteContext;
  client: Client;
  /** Aborted when the caller goes away. */
  gone: AbortSignal;
  /** Whom the request acts for: a tenant's token works in its tenant's id space only. */
  scope: TenantScope;
  /** Waits for `work` as long as the request's `?wait=` (or `Prefer: wait=`) allows; undefined past it. */
  bounded: <T>(work: () => Promise<T>) => Promise<T | undefined>;
}

/** The parameters that name a workflow: what kind, and how an error calls it. */
const WORKFLOW_PARAMS: Record<string, { kind: 'run' | 'conversation'; what: string }> = {
  run: { kind: 'run', what: 'the run id' },
  conversation: { kind: 'conversation', what: 'the conversation id' },
  chat: { kind: 'conversation', what: 'the chat id' },
};

/** The route a request takes: its parameters, or the methods the path allows when none is its own. */
export function matchRoute(
  table: readonly Route[],
  method: string,
  parts: readonly string[],
  o: RouteContext,
): { route: Route; params: Record<string, string> } | { allowed: string[] } {
  const allowed: string[] = [];
  for (const route of table) {
    if (route.when && !route.when(o)) continue;
    const params = matchPath(route.path, parts);
    if (!params) continue;
    if (route.method === method) return { route, params };
    if (!allowed.includes(route.method)) allowed.push(route.method);
  }
  return { allowed };
}

/** The parameters of `parts` under `pattern`, or undefined when it does not match. */
export function matchPath(pattern: string, parts: readonly string[]): Record<string, string> | undefined {
  const segments = pattern.split('/').filter(Boolean);
  if (segments.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, segment] of segments.entries()) {
    if (segment.startsWith(':')) params[segment.slice(1)] = parts[i];
    else if (segment !== parts[i]) return undefined;
  }
  return params;
}

/** Serves a request by the table: 404 and 405 as the module comment says. */
export async function dispatch(
  table: readonly Route[],
  c: Omit<RequestContext, 'params' | 'method' | 'bounded' | 'client'>,
): Promise<void> {
  // Checked before anything starts: a bad wait must not leave a run or conversation behind.
  const wait = waitMs(c.req, c.url);
  const method = c.req.method ?? 'GET';
  const parts = pathParts(c.url.pathname);
  const found = matchRoute(table, method, parts, c.o);
  if ('allowed' in found) {
    if (found.allowed.length === 0) throw new HttpError(404, `no route ${method} ${c.url.pathname}`, 'Http.NotFound');
    c.res.setHeader('allow', found.allowed.join(', '));
    throw new HttpError(405, `use ${found.allowed.join(' or ')} here, not ${method}`, 'Http.MethodNotAllowed');
  }
  const params = { ...found.params };
  for (const [name, value] of Object.entries(params)) {
    const kind = WORKFLOW_PARAMS[name];
    if (!kind) continue;
    const problem = workflowIdProblem(value, kind.what);
    if (problem) throw new HttpError(400, problem);
    params[name] = await scopedWorkflowId(c.o.client, c.scope, value, kind.kind);
  }
  const client = c.o.client;
  await found.route.handle({
    ...c,
    params,
    method,
    client,
    bounded: (work) => boundedWait(client, c.gone, work, wait),
  });
}
