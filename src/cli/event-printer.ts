import { toolCallSummary } from '../core/context/summaries';
import type { AgentEvent } from '../core/events/agent-events';

/** Where a printer writes: the answer's text, and notes about what the agent does. */
export interface PrinterOutput {
  /** Answer text as it streams (no newline added). */
  text: (text: string) => void;
  /** One line about a step (tool calls, retries). */
  note: (line: string) => void;
}

/** Longest tool result shown on one line. */
const RESULT_CHARS = 200;

/**
 * Shows a run's or turn's events to a person: the answer as it is written, each tool call as it
 * starts and finishes, and a retried model call (whose text starts over). Remembers whether any
 * answer text was shown, so the final report need not repeat it.
 */
export class EventPrinter {
  /** Whether some answer text was printed (and not yet ended with a newline). */
  private midLine = false;
  /** Whether the final answer was streamed in full. */
  answerShown = false;
  private currentCall = 0;
  /** Model call number within its turn, by call. */
  private readonly iterations = new Map<number, number>();

  constructor(
    private readonly out: PrinterOutput,
    private readonly options: {
      /** Printed before the first text of each model call (e.g. `agent> ` in a chat). */
      textPrefix?: string;
      /** Note each model call as it starts (`… model call 2`). */
      modelCalls?: boolean;
      /** Note approval requests (off when the caller asks for the decision itself). */
      approvals?: boolean;
    } = {},
  ) {}

  /** Shows one event. */
  show(event: AgentEvent): void {
    const note = lineOf(event);
    if (note !== undefined) {
      this.endLine();
      this.out.note(note);
      return;
    }
    switch (event.type) {
      case 'model_call_started':
        this.endLine();
        this.currentCall = event.call;
        this.iterations.set(event.call, event.iteration);
        if (this.options.modelCalls) this.out.note(`  … model call ${event.iteration}`);
        break;
      case 'text_delta':
        if (event.call !== this.currentCall) return;
        if (!this.midLine) this.out.text(this.options.textPrefix ?? '');
        this.out.text(event.delta);
        this.midLine = true;
        break;
      case 'model_retry':
        // Failed attempts are reported as they fail (with when the next starts); here only the
        // text shown so far needs saying: it is void, the answer starts over.
        if (!this.midLine) break;
        this.endLine();
        this.out.note(
          `  ! model call ${this.iterations.get(event.call) ?? event.call} was retried (attempt ${event.attempt}); its answer starts over:`,
        );
        break;
      case 'approval_requested':
        this.endLine();
        if (this.options.approvals !== false)
          this.out.note(
            `  ? ${event.summary} awaits approval [call ${event.callId}]${event.agent ? ` (asked by agent ${event.agent})` : ''}${event.deadline ? `, decide by ${event.deadline}` : ''}`,
          );
        break;
      case 'approval_decided':
        this.out.note(
          `  ${event.approved ? 'approved' : 'rejected'} ${event.callId}${event.reason ? `: ${event.reason}` : ''}`,
        );
        break;
      case 'wait_ended':
        if (event.outcome === 'timed_out') this.out.note(`  … the wait for an event timed out`);
        break;
      case 'turn_completed':
        this.answerShown = this.midLine && event.result.status === 'completed';
        this.endLine();
        break;
      case 'turn_failed':
        this.endLine();
        break;
      default:
        break;
    }
  }

  /** Ends a line of streamed text, if one is open. */
  endLine(): void {
    if (this.midLine) this.out.text('\n');
    this.midLine = false;
  }
}

/** The line an event that only reports is shown as (on a line of its own), or undefined for the others. */
function lineOf(event: AgentEvent): string | undefined {
  switch (event.type) {
    case 'tool_call_started':
      return `  → ${toolCallSummary(event.name, event.arguments)}`;
    case 'tool_call_finished': {
      const result = event.result.length > RESULT_CHARS ? `${event.result.slice(0, RESULT_CHARS)}…` : event.result;
      return `  ${event.error ? '✗' : '←'} ${event.name}: ${result.replace(/\s+/g, ' ')}`;
    }
    case 'mcp_elicitation':
      return `  ? ${event.server} asks (${event.tool}): ${event.message}${event.url ? ` ${event.url}` : ''}`;
    case 'tool_progress':
      return `  … ${event.name}: ${event.progress}${event.total !== undefined ? `/${event.total}` : ''}${event.message ? ` ${event.message}` : ''}`;
    case 'tool_retried':
      return `  ! ${event.name} runs again (attempt ${event.attempt}): ${event.reason === 'worker lost' ? 'its worker was lost' : 'it failed'}; what it did may have happened before`;
    case 'approval_escalated':
      return `  ! approval of ${event.callId} escalated: no decision yet; decide by ${event.deadline}`;
    case 'wait_started':
      return event.kind === 'sleep'
        ? `  … sleeping until ${event.until}${event.reason ? ` (${event.reason})` : ''}`
        : `  … waiting for event "${event.name}" (until ${event.until} at the latest)`;
    case 'guardrail_tripped':
      return `  ✋ guardrail ${event.guardrail} refused the ${event.kind === 'tool' ? `tool call ${event.callId}` : event.kind === 'input' ? 'request' : 'answer'}: ${event.reason}`;
    case 'guardrail_intervened':
      return event.action === 'retry'
        ? `  ✋ guardrail ${event.guardrail} sent the answer back: ${event.reason}`
        : `  ✋ guardrail ${event.guardrail}: ${event.callId} needs approval: ${event.reason}`;
    case 'event_received':
      return `  ⚑ event "${event.name}" arrived`;
    default:
      return undefined;
  }
}
