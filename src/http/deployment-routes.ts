import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import { deploymentStatus, promoteBuild, rampBuild, waitForDrain } from '../client/deployments';
import { ClientError } from '../client/client-error';
import { allow, HttpError, readJson, sendJson, waitMs } from './http-io';

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
export async function deploymentRoute(
  req: IncomingMessage,
  res: ServerResponse,
  client: Client,
  parts: string[],
  method: string,
  url: URL,
  manage: boolean,
  gone: AbortSignal,
): Promise<void> {
  const name = parts[1];
  if (parts.length === 2) {
    allow(method, 'GET');
    return sendJson(res, 200, await deploymentStatus(client, name));
  }
  const route = parts.slice(2).join('/');
  const known =
    (parts.length === 3 && (parts[2] === 'promote' || parts[2] === 'ramp')) ||
    (parts.length === 5 && parts[2] === 'builds' && parts[4] === 'drain-wait');
  if (!known) throw new HttpError(404, `no route ${method} /${parts.join('/')}`, 'Http.NotFound');
  allow(method, 'POST');
  if (parts[2] === 'builds') {
    const buildId = parts[3];
    const timeoutMs = waitMs(req, url) ?? 30_000;
    try {
      return sendJson(res, 200, await waitForDrain(client, name, buildId, { timeoutMs, signal: gone }));
    } catch (err) {
      if (!(err instanceof ClientError && err.kind === 'still_running')) throw err;
      return sendJson(res, 202, {
        deployment: name,
        buildId,
        status: 'draining',
        error: err.message,
        errorType: err.errorType,
      });
    }
  }
  if (!manage)
    throw new HttpError(
      403,
      `POST /deployments/${name}/${route} changes which build new runs go to: start the API with deployments: 'manage' (AGENT_HTTP_DEPLOYMENTS=manage), or use durable-agents deploy`,
      'Http.Forbidden',
    );
  const body = await readJson(req);
  const buildId = body.buildId;
  if (typeof buildId !== 'string' || !buildId) throw new ClientError('invalid', '"buildId" must be a build id');
  if (parts[2] === 'promote') return sendJson(res, 200, await promoteBuild(client, name, buildId));
  if (typeof body.percent !== 'number') throw new ClientError('invalid', '"percent" must be a number from 0 to 100');
  return sendJson(res, 200, await rampBuild(client, name, buildId, body.percent));
}
