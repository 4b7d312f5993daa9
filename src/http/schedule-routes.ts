import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import { inScope, workflowIdProblem, type AgentScheduleRequest, type TenantScope } from '../core';
import { ClientError } from '../client/client-error';
import {
  deleteSchedule,
  describeSchedule,
  listSchedules,
  pauseSchedule,
  scheduleAgent,
  triggerSchedule,
  unpauseSchedule,
} from '../client/schedules';
import { allow, HttpError, readJson, sendJson, tenantOf } from './http-io';

/**
 * The `/schedules` routes, on the library's schedule calls (the same access rules as every route):
 *
 *   GET    /schedules                  the schedules of agent runs and conversation turns
 *   POST   /schedules                  {"scheduleId", "every" | "cron", "message", "agent"?, "options"?, "conversationId"?, "overlap"?, ...} → 201
 *   GET    /schedules/:id              one schedule: next times, recent runs, policies
 *   DELETE /schedules/:id              no more runs start
 *   POST   /schedules/:id/pause        {"note"?}
 *   POST   /schedules/:id/unpause
 *   POST   /schedules/:id/trigger      one run now
 */
export async function scheduleRoute(
  req: IncomingMessage,
  res: ServerResponse,
  client: Client,
  taskQueue: string,
  parts: string[],
  method: string,
  scope: TenantScope = {},
): Promise<void> {
  if (parts.length === 1) {
    if (method === 'GET')
      return sendJson(res, 200, {
        schedules: (await listSchedules(client)).filter((s) => inScope(scope, s.tenant)),
      });
    allow(method, 'POST');
    const body = (await readJson(req)) as unknown as AgentScheduleRequest;
    // A tenant's token schedules for its tenant only.
    const tenant = tenantOf(scope, body.tenant ?? body.options?.tenant);
    const request = tenant === undefined ? body : { ...body, tenant };
    return sendJson(res, 201, await scheduleAgent(client, request, { taskQueue }));
  }
  const id = parts[1];
  const problem = workflowIdProblem(id, 'the schedule id');
  if (problem) throw new HttpError(400, problem);
  // Another tenant's schedule is, to this caller, no schedule at all.
  if (scope.tenant !== undefined) {
    const found = await describeSchedule(client, id);
    if (!inScope(scope, found.tenant)) throw new ClientError('not_found', `no schedule "${id}" exists`, id);
  }
  if (parts.length === 2) {
    if (method === 'DELETE') return sendJson(res, 200, await deleteSchedule(client, id));
    allow(method, 'GET');
    return sendJson(res, 200, await describeSchedule(client, id));
  }
  if (parts.length === 3 && ['pause', 'unpause', 'trigger'].includes(parts[2])) {
    allow(method, 'POST');
    if (parts[2] === 'trigger') return sendJson(res, 202, await triggerSchedule(client, id));
    const body = req.headers['content-length'] === '0' ? {} : await readJson(req).catch(() => ({}));
    const note = (body as { note?: unknown }).note;
    if (note !== undefined && typeof note !== 'string') throw new HttpError(400, '"note" must be a string');
    return sendJson(
      res,
      200,
      parts[2] === 'pause' ? await pauseSchedule(client, id, note) : await unpauseSchedule(client, id, note),
    );
  }
  throw new HttpError(404, `no route ${method} /${parts.join('/')}`, 'Http.NotFound');
}
