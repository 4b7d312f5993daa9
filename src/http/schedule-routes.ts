import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import { inScope, tenantWorkflowId, workflowIdProblem, type AgentScheduleRequest, type TenantScope } from '../core';
import { scopedWorkflowId } from '../client/tenant-scope';
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
    // A tenant's token schedules for its tenant only, in its id space: the schedule's id and the
    // conversation it writes to are its own (another tenant's conversation id names a new one).
    const tenant = tenantOf(scope, body.tenant ?? body.options?.tenant);
    let request = tenant === undefined ? body : { ...body, tenant };
    if (scope.tenant !== undefined) {
      for (const [key, what] of [
        ['scheduleId', 'the schedule id'],
        ['conversationId', 'the conversation id'],
      ] as const) {
        const value = request[key];
        const problem = typeof value === 'string' ? workflowIdProblem(value, what) : undefined;
        if (problem) throw new HttpError(400, problem);
      }
      request = {
        ...request,
        ...(typeof request.scheduleId === 'string'
          ? { scheduleId: tenantWorkflowId(scope.tenant, request.scheduleId) }
          : {}),
        ...(typeof request.conversationId === 'string'
          ? { conversationId: await scopedWorkflowId(client, scope, request.conversationId, 'conversation') }
          : {}),
      };
    }
    return sendJson(res, 201, await scheduleAgent(client, request, { taskQueue }));
  }
  const problem = workflowIdProblem(parts[1], 'the schedule id');
  if (problem) throw new HttpError(400, problem);
  // In the caller's tenant's id space: another tenant's schedule is, to it, no schedule at all.
  const id = await scopedScheduleId(client, scope, parts[1]);
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

/**
 * The schedule a caller in `scope` means by `id` (as `scopedWorkflowId` finds workflows): a
 * tenant's in its id space, or one made for it under a plain id; `not_found` for another's.
 */
async function scopedScheduleId(client: Client, scope: TenantScope, id: string): Promise<string> {
  if (scope.tenant === undefined) return id;
  const own = tenantWorkflowId(scope.tenant, id);
  const found = await describeSchedule(client, own).catch((err: unknown) => {
    if (err instanceof ClientError && err.kind === 'not_found') return undefined;
    throw err;
  });
  // One an admin made in the tenant's space for another: the words of a missing one.
  if (found && !inScope(scope, found.tenant))
    throw new ClientError('not_found', `no schedule "${own}" exists (schedule list shows them)`);
  if (!found && own !== id) {
    const plain = await describeSchedule(client, id).catch(() => undefined);
    if (plain && plain.tenant === scope.tenant) return id;
  }
  return own;
}
