/**
 * The plain types of guardrails (see `guardrails.ts`, which decides what verdicts do). Apart, with
 * no imports, so the run state and the result types can name them without an import circle.
 */

/** Where a guardrail applies. */
export type GuardrailKind = 'input' | 'output' | 'tool';

/** What a guardrail decided. */
export type GuardrailVerdict =
  | { action: 'allow' }
  | { action: 'refuse'; reason: string }
  | { action: 'retry'; reason: string }
  | { action: 'approve'; reason: string };

/** The guardrails a run applies, by name (resolved from its agent and its input). */
export interface RunGuardrails {
  input?: string[];
  output?: string[];
  tool?: string[];
}

/** One guardrail's verdict on one thing (a tool call: `callId`). */
export interface GuardrailCheck {
  guardrail: string;
  kind: GuardrailKind;
  callId?: string;
  verdict: GuardrailVerdict;
}

/** Why a run ended at a guardrail. */
export interface GuardrailTrip {
  guardrail: string;
  kind: GuardrailKind;
  reason: string;
  /** The tool call it refused (tool guardrails). */
  callId?: string;
}

/** The step that checks guardrails, for the workflow to carry out (see `nextGuardrailStep`). */
export type GuardrailStep = {
  type: 'check_guardrails';
  kind: GuardrailKind;
  names: string[];
} & (
  | { kind: 'input' | 'output'; messageIndex: number }
  | { kind: 'tool'; calls: { id: string; name: string; arguments: Record<string, unknown> }[] }
);
