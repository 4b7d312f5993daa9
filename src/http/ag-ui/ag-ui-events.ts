import { EventType, type AGUIEvent, type Interrupt, type RunAgentInput, type TokenUsage } from '@ag-ui/core';
import type { AgentEvent } from '../../core/events/agent-events';
import type { Usage } from '../../core/messages/chat-message';
import type { TurnEncoder } from '../turn-stream';

/**
 * AG-UI (the protocol CopilotKit and other agent front ends speak), written from our event log:
 * one AG-UI run is one turn of a conversation (the thread). Text is a text message per model
 * call, tool calls are TOOL_CALL_START/ARGS/END then TOOL_CALL_RESULT, each model call a step,
 * approvals are interrupts (the run finishes with outcome `interrupt`; the next run's `resume`
 * answers them), and our other events are CUSTOM events. The event types are `@ag-ui/core`'s;
 * the SSE framing (`data: <json>`) is written by `writeTurnStream`, which is all `@ag-ui/encoder`
 * would do for SSE, without its protobuf dependencies.
 */

/** What the thread's state says at the end of a run (a STATE_SNAPSHOT). */
export interface AgUiThreadState {
  /** The conversation's workflow id (its id in the Temporal UI). */
  workflowId: string;
  turn: number;
  status: string;
  usage?: Usage;
  /** Tool calls waiting for a person's decision. */
  pendingApprovals: string[];
}

/** The AG-UI events of one run (one turn), from our events in order. */
export class AgUiEncoder implements TurnEncoder {
  private turn = 0;
  private text?: string;
  private texts = 0;
  private step?: string;
  private readonly shown = new Set<string>();
  private readonly pending = new Map<string, Interrupt>();

  constructor(
    private readonly threadId: string,
    private readonly runId: string,
    /** The run's input, echoed in RUN_STARTED as the protocol asks. */
    private readonly input?: RunAgentInput,
  ) {}

  begin(): AGUIEvent[] {
    return [
      {
        type: EventType.RUN_STARTED,
        threadId: this.threadId,
        runId: this.runId,
        ...(this.input !== undefined ? { input: this.input } : {}),
      },
    ];
  }

  encode(e: AgentEvent): AGUIEvent[] {
    this.turn = e.turn;
    const out: AGUIEvent[] = [];
    switch (e.type) {
      case 'model_call_started':
        this.endText(out);
        this.endStep(out);
        this.step = `model call ${e.call}`;
        out.push({ type: EventType.STEP_STARTED, stepName: this.step });
        break;
      case 'text_delta':
        if (!e.delta) break;
        if (!this.text) {
          this.text = `${this.threadId}-turn-${e.turn}-text-${++this.texts}`;
          out.push({ type: EventType.TEXT_MESSAGE_START, messageId: this.text, role: 'assistant' });
        }
        out.push({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: this.text, delta: e.delta });
        break;
      case 'reasoning':
        this.reasoning(e, out);
        break;
      case 'model_retry':
      case 'model_fallback': {
        // AG-UI cannot take text back: the text message so far ends, and the event says it is void.
        this.endText(out);
        const { type, offset: _offset, turn: _turn, ...value } = e;
        out.push({ type: EventType.CUSTOM, name: type, value: { ...value, voidsText: true } });
        break;
      }
      case 'tool_call_started':
        this.endText(out);
        this.showCall(out, e.id, e.name, e.arguments);
        break;
      case 'tool_call_finished':
        this.endText(out);
        this.showCall(out, e.id, e.name, {});
        out.push({
          type: EventType.TOOL_CALL_RESULT,
          messageId: `${e.id}-result`,
          toolCallId: e.id,
          content: e.result,
          role: 'tool',
          ...(e.error ? { metadata: { error: true } } : {}),
        });
        break;
      case 'approval_requested':
        this.askApproval(e, out);
        break;
      case 'approval_decided':
        this.pending.delete(e.callId);
        out.push({
          type: EventType.CUSTOM,
          name: e.type,
          value: { callId: e.callId, approved: e.approved, ...(e.reason ? { reason: e.reason } : {}) },
        });
        break;
      case 'turn_completed':
        this.finish(e.result, out);
        break;
      case 'turn_failed':
        this.endText(out);
        out.push({ type: EventType.RUN_ERROR, message: e.error, code: e.errorType });
        break;
      case 'turn_started':
        break;
      default: {
        // Waits, handoffs, compactions, guardrails, retries of tools, events delivered: as they are.
        const { type, offset: _offset, turn: _turn, ...value } = e;
        out.push({ type: EventType.CUSTOM, name: type, value });
      }
    }
    return out;
  }

  /** Readable reasoning: one reasoning message, whole. */
  private reasoning(e: Extract<AgentEvent, { type: 'reasoning' }>, out: AGUIEvent[]): void {
    this.endText(out);
    const messageId = `${this.threadId}-turn-${e.turn}-reasoning-${e.call}`;
    out.push(
      { type: EventType.REASONING_START, messageId },
      { type: EventType.REASONING_MESSAGE_START, messageId, role: 'reasoning' },
      { type: EventType.REASONING_MESSAGE_CONTENT, messageId, delta: e.text },
      { type: EventType.REASONING_MESSAGE_END, messageId },
      { type: EventType.REASONING_END, messageId },
    );
  }

  /** A call waits for approval: its interrupt (for the run's end) and a custom event now. */
  private askApproval(e: Extract<AgentEvent, { type: 'approval_requested' }>, out: AGUIEvent[]): void {
    this.endText(out);
    this.showCall(out, e.callId, e.tool, e.arguments);
    this.pending.set(e.callId, {
      id: e.callId,
      reason: 'tool_approval',
      message: `Approve ${e.summary}?`,
      toolCallId: e.callId,
      responseSchema: APPROVAL_SCHEMA,
      ...(e.deadline ? { expiresAt: e.deadline } : {}),
      ...(e.workflowId || e.agent
        ? {
            metadata: {
              ...(e.workflowId ? { workflowId: e.workflowId } : {}),
              ...(e.agent ? { agent: e.agent } : {}),
            },
          }
        : {}),
    });
    out.push({
      type: EventType.CUSTOM,
      name: 'approval_requested',
      value: { callId: e.callId, tool: e.tool, summary: e.summary },
    });
  }

  /** The turn's end: the state, and RUN_FINISHED with its result. */
  private finish(result: Extract<AgentEvent, { type: 'turn_completed' }>['result'], out: AGUIEvent[]): void {
    this.endText(out);
    this.endStep(out);
    out.push(this.snapshot(result.status, result.usage), {
      type: EventType.RUN_FINISHED,
      threadId: this.threadId,
      runId: this.runId,
      result: {
        status: result.status,
        content: result.content,
        ...(result.output !== undefined ? { output: result.output } : {}),
      },
      ...(result.status === 'cancelled' ? { outcome: { type: 'cancelled' } } : {}),
      usage: tokenUsage(result.usage),
    });
  }

  /** The run waits for approvals: it finishes with the interrupts a next run's `resume` answers. */
  pause(): AGUIEvent[] {
    const out: AGUIEvent[] = [];
    this.endText(out);
    this.endStep(out);
    out.push(this.snapshot('awaiting_approval'), {
      type: EventType.RUN_FINISHED,
      threadId: this.threadId,
      runId: this.runId,
      outcome: { type: 'interrupt', interrupts: [...this.pending.values()] },
    });
    return out;
  }

  failure(message: string): AGUIEvent[] {
    return [{ type: EventType.RUN_ERROR, message, code: 'Http.StreamFailed' }];
  }

  private snapshot(status: string, usage?: Usage): AGUIEvent {
    const snapshot: AgUiThreadState = {
      workflowId: this.threadId,
      turn: this.turn,
      status,
      ...(usage ? { usage } : {}),
      pendingApprovals: [...this.pending.keys()],
    };
    return { type: EventType.STATE_SNAPSHOT, snapshot };
  }

  private endText(out: AGUIEvent[]): void {
    if (!this.text) return;
    out.push({ type: EventType.TEXT_MESSAGE_END, messageId: this.text });
    this.text = undefined;
  }

  private endStep(out: AGUIEvent[]): void {
    if (!this.step) return;
    out.push({ type: EventType.STEP_FINISHED, stepName: this.step });
    this.step = undefined;
  }

  private showCall(out: AGUIEvent[], id: string, name: string, args: Record<string, unknown>): void {
    if (this.shown.has(id)) return;
    this.shown.add(id);
    out.push(
      { type: EventType.TOOL_CALL_START, toolCallId: id, toolCallName: name },
      { type: EventType.TOOL_CALL_ARGS, toolCallId: id, delta: JSON.stringify(args) },
      { type: EventType.TOOL_CALL_END, toolCallId: id },
    );
  }
}

/** The answer an approval interrupt takes in `resume[].payload`. */
export const APPROVAL_SCHEMA = {
  type: 'object',
  properties: { approved: { type: 'boolean' }, reason: { type: 'string' } },
  required: ['approved'],
} as const;

/** Our usage as AG-UI's token usage: one entry per model. */
function tokenUsage(usage: Usage): TokenUsage[] {
  const entry = (u: Omit<Usage, 'byModel'>, model?: string): TokenUsage => ({
    ...(model ? { model } : {}),
    inputTokens: u.promptTokens,
    outputTokens: u.completionTokens,
    totalTokens: u.promptTokens + u.completionTokens,
    ...(u.reasoningTokens !== undefined ? { reasoningTokens: u.reasoningTokens } : {}),
    ...(u.cachedPromptTokens !== undefined ? { cachedInputTokens: u.cachedPromptTokens } : {}),
    ...(u.cacheWriteTokens !== undefined ? { cacheWriteInputTokens: u.cacheWriteTokens } : {}),
  });
  const byModel = Object.entries(usage.byModel ?? {});
  return byModel.length ? byModel.map(([model, u]) => entry(u, model)) : [entry(usage)];
}
