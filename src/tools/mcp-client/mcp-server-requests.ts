import {
  ErrorCode,
  McpError,
  type CreateMessageRequest,
  type CreateMessageResult,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { ModelQuestion } from '../../contracts/activity-interface';
import type { PersonForm, ToolContext } from '../define-tool';
import { elicitationAnswer, elicitationQuestion } from './server-elicitation';

/**
 * What a server asks its client in the middle of a tool call (elicitation, sampling), answered
 * for the call it belongs to: by the person or the model the call asked (`askPerson`,
 * `askModel`) once it is made again with their answer. See McpToolSource.
 */

/** The calls in flight on one server's connection, oldest first. */
export interface CallsInFlight {
  calls: Set<InFlightCall>;
}

/** A tool call in flight, as a server's elicitation during it needs it. */
export interface InFlightCall {
  ctx: ToolContext;
  /** Whether the person's answer (`ctx.answer`) went to the server already. */
  answered: boolean;
  /** Ends the call by asking a person this (the call is made again with their answer). */
  ask(question: string, form?: PersonForm): void;
  /** Ends the call by asking the run's model (a server's sampling request; made again with the reply). */
  askModel(question: ModelQuestion): void;
}

/** How a call that must ask a person ends its wait for the server. */
export class AskPerson extends Error {
  constructor(
    readonly question: string,
    readonly form?: PersonForm,
  ) {
    super(question);
  }
}

/** How a call that must ask the run's model ends its wait for the server. */
export class AskModel extends Error {
  constructor(readonly question: ModelQuestion) {
    super('the server asks the model');
  }
}

/**
 * A server's elicitation, for the oldest call in flight on its connection (MCP does not say which
 * call a request belongs to over stdio; one call at a time is the common case): with the person's
 * answer (the call made again after they answered), the server gets it; without, the call asks
 * the person and is cancelled (`notifications/cancelled`), and the elicitation is left unanswered
 * (the server cancels it with its call; it is not the person's `cancel`). No call in flight:
 * `decline`.
 */
export async function elicit(
  server: string,
  state: CallsInFlight,
  params: Parameters<typeof elicitationQuestion>[1],
  cancelled: AbortSignal,
): Promise<ElicitResult> {
  const call = state.calls.values().next().value;
  if (!call) return { action: 'decline' };
  if (call.ctx.answer && !call.answered) {
    call.answered = true;
    const answer = elicitationAnswer(params, call.ctx.answer);
    if ('result' in answer) return answer.result;
    call.ask(
      `${elicitationQuestion(server, params)} (The last answer did not fit: ${answer.problem}.)`,
      formOf(server, params),
    );
  } else call.ask(elicitationQuestion(server, params), formOf(server, params));
  return unanswered(cancelled, { action: 'cancel' });
}

/** Unanswered until the server cancels it (with the call), or a minute has passed. */
function unanswered<T>(cancelled: AbortSignal, last: T): Promise<T> {
  return new Promise((resolve) => {
    const done = () => resolve(last);
    const timer = setTimeout(done, 60_000);
    timer.unref();
    cancelled.addEventListener('abort', () => (clearTimeout(timer), done()), { once: true });
  });
}

/**
 * A server's sampling request (`sampling/createMessage`), for the oldest call in flight on its
 * connection: with the model's reply (the call made again after the run asked its model), the
 * server gets it; without, the call asks the run's model (`askModel`: a recorded model call,
 * counted in the run's usage and budget) and is cancelled meanwhile. No call in flight: an error.
 */
export async function sample(
  state: CallsInFlight,
  params: CreateMessageRequest['params'],
  cancelled: AbortSignal,
): Promise<CreateMessageResult> {
  const call = state.calls.values().next().value;
  if (!call) throw new McpError(ErrorCode.InvalidRequest, 'sampling is answered during a tool call only');
  const answer = call.ctx.answer;
  if (answer?.model !== undefined && !call.answered) {
    call.answered = true;
    if (!answer.approved)
      throw new McpError(ErrorCode.InternalError, `the model could not answer: ${answer.text ?? ''}`);
    return {
      role: 'assistant',
      content: { type: 'text', text: answer.text ?? '' },
      model: answer.model,
      stopReason: 'endTurn',
    };
  }
  call.askModel(samplingQuestion(params));
  return unanswered(cancelled, { role: 'assistant', content: { type: 'text', text: '' }, model: 'none' });
}

/** A sampling request as the run's model gets it: text, with other content described. */
function samplingQuestion(params: CreateMessageRequest['params']): ModelQuestion {
  const text = (content: unknown): string => {
    const parts = Array.isArray(content) ? content : [content];
    return parts
      .map((c: { type?: string; text?: string; mimeType?: string }) =>
        c?.type === 'text' ? (c.text ?? '') : `[${c?.type ?? 'content'}${c?.mimeType ? `: ${c.mimeType}` : ''}]`,
      )
      .join('\n');
  };
  return {
    messages: params.messages.map((m) => ({
      role: m.role === 'assistant' ? 'assistant' : 'user',
      content: text(m.content),
    })),
    ...(params.systemPrompt ? { system: params.systemPrompt } : {}),
    ...(params.maxTokens ? { maxTokens: params.maxTokens } : {}),
  };
}

/** The form an elicitation asks a person to fill in (for the run's `mcp_elicitation` event). */
function formOf(server: string, params: Parameters<typeof elicitationQuestion>[1]): PersonForm {
  return params.mode === 'url'
    ? { server, message: params.message, url: params.url }
    : { server, message: params.message, requestedSchema: params.requestedSchema as Record<string, unknown> };
}
