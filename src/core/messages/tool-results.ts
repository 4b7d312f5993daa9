import type { ImageRef, Usage } from './chat-message';

/** What one tool call produced, as the tool-call activity (or the core, for rejected calls) reports it. */
export interface ToolOutcome {
  /** The text the LLM sees. */
  result: string;
  /** The tool's original return value (as JSON); absent for errors, `undefined` and strings (then `result` is the value). */
  value?: unknown;
  /**
   * `result` is `value` written as JSON (the tool returned an object, a number, ...): a client
   * that shows the call reads the value back from it (the AI SDK's tool parts give the value).
   */
  json?: true;
  error: boolean;
  /** Set by the workflow, never by tools: this outcome is an activity's result, so the history holds it. */
  recorded?: boolean;
  /** Set by the tool activity when it runs locally: a local activity's marker does not record its input, so its result names the call. */
  toolCallId?: string;
  /** An agent called as a tool: the tokens its run used (they count toward the caller's). */
  usage?: Usage;
  /** An agent called as a tool: its run's workflow id (a child workflow). */
  childWorkflowId?: string;
  /** Images the tool returned, stored in the blob store: they go to the model with `result`. */
  images?: ImageRef[];
  /** Set by the tool activity when the call took more than one attempt (see {@link ToolExecution.attempts}). */
  attempts?: number;
  /** Set with `attempts`: the attempts whose worker was lost. */
  workerLosses?: number;
  /**
   * The call changed the run's workspace: the state it committed (its manifest's reference) and
   * the paths that changed. Absent: the workspace is as it was.
   */
  workspace?: { ref: string; added: string[]; changed: string[]; removed: string[] };
  /**
   * The tool asked a person (`ToolContext.askPerson`) instead of finishing: the run asks, then
   * calls the tool again with the answer and this progress. `result` is empty.
   */
  asked?: {
    question?: string;
    /** The tool asked the run's model instead (`ToolContext.askModel`; an MCP server's sampling). */
    sample?: { messages: Array<{ role: 'user' | 'assistant'; content: string }>; system?: string; maxTokens?: number };
    /** The question is a form to fill (an MCP server's elicitation): announced as `mcp_elicitation`. */
    form?: { server: string; message: string; requestedSchema?: Record<string, unknown>; url?: string };
    progress?: unknown;
  };
}

/** A finished tool execution, as it appears in the run result. */
export interface ToolExecution {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  result: string;
  /** The original return value; absent for errors, `undefined` and strings (then `result` is the value). */
  value?: unknown;
  error: boolean;
  immediate: boolean;
  /** Set for tools that needed a human's approval: what the human decided. */
  approval?: 'approved' | 'rejected';
  /** The result is also recorded in the workflow history, as the result of the tool's activity. */
  resultInHistory?: boolean;
  /** An agent called as a tool: the workflow id of its run (a child workflow of this one). */
  childWorkflowId?: string;
  /** Images the tool returned, by reference (they went to the model with `result`). */
  images?: ImageRef[];
  /**
   * How many attempts the call took, when more than one: its side effects may have happened that
   * many times (the tool's own idempotency key is the same in each). Absent: one.
   */
  attempts?: number;
  /** Of those, attempts whose worker was lost (a crash, a kill, a cut connection) before they ended. */
  workerLosses?: number;
  /** The call changed the workspace: the state it committed and the paths it added, changed and removed. */
  workspace?: ToolOutcome['workspace'];
}

/**
 * A tool execution in a run's workflow result as the history records it: `result` and `value` are
 * left out when the history holds them already (`resultInHistory`), so a long run does not store
 * every tool output twice. `runOutcome` (and `restoreToolResults`) put them back.
 */
export type RecordedToolExecution = Omit<ToolExecution, 'result'> & { result?: string };

/**
 * Tool outputs of any size: the model sees a bounded view of a long output (its head and tail,
 * and a note with the full size), while the run keeps all of it for clients, and the built-in
 * `read_tool_output` tool lets the model page through the rest. Pure.
 */

/** The built-in tool that reads a long tool output page by page; it runs in the workflow, without an activity. */
export const READ_TOOL_OUTPUT = 'read_tool_output';

/** The most of one tool output the model sees unless a run says otherwise (about 32,000 characters). */
export const DEFAULT_MAX_TOOL_RESULT_TOKENS = 8_000;

/** The most of a tool output an event carries (`tool_call_finished`): a preview for people, not the output. */
export const EVENT_RESULT_TOKENS = 4_000;

/** Characters per token in the estimate used here (the usual rule of thumb for English text). */
const CHARS_PER_TOKEN = 4;

/** The description and JSON Schema the model is offered for {@link READ_TOOL_OUTPUT}. */
export const READ_TOOL_OUTPUT_SPEC = {
  description:
    'Reads part of an earlier tool output that was too long to show in full: give the call id the note names, the character offset to start at, and how many characters to read.',
  parameters: {
    type: 'object',
    properties: {
      call_id: { type: 'string', description: 'The id of the tool call whose output to read' },
      offset: { type: 'integer', minimum: 0, description: 'The character to start at (0: the beginning)' },
      length: { type: 'integer', minimum: 1, description: 'How many characters to read' },
    },
    required: ['call_id', 'offset', 'length'],
    additionalProperties: false,
  },
} as const;

/**
 * What the model reads of a tool output: all of it when it fits in `maxTokens`, else its head
 * and tail around a note that gives the full size and, when the run has `read_tool_output`, how
 * to read the part left out.
 */
export function toolResultView(result: string, maxTokens: number, callId: string, pageable: boolean): string {
  const room = maxTokens * CHARS_PER_TOKEN;
  if (result.length <= room) return result;
  const head = Math.floor(room * 0.7);
  const tail = Math.floor(room * 0.2);
  const omitted = result.length - head - tail;
  const how = pageable
    ? ` Call ${READ_TOOL_OUTPUT} with {"call_id": "${callId}", "offset": ${head}, "length": ${Math.min(room, omitted)}} to read what is left out.`
    : '';
  const note = `\n\n[... ${omitted.toLocaleString('en')} characters left out: the whole output is ${result.length.toLocaleString('en')} characters (${sizeText(result.length)}); shown are the first ${head.toLocaleString('en')} and the last ${tail.toLocaleString('en')}.${how}]\n\n`;
  return result.slice(0, head) + note + result.slice(result.length - tail);
}

/**
 * A `read_tool_output` call, answered from the run's own tool executions: the characters
 * `[offset, offset + length)` of that call's output (at most what a result may show), with where
 * the next page starts. Mistakes come back as errors the model can fix.
 */
export function readToolOutput(
  executions: readonly ToolExecution[],
  args: Record<string, unknown>,
  maxTokens: number,
): ToolOutcome {
  const { call_id: callId, offset, length } = args;
  if (typeof callId !== 'string' || !Number.isInteger(offset) || !Number.isInteger(length) || (length as number) < 1)
    return fail('give "call_id" (a string), "offset" (a whole number >= 0) and "length" (a whole number >= 1)');
  const execution = executions.find((e) => e.id === callId);
  if (!execution)
    return fail(
      `there is no output of call "${callId}" in this run: outputs can be read during the run (or conversation turn) that made them`,
    );
  const text = execution.result;
  const start = Math.max(0, offset as number);
  if (start >= text.length) return fail(`offset ${start} is past the end: the output is ${text.length} characters`);
  // A page fits in what a result may show, its header included, so it is never cut again.
  const end = Math.min(text.length, start + Math.min(length as number, maxTokens * CHARS_PER_TOKEN - 200));
  const rest = text.length - end;
  const next =
    rest > 0
      ? ` ${rest.toLocaleString('en')} characters follow; the next part starts at offset ${end}.`
      : ' This is the end.';
  return {
    result: `[characters ${start} to ${end} of ${text.length} of the output of ${callId}.${next}]\n${text.slice(start, end)}`,
    error: false,
  };
}

function fail(message: string): ToolOutcome {
  return { result: toolErrorText(`${READ_TOOL_OUTPUT}: ${message}`), error: true };
}

function sizeText(chars: number): string {
  return chars >= 1024 * 1024 ? `${(chars / 1024 / 1024).toFixed(1)} MB` : `${Math.round(chars / 1024)} KB`;
}

/**
 * The immediate-return rule (LangChain4j `ReturnBehavior.IMMEDIATE`): a run may end right after
 * its tools ran, without another LLM round trip, only when every call in that LLM reply was to an
 * immediate tool and none of them failed. Otherwise all results go back to the LLM as usual.
 */
export function shouldReturnImmediately(
  calls: ReadonlyArray<{ immediate: boolean }>,
  outcomes: ReadonlyArray<ToolOutcome>,
): boolean {
  return calls.length > 0 && calls.every((c) => c.immediate) && outcomes.every((o) => !o.error);
}

/**
 * The text an LLM sees for a tool's return value, as LangChain4j does it: `undefined` (a void tool)
 * becomes `"Success"`, a string goes as is, anything else as JSON.
 */
export function toolResultText(value: unknown): string {
  if (value === undefined) return 'Success';
  if (typeof value === 'string') return value;
  const json = JSON.stringify(value);
  // JSON.stringify returns undefined for functions and symbols; never hand the LLM "undefined".
  return json === undefined ? String(value) : json;
}

/** The text an LLM sees when a tool call could not produce a result. */
export function toolErrorText(message: string): string {
  return message.startsWith('Error:') ? message : `Error: ${message}`;
}
