import type { AgentInput } from '../core/state/run-options';
import { outcomeJson } from '../client/outcome-json';
import { readStatus, readTranscript } from '../client/workflow-controls';
import { ClientError } from '../client/client-error';
import { runOutcome, startAgentRun } from '../client/run-agent';
import { deleteRun } from '../client/delete-run';
import { listRoute } from './list-routes';
import { events, streamRun, wantsEventStream } from './event-stream-routes';
import { deliverEventRoute } from './event-routes';
import { approve, idempotencyKey } from './approval-routes';
import {
  checkRunInput,
  imagesOf,
  MAX_MESSAGE_BODY_BYTES,
  readJson,
  sendJson,
  sendStillRunning,
  tenantOf,
} from './http-io';
import type { RequestContext, Route } from './route-table';

/**
 * One-shot runs:
 *
 *   GET  /runs                          the runs (`?query=`, `?status=`, ... see list-routes.ts)
 *   POST /runs                          {"message", "images"?, ...run options} → the run result (JSON), or its events (Accept: text/event-stream)
 *   GET  /runs/:id                      a run's status and messages
 *   DELETE /runs/:id                    a finished run, its payloads and workspace states (409 while it runs)
 *   POST /runs/:id/approvals/:callId    {"approve": true|false, "reason"?}
 *   GET  /runs/:id/events               the live events (Server-Sent Events)
 *   POST /runs/:id/events/:name         deliver an event (the body: its JSON payload) to a wait_for_event
 */
export const runRoutes: Route[] = [
  {
    method: 'GET',
    path: '/runs',
    handle: async (c) => sendJson(c.res, 200, await listRoute(c.client, c.url, c.scope, 'runs')),
  },
  { method: 'POST', path: '/runs', handle: startRun },
  { method: 'GET', path: '/runs/:run', handle: runStatus },
  {
    method: 'DELETE',
    path: '/runs/:run',
    handle: async (c) => sendJson(c.res, 200, await deleteRun(c.client, c.params.run, { kind: 'run' })),
  },
  { method: 'POST', path: '/runs/:run/approvals/:callId', handle: (c) => approve(c, c.params.run) },
  {
    method: 'GET',
    path: '/runs/:run/events',
    handle: (c) => events(c.req, c.res, c.client, c.params.run, 'run', c.url, c.method, c.gone),
  },
  {
    method: 'POST',
    path: '/runs/:run/events/:name',
    handle: (c) => deliverEventRoute(c.req, c.res, c.o, c.params.run, c.params.name, c.method),
  },
];

async function startRun({ req, res, o, scope, gone, bounded }: RequestContext): Promise<void> {
  const { images: _images, ...body } = await readJson(req, MAX_MESSAGE_BODY_BYTES);
  const images = imagesOf({ images: _images });
  const tenant = tenantOf(scope, body.tenant);
  const input = (tenant === undefined ? body : { ...body, tenant }) as unknown as AgentInput;
  checkRunInput(input);
  // A run asked for again with the same key is the same run: its outcome answers both.
  const key = idempotencyKey(req);
  const handle = await startAgentRun(o.client, images ? { ...input, images } : input, {
    taskQueue: o.taskQueue,
    ...(key !== undefined ? { idempotencyKey: key } : {}),
    // A tenant's runs are made in its id space: its Idempotency-Key names its own run only.
    ...(scope.tenant !== undefined ? { idSpace: scope.tenant } : {}),
  });
  if (wantsEventStream(req)) {
    res.setHeader('x-workflow-id', handle.workflowId);
    return streamRun(res, o.client, handle.workflowId, gone);
  }
  const outcome = await bounded(() => runOutcome(handle));
  if (outcome === undefined)
    return sendStillRunning(res, `/runs/${encodeURIComponent(handle.workflowId)}`, { workflowId: handle.workflowId });
  return sendJson(res, outcome.status === 'failed' ? 502 : 200, outcomeJson(outcome));
}

async function runStatus({ res, client, params }: RequestContext): Promise<void> {
  const id = params.run;
  const status = await readStatus(client, id);
  if (status.kind !== 'run')
    throw new ClientError(
      'wrong_kind',
      `"${id}" is a conversation, not a one-shot run; see GET /conversations/${id}`,
      id,
    );
  return sendJson(res, 200, { ...status, ...(await readTranscript(client, id)) });
}
