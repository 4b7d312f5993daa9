import { toolErrorText } from '../messages/tool-results';
import type { PlannedToolCall, RunState } from '../state/run-state';
import type {
  GuardrailCheck,
  GuardrailKind,
  GuardrailStep,
  GuardrailTrip,
  GuardrailVerdict,
} from '../state/guardrail-types';

export type * from '../state/guardrail-types';
import type { ChatMessage } from '../messages/chat-message';

/**
 * Guardrails: checks of a run's input (before the first model call), of its final answer, and of
 * each tool call's arguments (before it runs). Each is a function or an agent on the worker, run
 * by the `checkGuardrails` activity; what its verdict does to the run is decided here, purely.
 *
 * - `refuse` is a tripwire: the run ends with status `guardrail_tripped` and the reason.
 * - `retry` (output guardrails) sends the answer back to the model with the reason, as invalid
 *   structured output is sent back; it costs an iteration like any model call.
 * - `approve` (tool guardrails) makes the call wait for a person's approval.
 */

/** The verdicts a guardrail of each kind may give. */
export const GUARDRAIL_ACTIONS: Readonly<Record<GuardrailKind, readonly GuardrailVerdict['action'][]>> = {
  input: ['allow', 'refuse'],
  output: ['allow', 'refuse', 'retry'],
  tool: ['allow', 'refuse', 'approve'],
};

/**
 * The guardrail check the run needs before it goes on, or undefined: its input before the first
 * model call, a final answer before the run ends with it, tool calls before they run.
 */
export function nextGuardrailStep(state: RunState): GuardrailStep | undefined {
  const g = state.guardrails;
  if (!g) return undefined;
  const { phase } = state;
  if (g.input?.length && !state.guarded?.input && phase.kind === 'model') {
    const messageIndex = lastIndexOf(state.messages, 'user');
    if (messageIndex >= 0) return { type: 'check_guardrails', kind: 'input', names: g.input, messageIndex };
  }
  if (g.output?.length && phase.kind === 'answered')
    return {
      type: 'check_guardrails',
      kind: 'output',
      names: g.output,
      messageIndex: lastIndexOf(state.messages, 'assistant'),
    };
  if (g.tool?.length && phase.kind === 'tools' && !phase.guarded) {
    const calls = phase.calls
      .filter((c) => c.tool && !c.tool.builtin)
      .map((c) => ({ id: c.call.id, name: c.call.function.name, arguments: c.arguments }));
    if (calls.length) return { type: 'check_guardrails', kind: 'tool', names: g.tool, calls };
  }
  return undefined;
}

/** Folds the verdicts of a guardrail step into the run. A verdict its kind cannot give counts as `refuse`. */
export function applyGuardrailChecks(
  state: RunState,
  step: GuardrailStep,
  checks: readonly GuardrailCheck[],
): RunState {
  const valid = checks.map((c) =>
    GUARDRAIL_ACTIONS[step.kind].includes(c.verdict.action)
      ? c
      : {
          ...c,
          verdict: {
            action: 'refuse' as const,
            reason: `it answered "${c.verdict.action}", which a guardrail of ${step.kind}s cannot`,
          },
        },
  );
  const refused = valid.find((c) => c.verdict.action === 'refuse');
  if (refused) return tripped(state, step, refused);
  if (step.kind === 'input') return { ...state, guarded: { ...state.guarded, input: true } };
  if (step.kind === 'output') {
    if (state.phase.kind !== 'answered') return state;
    const retries = valid.filter((c) => c.verdict.action === 'retry');
    if (retries.length) {
      const why = retries.map((c) => `${c.guardrail}: ${(c.verdict as { reason: string }).reason}`).join('; ');
      return {
        ...state,
        messages: [...state.messages, { role: 'user', content: answerCorrection(why) }],
        phase: { kind: 'model' },
      };
    }
    const { content, output } = state.phase;
    return {
      ...state,
      phase: { kind: 'done', status: 'completed', content },
      ...(output !== undefined ? { output } : {}),
    };
  }
  if (state.phase.kind !== 'tools') return state;
  const approvals = new Set(valid.filter((c) => c.verdict.action === 'approve').map((c) => c.callId));
  const calls = state.phase.calls.map((c): PlannedToolCall =>
    approvals.has(c.call.id) && !c.approval ? { ...c, approval: { status: 'pending' } } : c,
  );
  return { ...state, phase: { ...state.phase, calls, guarded: true } };
}

/** The user message that sends an answer a guardrail did not accept back to the model. */
export function answerCorrection(why: string): string {
  return `Your answer was not accepted (${why}). Write the answer again, taking this into account.`;
}

/** What the run's result says when a guardrail refused (its `content`). */
export function tripText(trip: GuardrailTrip): string {
  const what = trip.kind === 'input' ? 'the request' : trip.kind === 'output' ? 'the answer' : 'a tool call';
  return `The guardrail "${trip.guardrail}" refused ${what}: ${trip.reason}`;
}

function tripped(state: RunState, step: GuardrailStep, check: GuardrailCheck): RunState {
  const trip: GuardrailTrip = {
    guardrail: check.guardrail,
    kind: step.kind,
    reason: (check.verdict as { reason: string }).reason,
    ...(check.callId ? { callId: check.callId } : {}),
  };
  // Tool calls the run will not make still get results: a conversation goes on after this, and
  // the model API rejects tool calls without results.
  const pending = state.phase.kind === 'tools' ? state.phase.calls : [];
  const toolMessages = pending.map((c): ChatMessage => ({
    role: 'tool',
    tool_call_id: c.call.id,
    content: toolErrorText(
      `not run: the guardrail "${trip.guardrail}" refused ${c.call.id === trip.callId ? 'this call' : 'a call of this step'}`,
    ),
  }));
  return {
    ...state,
    messages: [...state.messages, ...toolMessages],
    phase: { kind: 'done', status: 'guardrail_tripped', content: tripText(trip) },
    tripped: trip,
  };
}

function lastIndexOf(messages: readonly ChatMessage[], role: ChatMessage['role']): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === role) return i;
  return -1;
}
