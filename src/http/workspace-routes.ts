import {
  diffWorkspace,
  listWorkspace,
  stateAtStep,
  workspaceBlobs,
  workspaceFile,
  workspaceStates,
  workspaceTar,
} from '../client/workspaces';
import { HttpError, sendJson } from './http-io';
import type { RequestContext, Route } from './route-table';

/**
 * A run's or conversation's workspace over HTTP (see docs/workspaces.md), read from its histories
 * and the blob store like `durable-agents workspace`; a tenant's token reaches its own only (the
 * route table scopes `:run` and `:conversation`). `step=N`: as it was before model call N.
 *
 *   GET .../workspace                      the calls that changed it: `WorkspaceStates`
 *   GET .../workspace/files?path=&step=    its files (under `path`), with sizes and hashes
 *   GET .../workspace/file?path=&step=     one file's bytes
 *   GET .../workspace/diff?fromStep=&toStep=   `{ changes, patch }`: what changed, as a unified diff
 *   GET .../workspace/export?step=         all of it, as a tar
 *
 * for `.../` = `/runs/:run/` and `/conversations/:conversation/`.
 */
export const workspaceRoutes: Route[] = (['run', 'conversation'] as const).flatMap((kind) => {
  const base = `/${kind}s/:${kind}/workspace`;
  const id = (c: RequestContext) => c.params[kind];
  return [
    { method: 'GET', path: base, handle: async (c) => sendJson(c.res, 200, await workspaceStates(c.client, id(c))) },
    { method: 'GET', path: `${base}/files`, handle: (c) => files(c, id(c)) },
    { method: 'GET', path: `${base}/file`, handle: (c) => file(c, id(c)) },
    { method: 'GET', path: `${base}/diff`, handle: (c) => diff(c, id(c)) },
    { method: 'GET', path: `${base}/export`, handle: (c) => exportTar(c, id(c)) },
  ];
});

async function files(c: RequestContext, workflowId: string): Promise<void> {
  const ref = stateAtStep(await workspaceStates(c.client, workflowId), step(c, 'step'));
  const list = await listWorkspace(workspaceBlobs(c.client), ref, c.url.searchParams.get('path') ?? '');
  sendJson(c.res, 200, { ...(ref ? { ref } : {}), files: list });
}

async function file(c: RequestContext, workflowId: string): Promise<void> {
  const path = c.url.searchParams.get('path');
  if (!path) throw new HttpError(400, '"path" names the file: ?path=src/main.py (GET .../workspace/files lists them)');
  const ref = stateAtStep(await workspaceStates(c.client, workflowId), step(c, 'step'));
  const bytes = await workspaceFile(workspaceBlobs(c.client), ref, path);
  c.res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length });
  c.res.end(Buffer.from(bytes));
}

async function diff(c: RequestContext, workflowId: string): Promise<void> {
  const states = await workspaceStates(c.client, workflowId);
  const from = step(c, 'fromStep');
  const to = step(c, 'toStep');
  const result = await diffWorkspace(
    workspaceBlobs(c.client),
    from === undefined ? states.initial : stateAtStep(states, from),
    stateAtStep(states, to),
  );
  sendJson(c.res, 200, result);
}

async function exportTar(c: RequestContext, workflowId: string): Promise<void> {
  const ref = stateAtStep(await workspaceStates(c.client, workflowId), step(c, 'step'));
  const tar = await workspaceTar(workspaceBlobs(c.client), ref);
  c.res.writeHead(200, {
    'content-type': 'application/x-tar',
    'content-length': tar.length,
    'content-disposition': `attachment; filename="${workflowId.replace(/[^\w.-]/g, '_')}-workspace.tar"`,
  });
  c.res.end(tar);
}

/** A step parameter (a model call, 1-based), or a 400 naming what it must be. */
function step(c: RequestContext, name: string): number | undefined {
  const raw = c.url.searchParams.get(name);
  if (raw === null) return undefined;
  if (!/^[1-9]\d*$/.test(raw))
    throw new HttpError(400, `"${name}" must be a model call's number (1 or more), got "${raw}"`);
  return Number(raw);
}
