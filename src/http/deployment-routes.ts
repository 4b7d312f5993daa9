import { deploymentStatus, promoteBuild, rampBuild, waitForDrain } from '../client/deployments';
import { ClientError } from '../client/client-error';
import { HttpError, readJson, sendJson, waitMs } from './http-io';
import type { RequestContext, Route } from './route-table';

/**
 * The `/deployments` routes, on the library's Worker Versioning calls (see `deployments.ts`):
 *
 *   GET  /deployments/:name                            its builds: status, open runs and conversations pinned to each
 *   POST /deployments/:name/promote                    {"buildId"}: make it current
 *   POST /deployments/:name/ramp                       {"buildId", "percent"}: send a share of new runs to it (0 stops the ramp)
 *   POST /deployments/:name/builds/:buildId/drain-wait ?wait=30s: 200 once nothing is pinned to it, else 202 with what is
 *
 * Routing new runs is an operator's act, not a chat user's: the POST routes answer only an API
 * started with `deployments: 'manage'` (`AGENT_HTTP_DEPLOYMENTS=manage` for `npm run serve`).
 */
export const deploymentRoutes: Route[] = [
  {
    method: 'GET',
    path: '/deployments/:deployment',
    handle: adminOnly(async ({ res, client, params }) =>
      sendJson(res, 200, await deploymentStatus(client, params.deployment)),
    ),
  },
  { method: 'POST', path: '/deployments/:deployment/promote', handle: adminOnly(routeBuilds('promote')) },
  { method: 'POST', path: '/deployments/:deployment/ramp', handle: adminOnly(routeBuilds('ramp')) },
  { method: 'POST', path: '/deployments/:deployment/builds/:buildId/drain-wait', handle: adminOnly(drainWait) },
];

/** Worker Versioning is the fleet's, not a tenant's: its routes answer an admin token (one without a tenant). */
function adminOnly(handle: (c: RequestContext) => Promise<void>): (c: RequestContext) => Promise<void> {
  return (c) => {
    if (c.scope.tenant !== undefined)
      throw new HttpError(403, 'deployments are managed with an admin token (one without a tenant)', 'Http.Forbidden');
    return handle(c);
  };
}

async function drainWait({ req, res, url, client, params, gone }: RequestContext): Promise<void> {
  const { deployment, buildId } = params;
  const timeoutMs = waitMs(req, url) ?? 30_000;
  try {
    return sendJson(res, 200, await waitForDrain(client, deployment, buildId, { timeoutMs, signal: gone }));
  } catch (err) {
    if (!(err instanceof ClientError && err.kind === 'still_running')) throw err;
    return sendJson(res, 202, {
      deployment,
      buildId,
      status: 'draining',
      error: err.message,
      errorType: err.errorType,
    });
  }
}

/** `promote` and `ramp`: which build new runs go to, an operator's act (`deployments: 'manage'`). */
function routeBuilds(action: 'promote' | 'ramp'): (c: RequestContext) => Promise<void> {
  return async ({ req, res, client, o, params }) => {
    const name = params.deployment;
    if (o.deployments !== 'manage')
      throw new HttpError(
        403,
        `POST /deployments/${name}/${action} changes which build new runs go to: start the API with deployments: 'manage' (AGENT_HTTP_DEPLOYMENTS=manage), or use durable-agents deploy`,
        'Http.Forbidden',
      );
    const body = await readJson(req);
    const buildId = body.buildId;
    if (typeof buildId !== 'string' || !buildId) throw new ClientError('invalid', '"buildId" must be a build id');
    if (action === 'promote') return sendJson(res, 200, await promoteBuild(client, name, buildId));
    if (typeof body.percent !== 'number') throw new ClientError('invalid', '"percent" must be a number from 0 to 100');
    return sendJson(res, 200, await rampBuild(client, name, buildId, body.percent));
  };
}
