import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import type { MemoryFilter, TenantScope } from '../core';
import { administerMemory } from '../client/memory';
import { allow, HttpError, sendJson } from './http-io';

/**
 * `/memory`: what the agents keep about users across conversations (see `client/memory.ts`).
 *
 *   GET    /memory?user=U[&tenant=T][&limit=N][&after=ID]   their facts, newest first (`next` pages on)
 *   GET    /memory/export?user=U[&tenant=T]                everything, as JSON (facts, profiles, deletions)
 *   GET    /memory/:id[?user=U]                            one fact
 *   DELETE /memory?user=U[&tenant=T][&purge=1]             deletes it all, and records who did
 *
 * A tenant's token reaches its own tenant's users only (`tenant` is its own, whatever the query says).
 */
export async function memoryRoute(
  req: IncomingMessage,
  res: ServerResponse,
  client: Client,
  taskQueue: string,
  parts: string[],
  method: string,
  scope: TenantScope,
): Promise<void> {
  const query = new URL(req.url ?? '/', 'http://localhost').searchParams;
  const filter: MemoryFilter = {
    ...(scope.tenant !== undefined
      ? { tenant: scope.tenant }
      : query.get('tenant') !== null
        ? { tenant: query.get('tenant')! }
        : {}),
    ...(query.get('user') !== null ? { user: query.get('user')! } : {}),
    ...(query.get('agent') !== null ? { agent: query.get('agent')! } : {}),
  };
  const options = { taskQueue };
  if (parts.length === 1) {
    if (method === 'DELETE') {
      if (filter.user === undefined) throw new HttpError(400, 'say whose memory to delete: ?user=U');
      const by = scope.tenant !== undefined ? `http (tenant ${scope.tenant})` : 'http (admin)';
      const purge = query.get('purge');
      if (purge !== null && !['1', 'true', '0', 'false'].includes(purge))
        throw new HttpError(400, '"purge" is 1 or true (remove the closed workflows that held copies), or 0');
      const request = {
        op: 'delete' as const,
        filter,
        by,
        ...(purge === '1' || purge === 'true' ? { purge: true } : {}),
      };
      return sendJson(res, 200, (await administerMemory(client, request, options)).deletion);
    }
    allow(method, 'GET');
    const limit = query.get('limit');
    if (limit !== null && !/^\d+$/.test(limit)) throw new HttpError(400, '"limit" must be a whole number');
    const listed = await administerMemory(
      client,
      {
        op: 'list',
        filter,
        ...(limit !== null ? { limit: Number(limit) } : {}),
        ...(query.get('after') ? { after: query.get('after')! } : {}),
      },
      options,
    );
    return sendJson(res, 200, { facts: listed.facts, ...(listed.next ? { next: listed.next } : {}) });
  }
  if (parts.length === 2 && parts[1] === 'export') {
    allow(method, 'GET');
    return sendJson(res, 200, (await administerMemory(client, { op: 'export', filter }, options)).export);
  }
  if (parts.length === 2) {
    allow(method, 'GET');
    const shown = await administerMemory(client, { op: 'show', filter, id: parts[1] }, options);
    if (!shown.fact) throw new HttpError(404, `no fact "${parts[1]}"`, 'Http.NotFound');
    return sendJson(res, 200, shown.fact);
  }
  throw new HttpError(404, `no route ${method} /${parts.join('/')}`, 'Http.NotFound');
}
