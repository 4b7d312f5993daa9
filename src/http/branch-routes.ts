import { forkConversation, listBranches, switchBranch, type ForkOptions } from '../client/branches';
import type { MessageRequest } from '../client/conversations';
import { tenantWorkflowId } from '../core/fleet/tenants';
import { workflowIdProblem } from '../core/run/run-input';
import { busyOf, HttpError, imagesOf, MAX_MESSAGE_BODY_BYTES, readJson, sendJson } from './http-io';
import type { RequestContext, Route } from './route-table';

/**
 * A conversation's branches over HTTP (see `core/conversation/branches.ts`):
 *
 *   GET  /conversations/:id/branches    the branches, the current one first
 *   POST /conversations/:id/branch      {"branch"}: makes that branch current again (between turns); answers with the branches
 *   POST /conversations/:id/fork        {"atMessage" | "atMessageId", "message"?, "images"?, "busy"?, "into"?, "branch"?}:
 *                                       the message (absent: the same one again) in place of that user message → `ForkResult`
 *
 * Reading a branch is `GET /conversations/:id?branch=<id>`.
 */
export const branchRoutes: Route[] = [
  {
    method: 'GET',
    path: '/conversations/:conversation/branches',
    handle: async ({ res, client, params }) => sendJson(res, 200, await listBranches(client, params.conversation)),
  },
  {
    method: 'POST',
    path: '/conversations/:conversation/branch',
    handle: async ({ req, res, client, params }) => {
      const { branch } = await readJson(req);
      if (typeof branch !== 'string' || branch === '')
        throw new HttpError(400, '"branch" must be the id of one of the conversation\'s branches (GET .../branches)');
      return sendJson(res, 200, await switchBranch(client, params.conversation, branch));
    },
  },
  { method: 'POST', path: '/conversations/:conversation/fork', handle: fork },
];

async function fork({ req, res, o, params, scope }: RequestContext): Promise<void> {
  const body = await readJson(req, MAX_MESSAGE_BODY_BYTES);
  const options = forkOptions(body);
  // A new conversation a tenant forks into is in its tenant's id space, as every id it names.
  if (options.into !== undefined && scope.tenant !== undefined) {
    const problem = workflowIdProblem(options.into, 'the new conversation id');
    if (problem) throw new HttpError(400, problem);
    options.into = tenantWorkflowId(scope.tenant, options.into);
  }
  return sendJson(res, 200, await forkConversation(o.client, params.conversation, options, { taskQueue: o.taskQueue }));
}

/** A fork request's body as {@link ForkOptions}; a clear 400 for what is not one. */
function forkOptions(body: Record<string, unknown>): ForkOptions {
  const { atMessage, atMessageId, message, into, branch, busy } = body;
  if ((atMessage === undefined) === (atMessageId === undefined))
    throw new HttpError(
      400,
      'name the user message to fork at: "atMessage" (its transcript index) or "atMessageId" (its id)',
    );
  if (atMessage !== undefined && !(Number.isInteger(atMessage) && (atMessage as number) >= 0))
    throw new HttpError(400, '"atMessage" must be a transcript index (an integer >= 0)');
  if (atMessageId !== undefined && (typeof atMessageId !== 'string' || atMessageId === ''))
    throw new HttpError(400, '"atMessageId" must be a message id');
  for (const [key, value] of Object.entries({ message, into, branch }))
    if (value !== undefined && (typeof value !== 'string' || value === ''))
      throw new HttpError(400, `"${key}" must be a non-empty string`);
  const images = imagesOf(body);
  let request: MessageRequest | undefined;
  if (message !== undefined || images) request = { message: (message as string | undefined) ?? '' };
  if (request && images) request.images = images;
  if (request && busy !== undefined) request.busy = busyOf(busy);
  const point = atMessage !== undefined ? { atMessage: atMessage as number } : { atMessageId: atMessageId as string };
  return {
    ...point,
    ...(request ? { message: request } : {}),
    ...(into !== undefined ? { into: into as string } : {}),
    ...(branch !== undefined ? { branch: branch as string } : {}),
  };
}
