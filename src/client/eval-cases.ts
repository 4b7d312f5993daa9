import { z } from 'zod';
import type { AgentInput, JsonSchemaObject } from '../core/state/run-options';
import type { ToolExecution } from '../core/messages/tool-results';

/**
 * Evals: a dataset of cases (JSON Lines), each run as a real agent run and scored against what it
 * expects. Reading a dataset and scoring an outcome are pure and live here; `run-eval.ts` runs them.
 */

/** What a case expects of the run's answer (every check given must hold). */
export interface EvalExpectation {
  /** The answer contains this text (case-insensitive). */
  contains?: string;
  /** The answer is this text (trimmed), or the structured output deep-equals this value. */
  equals?: unknown;
  /** The answer matches this regular expression (JavaScript syntax, e.g. `"^\\d+ EUR$"`). */
  regex?: string;
  /** The structured output (or the answer parsed as JSON) validates against this JSON Schema. */
  schema?: JsonSchemaObject;
  /**
   * These tools were called, in this order (others may come between): names, or
   * `{ name, arguments }` whose arguments must be among the call's.
   */
  toolCalls?: (string | { name: string; arguments?: Record<string, unknown> })[];
}

/** One line of a dataset. */
export interface EvalCase {
  /** The message, or a run's input (`{ message, agent?, ...run options }`). */
  input: string | AgentInput;
  expected?: EvalExpectation;
  /** Criteria for an LLM judge, e.g. "polite, and names the order's delivery date". */
  judge?: string;
  /** A name for the case in reports (default: its line number). */
  name?: string;
}

/** A case as read from its file, with where it came from. */
export interface NumberedCase extends EvalCase {
  /** The line of the dataset it was read from (1-based). */
  line: number;
}

const EXPECTATION_KEYS = ['contains', 'equals', 'regex', 'schema', 'toolCalls'];

/**
 * Reads a JSON Lines dataset: one case per non-empty line (`#` lines are comments). Every problem
 * is reported with its line number, all at once, before anything runs.
 */
export function parseDataset(text: string, source = 'the dataset'): NumberedCase[] {
  const cases: NumberedCase[] = [];
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = i + 1;
    if (!raw.trim() || raw.trim().startsWith('#')) return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      problems.push(`${source}:${line}: not JSON`);
      return;
    }
    const problem = caseProblem(value);
    if (problem) problems.push(`${source}:${line}: ${problem}`);
    else cases.push({ ...(value as EvalCase), line });
  });
  if (problems.length) throw new Error(problems.join('\n'));
  if (cases.length === 0) throw new Error(`${source} holds no cases (one JSON object per line: {"input": "..."})`);
  return cases;
}

function caseProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return 'a case is a JSON object {"input": "...", "expected"?: {...}, "judge"?: "..."}';
  const c = value as Record<string, unknown>;
  const input = c.input as Record<string, unknown> | string | undefined;
  if (typeof input === 'string' ? !input.trim() : typeof input?.message !== 'string' || !input.message.trim())
    return '"input" must be a message, or an object with a "message"';
  if (c.judge !== undefined && (typeof c.judge !== 'string' || !c.judge.trim()))
    return '"judge" must be the criteria, as text';
  if (c.expected === undefined) return c.judge === undefined ? 'give "expected", "judge", or both' : undefined;
  if (c.expected === null || typeof c.expected !== 'object') return '"expected" must be an object';
  const e = c.expected as Record<string, unknown>;
  const unknown = Object.keys(e).filter((k) => !EXPECTATION_KEYS.includes(k));
  if (unknown.length) return `"expected" may hold ${EXPECTATION_KEYS.join(', ')}; not ${unknown.join(', ')}`;
  if (Object.keys(e).length === 0) return '"expected" is empty';
  if (e.contains !== undefined && typeof e.contains !== 'string') return '"expected.contains" must be text';
  if (e.regex !== undefined) {
    if (typeof e.regex !== 'string') return '"expected.regex" must be a regular expression, as text';
    try {
      new RegExp(e.regex);
    } catch (err) {
      return `"expected.regex": ${(err as Error).message}`;
    }
  }
  if (e.schema !== undefined) {
    if (e.schema === null || typeof e.schema !== 'object' || Array.isArray(e.schema))
      return '"expected.schema" must be a JSON Schema object';
    // Compiled now, so a schema zod cannot read stops the eval before any run, not after them all.
    try {
      z.fromJSONSchema(e.schema as Parameters<typeof z.fromJSONSchema>[0]);
    } catch (err) {
      return `"expected.schema" cannot be used: ${(err as Error).message}`;
    }
  }
  const isCall = (t: unknown) =>
    typeof t === 'string' ||
    (t !== null &&
      typeof t === 'object' &&
      typeof (t as { name?: unknown }).name === 'string' &&
      ((t as { arguments?: unknown }).arguments === undefined || isObject((t as { arguments?: unknown }).arguments)));
  if (e.toolCalls !== undefined && (!Array.isArray(e.toolCalls) || !e.toolCalls.every(isCall)))
    return '"expected.toolCalls" must be a list of tool names or {"name", "arguments"?: {...}}';
  return undefined;
}

function isObject(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** What a run gave, as scoring reads it. */
export interface ScoredOutcome {
  status: string;
  content?: string | null;
  output?: unknown;
  toolExecutions: Pick<ToolExecution, 'name' | 'arguments'>[];
  error?: string;
}

/** Why a case failed, one reason per check that did not hold; empty when it passed. */
export function expectationFailures(expected: EvalExpectation | undefined, outcome: ScoredOutcome): string[] {
  const failures: string[] = [];
  if (outcome.status === 'failed') return [`the run failed: ${outcome.error ?? 'unknown error'}`];
  if (!expected) return failures;
  const content = outcome.content ?? '';
  const shown = JSON.stringify(content.length > 80 ? `${content.slice(0, 77)}...` : content);
  if (expected.contains !== undefined && !content.toLowerCase().includes(expected.contains.toLowerCase()))
    failures.push(`the answer ${shown} does not contain ${JSON.stringify(expected.contains)}`);
  if (expected.equals !== undefined) {
    const same =
      typeof expected.equals === 'string'
        ? content.trim() === expected.equals.trim()
        : outcome.output !== undefined && deepEqual(outcome.output, expected.equals);
    if (!same) failures.push(`the answer ${shown} is not ${JSON.stringify(expected.equals)}`);
  }
  if (expected.regex !== undefined && !new RegExp(expected.regex).test(content))
    failures.push(`the answer ${shown} does not match /${expected.regex}/`);
  if (expected.schema !== undefined) {
    const problem = schemaProblem(expected.schema, outcome);
    if (problem) failures.push(problem);
  }
  if (expected.toolCalls !== undefined) {
    const problem = toolCallsProblem(expected.toolCalls, outcome.toolExecutions);
    if (problem) failures.push(problem);
  }
  return failures;
}

function schemaProblem(schema: JsonSchemaObject, outcome: ScoredOutcome): string | undefined {
  let value = outcome.output;
  if (value === undefined) {
    try {
      value = JSON.parse(outcome.content ?? '');
    } catch {
      return 'the answer is not JSON, so it cannot match the schema';
    }
  }
  const result = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]).safeParse(value);
  return result.success
    ? undefined
    : `the output does not match the schema: ${result.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`).join('; ')}`;
}

function toolCallsProblem(wanted: NonNullable<EvalExpectation['toolCalls']>, calls: ScoredOutcome['toolExecutions']) {
  let from = 0;
  for (const want of wanted) {
    const name = typeof want === 'string' ? want : want.name;
    const args = typeof want === 'string' ? undefined : want.arguments;
    const at = calls.findIndex(
      (c, i) =>
        i >= from &&
        c.name === name &&
        (args === undefined || Object.entries(args).every(([k, v]) => deepEqual((c.arguments ?? {})[k], v))),
    );
    if (at === -1) {
      const made = calls.map((c) => c.name).join(', ') || 'none';
      return `expected a call of ${name}${args ? ` with ${JSON.stringify(args)}` : ''}${from > 0 ? ' after the ones before it' : ''}; the calls made: ${made}`;
    }
    from = at + 1;
  }
  return undefined;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  return (
    ka.length === kb.length &&
    ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}
