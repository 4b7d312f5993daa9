import type { RunAgentInput } from '@ag-ui/core';
import { agentNameProblem } from '../../core/state/agents';
import { workflowIdProblem } from '../../core/run/run-input';
import type { ApprovalDecision } from '../../core/tool-calls/approvals';
import type { ConversationOptions } from '../../core/conversation/conversation-state';
import { scopedWorkflowId } from '../../client/tenant-scope';
import { startMessage, stopTurn, type MessageRequest } from '../../client/conversations';
import { LiveFeed } from '../../client/live-events';
import type { ImageInput } from '../../storage/images';
import {
  ACCEPT_WITHIN_MS,
  busyOf,
  HttpError,
  MAX_MESSAGE_BODY_BYTES,
  messageExtrasOf,
  readJson,
  tenantOf,
} from '../http-io';
import { explainFailure, withinQueryWait } from '../../client/workflow-lookup';
import type { RequestContext, Route } from '../route-table';
import { decideAnswered, followTurn, pausedTurn } from '../../client/turn-follow';
import { refusalOf, unlessRefused, writeTurnStream } from '../turn-stream';
import { AgUiEncoder } from './ag-ui-events';

/**
 * AG-UI's HTTP transport, as `@ag-ui/client`'s `HttpAgent` speaks it:
 *
 *   POST /ag-ui            a run of the default agent
 *   POST /ag-ui/:agent     a run of the named agent (it applies when the thread starts)
 *
 * The body is a `RunAgentInput`; `threadId` is the conversation id, and the newest user message
 * is the turn's. A run that waits for approvals finishes with outcome `interrupt`; the next run's
 * `resume` entries answer them (`payload: {"approved", "reason"?}`) and the turn goes on. The
 * client's own tools, state and context are not used: tools run in the workers.
 */
export const agUiRoutes: Route[] = [
  { method: 'POST', path: '/ag-ui', handle: (c) => agUiRun(c, undefined) },
  { method: 'POST', path: '/ag-ui/:agent', handle: (c) => agUiRun(c, c.params.agent) },
];

/** One AG-UI run: a new message's turn, or the resumed turn its `resume` entries answer. */
async function agUiRun(c: RequestContext, agent: string | undefined): Promise<void> {
  const { req, res, o, gone, scope } = c;
  const agentProblem = agent === undefined ? undefined : agentNameProblem(agent);
  if (agentProblem) throw new HttpError(400, agentProblem);
  const input = runAgentInput(await readJson(req, MAX_MESSAGE_BODY_BYTES));
  const { threadId, runId } = input;
  // In the caller's tenant's id space: another tenant's thread is no thread to it, a new one its
  // own. Events name the thread as the client did.
  const id = await scopedWorkflowId(o.client, scope, threadId, 'conversation');
  const tenant = tenantOf(scope, undefined);
  const stream = { headers: AG_UI_HEADERS, gone };
  if (input.resume?.length) return resumeRun(c, id, input);
  const message = userMessage(input);
  // Ours in `forwardedProps`: `busy` (what the message does while a turn runs), and
  // `stopOnDisconnect` (a client whose abort means Stop: AG-UI's `abortRun` only closes the request).
  const props = (input.forwardedProps ?? {}) as Record<string, unknown>;
  if (props.busy !== undefined) message.busy = busyOf(props.busy);
  // And, as in the other routes' bodies, `user`, `tools` and `approvalTools` (see messageExtrasOf).
  const { user, tools, approvalTools } = messageExtrasOf(props);
  if (tools !== undefined) message.tools = tools;
  if (approvalTools !== undefined) message.approvalTools = approvalTools;
  const options: ConversationOptions = {
    stream: true,
    ...o.conversationOptions,
    ...(agent ? { agent } : {}),
    ...(tenant !== undefined ? { tenant } : {}),
    ...(user !== undefined ? { user } : {}),
    ...(tools !== undefined ? { tools } : {}),
    ...(approvalTools !== undefined ? { approvalTools } : {}),
  };
  // Opened before the message goes: its turn's first events can come at once (see live-events.ts).
  const live = new LiveFeed(id);
  let sent;
  try {
    // No worker accepting it in time: queued, durably, and the stream waits for its turn.
    sent = await startMessage(
      o.client,
      id,
      message,
      { taskQueue: o.taskQueue, options },
      { acceptWithinMs: ACCEPT_WITHIN_MS, signal: gone },
    );
  } catch (err) {
    live.close();
    throw err;
  }
  // A refused message (a busy conversation under `reject`, an unknown tool) starts no turn: say
  // why (409, 400) instead of following a turn that never comes.
  let streamed = false;
  if (props.stopOnDisconnect === true)
    gone.addEventListener('abort', () => void (streamed || stopTurn(o.client, id).catch(() => undefined)), {
      once: true,
    });
  const steps = followTurn(o.client, id, { messageId: sent.messageId, live, signal: gone });
  const followed = sent.queued ? steps : await unlessRefused(refusalOf(sent.result()), steps);
  try {
    return await writeTurnStream(res, {
      ...stream,
      encoder: new AgUiEncoder(threadId, runId, input),
      steps: followed,
    });
  } finally {
    streamed = true;
  }
}

/** A run whose `resume` entries answer the approvals its thread's turn waits for: the turn goes on. */
async function resumeRun({ res, o, gone }: RequestContext, id: string, input: RunAgentInput): Promise<void> {
  // No worker answers the query (none runs): said at once, not after the server's own limit.
  const paused = await withinQueryWait(o.client, () => pausedTurn(o.client, id)).catch(async (err: unknown) => {
    throw await explainFailure(o.client, id, err, 'conversation');
  });
  if (!paused) throw new HttpError(409, `the thread "${id}" has no interrupt to resume: its turn waits for nothing`);
  const encoder = new AgUiEncoder(input.threadId, input.runId, input);
  for (const e of paused.events) encoder.encode(e);
  encoder.pause();
  const decided = await decideAnswered(o.client, id, answers(input.resume!));
  const pending = paused.pending.filter((callId) => !decided.has(callId));
  return writeTurnStream(res, {
    headers: AG_UI_HEADERS,
    gone,
    encoder,
    steps: followTurn(o.client, id, { after: paused.after, turn: paused.turn, pending, signal: gone }),
  });
}

/** AG-UI's Server-Sent Events. */
const AG_UI_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/** Checks what matters of a `RunAgentInput`; a clear 400 otherwise. */
function runAgentInput(body: Record<string, unknown>): RunAgentInput {
  const { threadId, runId, messages, resume } = body;
  if (typeof threadId !== 'string')
    throw new HttpError(400, '"threadId" must be the thread\'s id (the conversation id)');
  const problem = workflowIdProblem(threadId, 'the thread id');
  if (problem) throw new HttpError(400, problem);
  if (typeof runId !== 'string' || runId === '') throw new HttpError(400, '"runId" must identify the run');
  if (!Array.isArray(messages)) throw new HttpError(400, '"messages" must be the thread\'s messages (an array)');
  if (resume !== undefined && !Array.isArray(resume))
    throw new HttpError(400, '"resume" must be a list of {"interruptId", "status", "payload"?}');
  return body as unknown as RunAgentInput;
}

/** The decisions in `resume` entries: `resolved` with `{approved}`, or `cancelled` (a rejection). */
function answers(resume: NonNullable<RunAgentInput['resume']>): ApprovalDecision[] {
  return resume.map((entry) => {
    if (typeof entry?.interruptId !== 'string')
      throw new HttpError(400, 'each "resume" entry needs the "interruptId" it answers');
    if (entry.status === 'cancelled') return { callId: entry.interruptId, approve: false, reason: 'cancelled' };
    const payload = entry.payload as { approved?: unknown; reason?: unknown } | undefined;
    if (entry.status !== 'resolved' || typeof payload?.approved !== 'boolean')
      throw new HttpError(
        400,
        `resume entry "${entry.interruptId}" must be {"status": "resolved", "payload": {"approved": true|false, "reason"?}} or {"status": "cancelled"}`,
      );
    return {
      callId: entry.interruptId,
      approve: payload.approved,
      ...(typeof payload.reason === 'string' && payload.reason ? { reason: payload.reason } : {}),
    };
  });
}

/** The newest user message of the input: its text and images. */
function userMessage(input: RunAgentInput): MessageRequest {
  const last = [...input.messages].reverse().find((m) => m?.role === 'user');
  if (!last || last.role !== 'user') throw new HttpError(400, '"messages" holds no user message to send');
  if (typeof last.content === 'string') {
    if (!last.content.trim()) throw new HttpError(400, 'the newest user message is empty');
    return { message: last.content };
  }
  if (!Array.isArray(last.content)) throw new HttpError(400, 'a user message\'s "content" must be text or parts');
  const text: string[] = [];
  const images: ImageInput[] = [];
  for (const part of last.content) {
    if (part?.type === 'text') {
      if (typeof part.text !== 'string') throw new HttpError(400, 'a "text" content part\'s "text" must be a string');
      text.push(part.text);
    } else if (part?.type === 'image' && (typeof part.source?.value !== 'string' || !part.source.value))
      throw new HttpError(400, 'an "image" content part\'s "source.value" must be a URL or base64 data');
    else if (part?.type === 'image' && part.source?.type === 'url') images.push(part.source.value);
    else if (part?.type === 'image' && part.source?.type === 'data') {
      if (typeof part.source.mimeType !== 'string' || !/^image\/[\w.+-]+$/.test(part.source.mimeType))
        throw new HttpError(400, 'an "image" content part with data needs "source.mimeType", e.g. "image/png"');
      images.push(`data:${part.source.mimeType};base64,${part.source.value}`);
    } else throw new HttpError(400, `content parts of type "${part?.type}" are not supported: send text and images`);
  }
  if (!text.join('').trim() && images.length === 0) throw new HttpError(400, 'the newest user message is empty');
  return images.length ? { message: text.join('\n'), images } : { message: text.join('\n') };
}
