import { MAX_MESSAGE_CHARS, workflowIdProblem } from '../../core/run/run-input';
import { MAX_MESSAGE_ID_CHARS, messageIdProblem } from '../../core/messages/message-ids';
import type { ApprovalDecision } from '../../core/tool-calls/approvals';
import type { ChatMessage } from '../../core/messages/chat-message';
import type { MessageRequest } from '../../client/conversations';
import { forkMessageId } from '../../client/branches';
import type { ImageInput } from '../../storage/images';
import { busyOf, HttpError, messageExtrasOf } from '../http-io';
import { toolOutputValue, turnMessageId, type UiTurnMetadata } from './ui-message-chunks';

/**
 * The AI SDK's `UIMessage`s, both ways: what a `useChat` request asks for (a new user message, or
 * answers to approval requests), and a conversation's transcript as the messages a front end
 * loads, so a second browser (or a reload) sees the same conversation the workflow holds.
 */

/** A message part, as far as we read and write them (the AI SDK's `UIMessagePart`). */
export type UiPart =
  | { type: 'text'; text: string; state?: 'done' }
  | { type: 'reasoning'; text: string; state?: 'done' }
  | { type: 'file'; mediaType: string; url: string; filename?: string }
  | { type: 'step-start' }
  /** A message that joined the turn (`busy: "steer"`), where it came in the answer. */
  | { type: 'data-steered'; data: { message: string } }
  | ({ type: `tool-${string}`; toolCallId: string; input: unknown } & (
      | { state: 'output-available'; output: unknown }
      | { state: 'output-error'; errorText: string }
      | { state: 'output-denied'; approval: { id: string; approved: false; reason?: string } }
    ));

/** A message as the AI SDK's `useChat` holds it. */
export interface UiMessage {
  id: string;
  role: 'user' | 'assistant';
  parts: UiPart[];
  /** An answer's metadata, as its stream's `finish` had it (while the conversation keeps the turn's events). */
  metadata?: UiTurnMetadata;
}

/** What a `POST /api/chat` asks for. */
export type ChatAction =
  { kind: 'message'; message: MessageRequest } | { kind: 'approvals'; decisions: ApprovalDecision[] };

/** The body `DefaultChatTransport` sends (with `agent` added through the transport's `body` option). */
export interface ChatRequestBody {
  id: string;
  agent?: string;
  action: ChatAction;
  /** `user`, `tools` and `approvalTools` of the body (see `messageExtrasOf`). */
  extras: ReturnType<typeof messageExtrasOf>;
}

/** Reads a `POST /api/chat` body; a clear 400 for anything that is not one. */
export function chatRequest(body: Record<string, unknown>): ChatRequestBody {
  const { id, messages, trigger, agent, busy, messageId: replaced } = body;
  if (typeof id !== 'string' || id === '')
    throw new HttpError(400, '"id" must be the chat\'s id (the conversation id), as useChat sends it');
  const idProblem = workflowIdProblem(id, 'the chat id');
  if (idProblem) throw new HttpError(400, idProblem);
  if (agent !== undefined && (typeof agent !== 'string' || agent === ''))
    throw new HttpError(400, '"agent" must be the name of an agent');
  if (trigger !== undefined && trigger !== 'submit-message' && trigger !== 'regenerate-message')
    throw new HttpError(
      400,
      `"trigger" must be "submit-message" or "regenerate-message", got ${JSON.stringify(trigger)}`,
    );
  if (!Array.isArray(messages) || messages.length === 0)
    throw new HttpError(400, '"messages" must be the chat\'s messages (UIMessage[]), the newest last');
  const last = messages[messages.length - 1] as Record<string, unknown> | null;
  if (last === null || typeof last !== 'object' || !Array.isArray(last.parts))
    throw new HttpError(400, 'the newest message must be a UIMessage with "role" and "parts"');
  const parts = last.parts as Array<Record<string, unknown>>;
  // The UI message's id (useChat gives every message one): the same message sent again is one message.
  // An id it cannot take is refused, not dropped: without it a retried POST would be answered twice.
  const lastIdProblem = last.id === undefined ? undefined : messageIdProblem(last.id);
  if (lastIdProblem)
    throw new HttpError(400, `the newest message's "id" ${lastIdProblem.replace(/^"messageId" /, '')}`);
  const messageId = last.id as string | undefined;
  // Regenerate (an answer again) and edit (`sendMessage` with the `messageId` of an earlier
  // message) fork the conversation at this user message; the branch it replaces stays readable.
  const forks = trigger === 'regenerate-message' || (last.role === 'user' && replaced !== undefined);
  if (forks && messageId === undefined)
    throw new HttpError(
      400,
      'to regenerate or edit, the newest message must be the user message to answer again, with its "id"',
    );
  // A fork's message is sent as `<id>~<8 hex digits>` (see forkMessageId), within the same limit.
  if (forks && messageId!.replace(/~[^~]*$/, '').length > MAX_MESSAGE_ID_CHARS - 9)
    throw new HttpError(
      400,
      `to regenerate or edit, the message's "id" must be at most ${MAX_MESSAGE_ID_CHARS - 9} characters (its fork adds 9)`,
    );
  const action: ChatAction =
    last.role === 'user'
      ? {
          kind: 'message',
          message: {
            ...userMessage(parts),
            ...(forks
              ? { fork: { atMessageId: messageId! }, messageId: forkMessageId(messageId) }
              : messageId
                ? { messageId }
                : {}),
            ...(busy !== undefined ? { busy: busyOf(busy) } : {}),
          },
        }
      : last.role === 'assistant'
        ? { kind: 'approvals', decisions: approvalAnswers(parts) }
        : badRole(last.role);
  const extras = messageExtrasOf(body);
  if (action.kind === 'message') {
    if (extras.tools) action.message.tools = extras.tools;
    if (extras.approvalTools) action.message.approvalTools = extras.approvalTools;
  }
  return { id, ...(agent ? { agent } : {}), action, extras };
}

function badRole(role: unknown): never {
  throw new HttpError(
    400,
    `the newest message must be the user's (or the assistant's with approval answers), not ${JSON.stringify(role)}`,
  );
}

function userMessage(parts: Array<Record<string, unknown>>): MessageRequest {
  const text = parts
    .filter((p) => p?.type === 'text')
    .map((p) => (typeof p.text === 'string' ? p.text : ''))
    .join('\n');
  const images: ImageInput[] = [];
  for (const p of parts) {
    if (p?.type !== 'file') continue;
    if (typeof p.url !== 'string' || typeof p.mediaType !== 'string')
      throw new HttpError(400, 'a file part needs "url" and "mediaType"');
    if (!p.mediaType.startsWith('image/'))
      throw new HttpError(
        400,
        `files of type ${p.mediaType} are not supported: send images (image/png, image/jpeg, image/gif, image/webp) or text`,
      );
    images.push(typeof p.filename === 'string' ? { url: p.url, name: p.filename } : p.url);
  }
  if (!text.trim() && images.length === 0) throw new HttpError(400, 'the newest user message has no text and no image');
  if (text.length > MAX_MESSAGE_CHARS)
    throw new HttpError(
      400,
      `the newest user message's text parts hold ${text.length} characters, more than the ${MAX_MESSAGE_CHARS} a message may have`,
    );
  return images.length ? { message: text, images } : { message: text };
}

/** The approval answers (`addToolApprovalResponse`) in the assistant message the client sends back. */
function approvalAnswers(parts: Array<Record<string, unknown>>): ApprovalDecision[] {
  const decisions: ApprovalDecision[] = [];
  for (const p of parts) {
    if (typeof p?.type !== 'string' || !p.type.startsWith('tool-') || p.state !== 'approval-responded') continue;
    const approval = p.approval as { id?: unknown; approved?: unknown; reason?: unknown } | undefined;
    if (typeof approval?.id !== 'string' || typeof approval.approved !== 'boolean')
      throw new HttpError(400, 'an answered approval needs "approval": {"id", "approved"}');
    decisions.push({
      callId: approval.id,
      approve: approval.approved,
      ...(typeof approval.reason === 'string' && approval.reason ? { reason: approval.reason } : {}),
    });
  }
  if (decisions.length === 0)
    throw new HttpError(
      400,
      "the newest message is the assistant's and answers no approval request: send a user message, or answer with addToolApprovalResponse",
    );
  return decisions;
}

/**
 * A conversation's transcript as UI messages: each user message as it was sent, and the replies
 * of each turn as one assistant message (a step per model call) with the id its stream has. A
 * turn still running is left out: `resume` streams it whole. Turns are numbered back from
 * `finishedTurns` (the conversation's count), so the recent ones, which a resumed stream may
 * rebuild, have the ids of their streams whatever came before.
 */
export function uiMessages(
  conversationId: string,
  transcript: readonly ChatMessage[],
  running: boolean,
  finishedTurns?: number,
  /** The metadata of the turns whose end is still kept (see `turnMetadata`), by turn. */
  metadata?: ReadonlyMap<number, UiTurnMetadata>,
): UiMessage[] {
  let end = transcript.length;
  if (running) while (end > 0 && transcript[end - 1].role !== 'user') end--;
  const results = new Map<string, Extract<ChatMessage, { role: 'tool' }>>();
  for (const m of transcript) if (m.role === 'tool') results.set(m.tool_call_id, m);
  const out: UiMessage[] = [];
  const replies: Array<{ message: UiMessage; run: number; turn?: number }> = [];
  // The turn of the last user message, when it knows it (a branch's turns are not one after another).
  let turnOf: number | undefined;
  let runs = 0;
  let reply: UiMessage | undefined;
  for (let i = 0; i < end; i++) {
    const m = transcript[i];
    if (m.role === 'user' && m.steered && reply) {
      // Sent with busy "steer": part of the turn's answer, where the stream showed it (`data-steered`).
      reply.parts.push({ type: 'data-steered', data: { message: m.content } });
    } else if (m.role === 'user') {
      reply = undefined;
      if (transcript[i - 1]?.role !== 'user') runs++;
      const parts: UiPart[] = [{ type: 'text', text: m.content }];
      for (const image of m.images ?? [])
        if (image.url)
          parts.push({
            type: 'file',
            mediaType: image.mediaType ?? 'image/*',
            url: image.url,
            ...(image.name ? { filename: image.name } : {}),
          });
      // The id its sender gave it, as the page that sent it knows it (a fork's without its suffix).
      const id = m.messageId?.replace(/~[^~]*$/, '') ?? `${conversationId}-user-${i}`;
      out.push({ id, role: 'user', parts });
      turnOf = m.turn;
    } else if (m.role === 'assistant') {
      if (!reply) {
        reply = { id: '', role: 'assistant', parts: [] };
        replies.push({ message: reply, run: runs, turn: turnOf });
        turnOf = undefined;
        out.push(reply);
      }
      reply.parts.push({ type: 'step-start' });
      for (const r of m.reasoning ?? [])
        if (r.text) reply.parts.push({ type: 'reasoning', text: r.text, state: 'done' });
      if (m.content) reply.parts.push({ type: 'text', text: m.content, state: 'done' });
      for (const call of m.tool_calls ?? []) reply.parts.push(toolPart(call, results.get(call.id)));
    }
  }
  const finishedRuns = running ? runs - 1 : runs;
  for (const { message, run, turn: known } of replies) {
    const turn = known ?? (finishedTurns === undefined ? run : finishedTurns - (finishedRuns - run));
    message.id = turnMessageId(conversationId, turn);
    const meta = metadata?.get(turn);
    if (meta) message.metadata = meta;
  }
  return out;
}

function toolPart(
  call: NonNullable<Extract<ChatMessage, { role: 'assistant' }>['tool_calls']>[number],
  message?: Extract<ChatMessage, { role: 'tool' }>,
): UiPart {
  const result = message?.content;
  const type = `tool-${call.function.name}` as const;
  let input: unknown = {};
  try {
    input = JSON.parse(call.function.arguments || '{}');
  } catch {
    input = call.function.arguments;
  }
  const base = { type, toolCallId: call.id, input };
  const denial = result?.match(/^Error: the user rejected this call to [^.]*(?:\. Reason: ([\s\S]*))?$/);
  if (denial)
    return {
      ...base,
      state: 'output-denied',
      approval: { id: call.id, approved: false, ...(denial[1] ? { reason: denial[1] } : {}) },
    };
  if (result?.startsWith('Error:')) return { ...base, state: 'output-error', errorText: result };
  return { ...base, state: 'output-available', output: message ? toolOutputValue(message.content, message.json) : '' };
}
