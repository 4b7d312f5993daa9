import type { AgentEvent } from '../../core/events/agent-events';
import type { BudgetReport } from '../../core/state/limits';
import type { RunStatus } from '../../core/state/run-state';
import type { Usage } from '../../core/messages/chat-message';
import type { TurnEncoder } from '../turn-stream';

/**
 * The AI SDK's UI message stream (what `useChat` reads), written from our event log: one turn of a
 * conversation is one assistant message; each model call is a step; tool calls are static tool
 * parts (`tool-<name>`); our own events are `data-*` parts.
 *
 * Why hand-written and not `ai`'s `createUIMessageStream`: the stream is one JSON object per SSE
 * `data:` line, and what we need is the mapping from our events, which no library has; the `ai`
 * package (with its gateway and provider packages, ESM-only, Node 22+) would be a runtime
 * dependency of every worker and server for one `JSON.stringify`. The chunk types below are
 * checked against `ai`'s own `UIMessageChunk` in the tests, and the tests read our streams with
 * `ai`'s `DefaultChatTransport` and `readUIMessageStream`.
 */

/** What `finish` (and an approval pause) carries as the message's metadata. */
export interface UiTurnMetadata {
  /** The conversation's workflow id (its id in the Temporal UI). */
  workflowId: string;
  turn: number;
  /** How the turn ended, or `awaiting_approval` when it paused for a person. */
  status: RunStatus | 'awaiting_approval';
  usage?: Usage;
  costUsd?: number;
  budget?: BudgetReport;
  /** The agent that answered, when the turn was handed off. */
  agent?: string;
  /**
   * A person stopped the turn (its status is `cancelled`): the answer is what the model had
   * written by then. The same word as the transcript's message (`stopped: true`, `history --json`).
   */
  stopped?: true;
}

/** The chunks we write (a subset of the AI SDK's `UIMessageChunk`). */
export type UiMessageChunk =
  | { type: 'start'; messageId: string; messageMetadata?: UiTurnMetadata }
  | { type: 'start-step' }
  | { type: 'finish-step' }
  | { type: 'reset-step' }
  | { type: 'text-start'; id: string }
  | { type: 'text-delta'; id: string; delta: string }
  | { type: 'text-end'; id: string }
  | { type: 'reasoning-start'; id: string }
  | { type: 'reasoning-delta'; id: string; delta: string }
  | { type: 'reasoning-end'; id: string }
  | { type: 'tool-input-available'; toolCallId: string; toolName: string; input: unknown; title?: string }
  | { type: 'tool-approval-request'; approvalId: string; toolCallId: string; reason?: string }
  | { type: 'tool-approval-response'; approvalId: string; approved: boolean; reason?: string }
  | { type: 'tool-output-available'; toolCallId: string; output: unknown }
  | { type: 'tool-output-error'; toolCallId: string; errorText: string }
  | { type: 'tool-output-denied'; toolCallId: string }
  | { type: `data-${string}`; id?: string; data: unknown; transient?: boolean }
  | {
      type: 'finish';
      finishReason: 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'other';
      messageMetadata: UiTurnMetadata;
    }
  | { type: 'error'; errorText: string };

/** The assistant message id of a conversation's turn: the same in streams, resumes and the history. */
export function turnMessageId(conversationId: string, turn: number): string {
  return `${conversationId}-turn-${turn}`;
}

/** A turn's message metadata, as `finish` carries it and the loaded history repeats it. */
export function turnMetadata(
  conversationId: string,
  turn: number,
  status: UiTurnMetadata['status'],
  result?: { usage?: Usage; budget?: BudgetReport; agent?: string },
): UiTurnMetadata {
  const meta: UiTurnMetadata = {
    workflowId: conversationId,
    turn,
    status,
    ...(status === 'cancelled' ? { stopped: true as const } : {}),
  };
  if (result?.usage) {
    meta.usage = result.usage;
    if (result.usage.costUsd !== undefined) meta.costUsd = result.usage.costUsd;
  }
  if (result?.budget) meta.budget = result.budget;
  if (result?.agent) meta.agent = result.agent;
  return meta;
}

const FINISH_REASON: Record<RunStatus, Extract<UiMessageChunk, { type: 'finish' }>['finishReason']> = {
  completed: 'stop',
  immediate: 'stop',
  max_iterations: 'length',
  time_limit: 'length',
  budget_exceeded: 'length',
  guardrail_tripped: 'content-filter',
  cancelled: 'other',
  failed: 'error',
};

/**
 * Turns one turn's events, in order, into UI message chunks. Pure and deterministic: the same
 * events always give the same chunks, so a resumed stream (a replay from the turn's first event,
 * which is what `DefaultChatTransport` expects) rebuilds exactly the message the client had.
 */
export class UiMessageEncoder implements TurnEncoder {
  private step = false;
  /** A model call started after a step with content: its step opens with its first content. */
  private nextStep = false;
  private text?: { id: string; call: number };
  /** Text written since the last model call started (an answer not streamed is written at the end). */
  private stepText = false;
  /** The attempt of each model call that writes now (from its `model_retry`s; 1 without). */
  private readonly attempts = new Map<number, number>();
  /** Text parts opened per call and attempt, for the ids of a second part of one. */
  private readonly parts = new Map<string, number>();
  private readonly shown = new Set<string>();
  private readonly denied = new Set<string>();
  private ended = false;

  constructor(
    private readonly conversationId: string,
    private readonly turn: number,
  ) {}

  /** The message's first chunk. */
  begin(): UiMessageChunk[] {
    return [{ type: 'start', messageId: turnMessageId(this.conversationId, this.turn) }];
  }

  /** Whether the turn ended (`finish` or `error` was written). */
  get done(): boolean {
    return this.ended;
  }

  /** The chunks of one event. */
  encode(e: AgentEvent): UiMessageChunk[] {
    if (this.ended || e.turn !== this.turn) return [];
    const part = dataPart(e);
    if (part) return [part];
    const out: UiMessageChunk[] = [];
    this.stepChunks(e, out);
    return out;
  }

  /** The chunks of an event that opens, writes to or ends the message's steps. */
  private stepChunks(e: AgentEvent, out: UiMessageChunk[]): void {
    switch (e.type) {
      case 'model_call_started':
        // A fallback model answers as a new call: its step must not open before the failed call's
        // step is reset, so a new step opens with the call's first content (see openStep).
        this.endText(out);
        if (this.step) this.nextStep = true;
        else this.openStep(out);
        this.stepText = false;
        return;
      case 'text_delta':
        return this.textDelta(e, out);
      case 'model_retry':
      case 'model_fallback':
        return this.startOver(e, out);
      case 'reasoning': {
        this.endText(out);
        this.openStep(out);
        const id = `reasoning-${e.call}`;
        out.push(
          { type: 'reasoning-start', id },
          { type: 'reasoning-delta', id, delta: e.text },
          { type: 'reasoning-end', id },
        );
        return;
      }
      case 'tool_call_started':
        this.endText(out);
        return this.showInput(out, e.id, e.name, e.arguments);
      case 'tool_call_finished':
        if (this.denied.has(e.id)) return;
        this.endText(out);
        this.showInput(out, e.id, e.name, {});
        out.push(
          e.error
            ? { type: 'tool-output-error', toolCallId: e.id, errorText: e.result }
            : { type: 'tool-output-available', toolCallId: e.id, output: toolOutputValue(e.result, e.json) },
        );
        return;
      case 'approval_requested':
        this.endText(out);
        this.showInput(out, e.callId, e.tool, e.arguments);
        out.push({ type: 'tool-approval-request', approvalId: e.callId, toolCallId: e.callId });
        return;
      case 'approval_decided':
        out.push({
          type: 'tool-approval-response',
          approvalId: e.callId,
          approved: e.approved,
          ...(e.reason ? { reason: e.reason } : {}),
        });
        if (!e.approved) {
          this.denied.add(e.callId);
          out.push({ type: 'tool-output-denied', toolCallId: e.callId });
        }
        return;
      case 'message_steered':
        // The person's words that joined the turn: shown where they came in the answer, as history shows them.
        this.endText(out);
        out.push({
          type: 'data-steered',
          data: { message: e.message, ...(e.messageId ? { messageId: e.messageId } : {}) },
        });
        return;
      case 'turn_completed':
        return this.finish(e.result, out);
      case 'turn_failed':
        this.endText(out);
        out.push({ type: 'error', errorText: e.error });
        this.ended = true;
        return;
    }
  }

  /** Streamed text: a part per model call (and attempt), opened at its first delta. */
  private textDelta(e: Extract<AgentEvent, { type: 'text_delta' }>, out: UiMessageChunk[]): void {
    if (!e.delta) return;
    this.openStep(out);
    if (!this.text || this.text.call !== e.call) {
      this.endText(out);
      this.text = { id: this.textId(e.call), call: e.call };
      out.push({ type: 'text-start', id: this.text.id });
    }
    out.push({ type: 'text-delta', id: this.text.id, delta: e.delta });
    this.stepText = true;
  }

  /**
   * A retried or fallen-back call: the text written so far for it is void, and the new attempt (or
   * model) starts over, in the same step, in a part of its own (see textId).
   */
  private startOver(e: Extract<AgentEvent, { type: 'model_retry' | 'model_fallback' }>, out: UiMessageChunk[]): void {
    if (e.type === 'model_retry') this.attempts.set(e.call, e.attempt);
    this.endText(out);
    if (this.step) out.push({ type: 'reset-step' });
    this.nextStep = false;
    this.text = undefined;
    this.stepText = false;
    out.push(
      e.type === 'model_retry'
        ? { type: 'data-model-retry', data: { call: e.call, attempt: e.attempt, error: e.error }, transient: true }
        : { type: 'data-model-fallback', data: { call: e.call, from: e.from, to: e.to, error: e.error } },
    );
  }

  /** The turn's end: an answer that was not streamed, the last step's end, and `finish` with its metadata. */
  private finish(result: Extract<AgentEvent, { type: 'turn_completed' }>['result'], out: UiMessageChunk[]): void {
    this.endText(out);
    // An answer that was not streamed (streaming off, an immediate tool's result, structured output).
    const answer = result.content ?? (result.output !== undefined ? JSON.stringify(result.output) : null);
    if (!this.stepText && answer && result.status !== 'immediate') {
      this.openStep(out);
      const id = 'text-answer';
      out.push({ type: 'text-start', id }, { type: 'text-delta', id, delta: answer }, { type: 'text-end', id });
    }
    if (this.step) out.push({ type: 'finish-step' });
    this.step = false;
    this.nextStep = false;
    out.push({
      type: 'finish',
      finishReason: FINISH_REASON[result.status],
      messageMetadata: this.metadata(result.status, result),
    });
    this.ended = true;
  }

  /**
   * The turn waits for a person: the message ends here (`finish` with `tool-calls`), so that the
   * client can answer the approval requests; the answer's request continues the same message.
   */
  pause(): UiMessageChunk[] {
    const out: UiMessageChunk[] = [];
    this.endText(out);
    if (this.step) out.push({ type: 'finish-step' });
    this.step = false;
    this.nextStep = false;
    out.push({ type: 'finish', finishReason: 'tool-calls', messageMetadata: this.metadata('awaiting_approval') });
    return out;
  }

  /** The stream broke: the client shows the reason (the turn itself goes on in its workflow). */
  failure(message: string): UiMessageChunk[] {
    return [{ type: 'error', errorText: message }];
  }

  private metadata(
    status: UiTurnMetadata['status'],
    result?: { usage?: Usage; budget?: BudgetReport; agent?: string },
  ): UiTurnMetadata {
    return turnMetadata(this.conversationId, this.turn, status, result);
  }

  private openStep(out: UiMessageChunk[]): void {
    if (this.step && !this.nextStep) return;
    if (this.nextStep) out.push({ type: 'finish-step' });
    out.push({ type: 'start-step' });
    this.step = true;
    this.nextStep = false;
  }

  /**
   * The id of a new text part of `call`: `text-<call>`, and `text-<call>-<attempt>` for an attempt
   * after a `model_retry` (a further part of one: `...-p<n>`). Named by what wrote it, not by how
   * many parts came before: a stream resumed from the durable log (which may lack a failed
   * attempt's text that the live stream showed) names each part as the first stream did, and a
   * retried attempt never writes into the part its failed attempt opened (which `reset-step` took
   * from the page).
   */
  private textId(call: number): string {
    const attempt = this.attempts.get(call) ?? 1;
    const base = attempt === 1 ? `text-${call}` : `text-${call}-${attempt}`;
    const n = (this.parts.get(base) ?? 0) + 1;
    this.parts.set(base, n);
    return n === 1 ? base : `${base}-p${n}`;
  }

  private endText(out: UiMessageChunk[]): void {
    if (!this.text) return;
    out.push({ type: 'text-end', id: this.text.id });
    this.text = undefined;
  }

  private showInput(out: UiMessageChunk[], id: string, name: string, input: Record<string, unknown>): void {
    if (this.shown.has(id)) return;
    this.openStep(out);
    this.shown.add(id);
    out.push({ type: 'tool-input-available', toolCallId: id, toolName: name, input });
  }
}

/** The last line of a UI message stream. */
export const SSE_DONE = 'data: [DONE]\n\n';

/** The headers of a UI message stream response (the AI SDK's `UI_MESSAGE_STREAM_HEADERS`). */
export const UI_MESSAGE_STREAM_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
} as const;

/**
 * A tool's output as the AI SDK gives it to the page: the value the tool returned (an object stays
 * an object, a string a string). Our events and transcripts carry the text the model read, marked
 * `json` when it is the whole JSON of a non-string value; anything else (a view that was cut) is
 * the text.
 */
export function toolOutputValue(result: string, json: boolean | undefined): unknown {
  if (!json) return result;
  try {
    return JSON.parse(result);
  } catch {
    return result;
  }
}

/** The data part of an event that only reports (no step opens, no text ends), or undefined. */
function dataPart(e: AgentEvent): UiMessageChunk | undefined {
  switch (e.type) {
    case 'approval_escalated':
      return { type: 'data-approval-escalated', id: e.callId, data: { callId: e.callId, deadline: e.deadline } };
    case 'mcp_elicitation':
      // The form to draw; the tool-approval-request that follows is how it is answered.
      return {
        type: 'data-mcp-elicitation',
        id: e.callId,
        data: {
          callId: e.callId,
          server: e.server,
          message: e.message,
          ...(e.requestedSchema ? { requestedSchema: e.requestedSchema } : {}),
          ...(e.url ? { url: e.url } : {}),
        },
      };
    case 'tool_progress':
      // One part per call, updated in place (the same id) as the tool goes on.
      return {
        type: 'data-tool-progress',
        id: e.id,
        data: {
          callId: e.id,
          progress: e.progress,
          ...(e.total !== undefined ? { total: e.total } : {}),
          ...(e.message ? { message: e.message } : {}),
        },
      };
    case 'tool_retried':
      return { type: 'data-tool-retry', data: { callId: e.id, attempt: e.attempt, reason: e.reason }, transient: true };
    case 'wait_started':
    case 'wait_ended': {
      // One part per wait (same id), updated when it ends.
      const { type: _type, offset: _offset, turn: _turn, ...data } = e;
      return {
        type: 'data-wait',
        id: e.callId,
        data: { ...data, state: e.type === 'wait_started' ? 'waiting' : 'ended' },
      };
    }
    case 'handoff':
    case 'compaction':
    case 'guardrail_tripped':
    case 'guardrail_intervened':
    case 'event_received': {
      const { type, offset: _offset, turn: _turn, ...data } = e;
      return {
        type: `data-${type.replace(/_/g, '-')}`,
        data,
        ...(type === 'event_received' ? { transient: true } : {}),
      } as UiMessageChunk;
    }
    default:
      return undefined;
  }
}
