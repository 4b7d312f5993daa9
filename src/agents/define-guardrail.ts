import type { GuardrailKind, GuardrailVerdict } from '../core/state/guardrail-types';

/** What a guardrail function is given. */
export interface GuardrailInput {
  kind: GuardrailKind;
  /** Input guardrails: the user's message; output guardrails: the final answer's text. */
  text?: string;
  /** Output guardrails of runs with structured output: the answer, parsed. */
  output?: unknown;
  /** Tool guardrails: the call to check. */
  toolCall?: { id: string; name: string; arguments: Record<string, unknown> };
  /** The run's workflow id and its agent (if it has one). */
  workflowId: string;
  agent?: string;
}

/**
 * What a guardrail function may return: a verdict, or shorthand: `true` or nothing (allow), `false`
 * (refuse), a string (refuse, with that reason).
 */
export type GuardrailResult = GuardrailVerdict | boolean | string | undefined | void;

/** A guardrail: a function run in an activity, or an agent that answers `{ allow, reason }`. */
export type GuardrailDefinition = {
  /** Unique among the worker's guardrails; runs name it (`inputGuardrails: ['no-pii']`). */
  name: string;
  description?: string;
} & (
  | { check: (input: GuardrailInput) => GuardrailResult | Promise<GuardrailResult>; agent?: undefined }
  | {
      /**
       * An agent of the worker that judges: it gets the text (or tool call) and what to check, and
       * answers under the schema `{ allow: boolean, reason: string, action?: ... }` (structured
       * output). Its run is an ordinary agent run, listed in the Temporal UI.
       */
      agent: string;
      /** What the agent should check, e.g. "the answer must not promise refunds". */
      instructions?: string;
      check?: undefined;
    }
);

/**
 * Declares a guardrail. Give it to agents (`inputGuardrails`, `outputGuardrails`,
 * `toolGuardrails`) or to the plugin's `guardrails`, so runs can name it.
 *
 * ```ts
 * const noSecrets = defineGuardrail({
 *   name: 'no-secrets',
 *   check: ({ text }) => (/api[_-]?key/i.test(text ?? '') ? 'it mentions an API key' : true),
 * });
 * ```
 */
export function defineGuardrail(definition: GuardrailDefinition): GuardrailDefinition {
  if (!definition || typeof definition.name !== 'string' || !/^[A-Za-z0-9_.:-]{1,64}$/.test(definition.name))
    throw new Error(
      `defineGuardrail: "name" must be letters, digits, _ . : or - (at most 64), got ${JSON.stringify(definition?.name)}`,
    );
  if ((typeof definition.check === 'function') === (typeof definition.agent === 'string'))
    throw new Error(
      `defineGuardrail "${definition.name}": give exactly one of "check" (a function) and "agent" (an agent's name)`,
    );
  return definition;
}

/** A guardrail as agents name it: its definition, or the name of one registered with the plugin. */
export type GuardrailRef = GuardrailDefinition | string;

/** The name of a guardrail reference. */
export function guardrailRefName(ref: GuardrailRef): string {
  return typeof ref === 'string' ? ref : ref.name;
}

/** The worker's guardrails, by name; a second one of the same name is an error, never an override. */
export class GuardrailRegistry {
  private readonly byName = new Map<string, GuardrailDefinition>();

  constructor(guardrails: Iterable<GuardrailDefinition> = []) {
    for (const g of guardrails) this.register(g);
  }

  /** Adds a guardrail; the same definition twice is a no-op. */
  register(guardrail: GuardrailDefinition): this {
    const existing = this.byName.get(guardrail.name);
    if (existing && existing !== guardrail)
      throw new Error(`a guardrail named "${guardrail.name}" is already registered; guardrail names must be unique`);
    this.byName.set(guardrail.name, guardrail);
    return this;
  }

  get(name: string): GuardrailDefinition | undefined {
    return this.byName.get(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }
}

/** A function's result as a verdict. */
export function toVerdict(result: GuardrailResult): GuardrailVerdict {
  if (result === undefined || result === true) return { action: 'allow' };
  if (result === false) return { action: 'refuse', reason: 'refused' };
  if (typeof result === 'string') return { action: 'refuse', reason: result };
  if (result && typeof result === 'object' && typeof (result as GuardrailVerdict).action === 'string') {
    const v = result as GuardrailVerdict;
    if (v.action === 'allow') return { action: 'allow' };
    return {
      action: v.action,
      reason: typeof v.reason === 'string' && v.reason ? v.reason : v.action,
    } as GuardrailVerdict;
  }
  return { action: 'refuse', reason: `the guardrail returned ${JSON.stringify(result)}, not a verdict` };
}
