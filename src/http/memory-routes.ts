import { MAX_MEMORY_PAGE, type MemoryFilter } from '../core/facts/memory-scope';
import { administerMemory } from '../client/memory';
import { HttpError, sendJson } from './http-io';
import type { RequestContext, Route } from './route-table';

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
export const memoryRoutes: Route[] = [
  { method: 'GET', path: '/memory', handle: listFacts },
  { method: 'DELETE', path: '/memory', handle: deleteFacts },
  {
    method: 'GET',
    path: '/memory/export',
    handle: async (c) =>
      sendJson(
        c.res,
        200,
        (await administerMemory(c.client, { op: 'export', filter: filterOf(c) }, queueOf(c))).export,
      ),
  },
  {
    method: 'GET',
    path: '/memory/:fact',
    handle: async (c) => {
      const { fact } = c.params;
      const shown = await administerMemory(c.client, { op: 'show', filter: filterOf(c), id: fact }, queueOf(c));
      if (!shown.fact) throw new HttpError(404, `no fact "${fact}"`, 'Http.NotFound');
      return sendJson(c.res, 200, shown.fact);
    },
  },
];

async function listFacts(c: RequestContext): Promise<void> {
  const query = c.url.searchParams;
  const limit = query.get('limit');
  if (limit !== null && !(/^\d+$/.test(limit) && Number(limit) >= 1 && Number(limit) <= MAX_MEMORY_PAGE))
    throw new HttpError(400, `"limit" must be a whole number from 1 to ${MAX_MEMORY_PAGE}, got "${limit}"`);
  const listed = await administerMemory(
    c.client,
    {
      op: 'list',
      filter: filterOf(c),
      ...(limit !== null ? { limit: Number(limit) } : {}),
      ...(query.get('after') ? { after: query.get('after')! } : {}),
    },
    queueOf(c),
  );
  return sendJson(c.res, 200, { facts: listed.facts, ...(listed.next ? { next: listed.next } : {}) });
}

async function deleteFacts(c: RequestContext): Promise<void> {
  const filter = filterOf(c);
  if (filter.user === undefined) throw new HttpError(400, 'say whose memory to delete: ?user=U');
  const by = c.scope.tenant !== undefined ? `http (tenant ${c.scope.tenant})` : 'http (admin)';
  const purge = c.url.searchParams.get('purge');
  if (purge !== null && !['1', 'true', '0', 'false'].includes(purge))
    throw new HttpError(400, '"purge" is 1 or true (remove the closed workflows that held copies), or 0');
  const request = { op: 'delete' as const, filter, by, ...(purge === '1' || purge === 'true' ? { purge: true } : {}) };
  return sendJson(c.res, 200, (await administerMemory(c.client, request, queueOf(c))).deletion);
}

/** Whose memory the request reaches: a tenant's token, its own tenant's whatever the query says. */
function filterOf({ url, scope }: RequestContext): MemoryFilter {
  const query = url.searchParams;
  const tenant = scope.tenant ?? query.get('tenant') ?? undefined;
  return {
    ...(tenant !== undefined ? { tenant } : {}),
    ...(query.get('user') !== null ? { user: query.get('user')! } : {}),
    ...(query.get('agent') !== null ? { agent: query.get('agent')! } : {}),
  };
}

function queueOf({ o }: RequestContext): { taskQueue: string } {
  return { taskQueue: o.taskQueue };
}
