import type { Client } from '@temporalio/client';
import { inScope, tenantWorkflowId, type TenantScope } from '../core/fleet/tenants';
import { workflowIdProblem } from '../core/run/run-input';
import type { AgentScheduleRequest } from '../core/schedules/schedules';
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
import { HttpError, readJson, sendJson, tenantOf } from './http-io';
import type { RequestContext, Route } from './route-table';

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
export const scheduleRoutes: Route[] = [
  {
    method: 'GET',
    path: '/schedules',
    handle: async ({ res, client, scope }) =>
      sendJson(res, 200, { schedules: (await listSchedules(client)).filter((s) => inScope(scope, s.tenant)) }),
  },
  { method: 'POST', path: '/schedules', handle: createSchedule },
  {
    method: 'GET',
    path: '/schedules/:schedule',
    handle: async (c) => sendJson(c.res, 200, await describeSchedule(c.client, await scheduleId(c))),
  },
  {
    method: 'DELETE',
    path: '/schedules/:schedule',
    handle: async (c) => sendJson(c.res, 200, await deleteSchedule(c.client, await scheduleId(c))),
  },
  { method: 'POST', path: '/schedules/:schedule/pause', handle: (c) => pauseOrUnpause(c, 'pause') },
  { method: 'POST', path: '/schedules/:schedule/unpause', handle: (c) => pauseOrUnpause(c, 'unpause') },
  {
    method: 'POST',
    path: '/schedules/:schedule/trigger',
    handle: async (c) => sendJson(c.res, 202, await triggerSchedule(c.client, await scheduleId(c))),
  },
];

async function createSchedule({ req, res, client, o, scope }: RequestContext): Promise<void> {
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
  return sendJson(res, 201, await scheduleAgent(client, request, { taskQueue: o.taskQueue }));
}

async function pauseOrUnpause(c: RequestContext, action: 'pause' | 'unpause'): Promise<void> {
  const id = await scheduleId(c);
  const body = await readJson(c.req, undefined, { optional: true });
  const note = (body as { note?: unknown }).note;
  if (note !== undefined && typeof note !== 'string') throw new HttpError(400, '"note" must be a string');
  return sendJson(
    c.res,
    200,
    action === 'pause' ? await pauseSchedule(c.client, id, note) : await unpauseSchedule(c.client, id, note),
  );
}

/** The path's schedule id, checked, in the caller's tenant's id space (another tenant's is, to it, no schedule at all). */
async function scheduleId({ client, scope, params }: RequestContext): Promise<string> {
  const problem = workflowIdProblem(params.schedule, 'the schedule id');
  if (problem) throw new HttpError(400, problem);
  return scopedScheduleId(client, scope, params.schedule);
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
