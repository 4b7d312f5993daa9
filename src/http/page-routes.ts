import type { AgentInput } from '../core/state/run-options';
import { runOutcome, startAgentRun } from '../client/run-agent';
import { chatPageHtml } from './chat-page';
import { checkRunInput, HttpError, sendJson, sendStillRunning, tenantOf } from './http-io';
import type { RequestContext, Route } from './route-table';

/**
 * The API's own pages and probes:
 *
 *   GET /healthz                         whether Temporal answers (no token needed)
 *   GET /                                the web chat page (unless `chatPage: false`)
 *   GET /agents                          the workers' named agents and their tools
 *   GET /assistant-with-tool?message=... one agent run (&agent=name); the answer as text
 */
export const pageRoutes: Route[] = [
  { method: 'GET', path: '/healthz', handle: async ({ res, o }) => sendJson(res, ...(await o.health())) },
  {
    method: 'GET',
    path: '/',
    when: (o) => o.chatPage !== false,
    handle: ({ res, o }) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' });
      res.end(chatPageHtml({ workflowUrlPrefix: o.workflowUrlPrefix }));
    },
  },
  {
    method: 'GET',
    path: '/favicon.ico',
    when: (o) => o.chatPage !== false,
    handle: ({ res }) => void res.writeHead(204).end(),
  },
  { method: 'GET', path: '/agents', handle: async ({ res, o }) => sendJson(res, 200, { agents: await o.agents() }) },
  { method: 'GET', path: '/assistant-with-tool', handle: assistantWithTool },
];

/** One agent run from a query string, answered as text (the quick start's first request). */
async function assistantWithTool({ res, url, o, scope, bounded }: RequestContext): Promise<void> {
  const message = url.searchParams.get('message');
  if (!message?.trim())
    throw new HttpError(
      400,
      'missing the "message" query parameter, e.g. /assistant-with-tool?message=What%20is%202%2B2',
    );
  const agent = url.searchParams.get('agent');
  const tenant = tenantOf(scope, undefined);
  const input: AgentInput = {
    message,
    ...(agent !== null ? { agent } : {}),
    ...(tenant !== undefined ? { tenant } : {}),
  };
  checkRunInput(input);
  const handle = await startAgentRun(o.client, input, {
    taskQueue: o.taskQueue,
    ...(scope.tenant !== undefined ? { idSpace: scope.tenant } : {}),
  });
  const outcome = await bounded(() => runOutcome(handle));
  if (outcome === undefined)
    return sendStillRunning(res, `/runs/${encodeURIComponent(handle.workflowId)}`, { workflowId: handle.workflowId });
  if (outcome.status === 'failed')
    return sendJson(res, 502, { error: outcome.error, errorType: outcome.errorType, workflowId: outcome.workflowId });
  res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'x-workflow-id': outcome.workflowId });
  res.end(outcome.content ?? outcome.toolExecutions.map((e) => e.result).join('\n'));
}
