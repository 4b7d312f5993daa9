import { agentNameProblem } from '../state/agents';
import { priorityKeyProblem, tenantProblem } from '../fleet/tenants';
import { userProblem } from '../facts/memory-scope';
import { agentMemoryProblem } from '../facts/memory-options';
import { workspaceOptionsProblem } from '../workspace/workspace-options';
import { parseDuration } from '../time/duration';
import { imagesProblem } from '../messages/images';
import {
  budgetProblem,
  DEFAULT_MAX_ITERATIONS,
  MAX_WORKFLOW_ID_BYTES,
  MIN_CONTINUE_AS_NEW_AFTER,
} from '../state/limits';
import { DEFAULT_MAX_TOOL_RESULT_TOKENS } from '../messages/tool-results';
import { MIN_PROMPT_TOKENS } from '../context/compaction';
import { RUN_OPTION_FIELDS, type AgentInput, type ToolCallingMode } from '../state/run-options';
import { DELEGATED_BY_KEY, delegatedByOf } from '../policies/policies';
import type { RunLimits } from '../state/run-state';

/** The ways tools can reach a model. */
export const TOOL_CALLING_MODES: readonly ToolCallingMode[] = ['tools', 'functions', 'react'];

/** Longest user message a run accepts; a guard against pasting a file into the event history by mistake. */
export const MAX_MESSAGE_CHARS = 100_000;

/** How long one model call may take, all retries together, unless a run says otherwise. */
export const DEFAULT_MODEL_CALL_TIMEOUT = '5m';
/** {@link DEFAULT_MODEL_CALL_TIMEOUT} in milliseconds. */
export const DEFAULT_MODEL_CALL_TIMEOUT_MS = 5 * 60_000;

/**
 * Checks an {@link AgentInput} and returns one readable line per problem (empty when valid).
 * Clients call it before starting a workflow; the workflow calls it again because not every
 * caller is our client.
 */
export function validateAgentInput(input: unknown, checks: InputChecks = {}): string[] {
  if (input === null || typeof input !== 'object') return ['the input must be an object with a "message"'];
  const i = input as Record<string, unknown>;
  const message = messageProblem(i.message);
  const images = imagesProblem(i.images);
  const rerun = rerunProblem(i.rerun);
  return [
    ...(message ? [message] : []),
    ...(images ? [images] : []),
    ...(rerun ? [rerun] : []),
    ...(i.continueAsNewAfter !== undefined &&
    !(Number.isInteger(i.continueAsNewAfter) && (i.continueAsNewAfter as number) >= MIN_CONTINUE_AS_NEW_AFTER)
      ? [
          `"continueAsNewAfter" must be a whole number >= ${MIN_CONTINUE_AS_NEW_AFTER} (history events), got ${JSON.stringify(i.continueAsNewAfter)}`,
        ]
      : []),
    ...runOptionProblems(i, checks),
  ];
}

/** Why `rerun` is not a re-run's seed, or undefined. */
function rerunProblem(rerun: unknown): string | undefined {
  if (rerun === undefined) return undefined;
  const r = rerun as Record<string, unknown> | null;
  if (r === null || typeof r !== 'object') return '"rerun" must be an object';
  if (typeof r.of !== 'string' || !Number.isInteger(r.fromStep) || (r.fromStep as number) < 1)
    return '"rerun" needs "of" (the recorded run) and "fromStep" (a model call, from 1)';
  if (
    !Array.isArray(r.messages) ||
    r.messages.length === 0 ||
    !r.messages.every((m) => m && typeof m === 'object' && typeof (m as { role?: unknown }).role === 'string')
  )
    return '"rerun.messages" must be the recorded messages (at least the user message)';
  if (r.toolCalls !== undefined && !Array.isArray(r.toolCalls)) return '"rerun.toolCalls" must be a list';
  return undefined;
}

/** What is wrong with a user message, or undefined when it is fine. */
export function messageProblem(message: unknown): string | undefined {
  if (typeof message !== 'string' || message.trim() === '') return '"message" must be a non-empty string';
  if (message.length > MAX_MESSAGE_CHARS) return `"message" is longer than ${MAX_MESSAGE_CHARS} characters`;
  return undefined;
}

/**
 * How a run's input or a conversation's options are checked. `asStarted`: only the checks its
 * workflow made when it started (the workflow itself checks so). Checks added since are made
 * where input comes in (client, HTTP, CLI) but not in the workflow, so the histories of runs that
 * started before them replay the same.
 */
export interface InputChecks {
  asStarted?: boolean;
}

/** Problems with the options a run and a conversation share (everything but the message). */
export function runOptionProblems(i: Record<string, unknown>, checks: InputChecks = {}): string[] {
  const problems: string[] = [];
  if (!checks.asStarted) problems.push(...laterOptionProblems(i));
  const agent = agentNameProblem(i.agent);
  if (agent) problems.push(agent);
  const tenant = tenantProblem(i.tenant);
  if (tenant) problems.push(tenant);
  const user = userProblem(i.user);
  if (user) problems.push(user);
  const memory = agentMemoryProblem(i.memory);
  if (memory) problems.push(memory);
  const workspace = workspaceOptionsProblem(i.workspace);
  if (workspace) problems.push(workspace);
  const priority = priorityKeyProblem(i.priority);
  if (priority) problems.push(priority);
  const budget = budgetProblem(i.budget);
  if (budget) problems.push(budget);
  if (
    i.maxToolResultTokens !== undefined &&
    !(Number.isInteger(i.maxToolResultTokens) && (i.maxToolResultTokens as number) >= 100)
  )
    problems.push(`"maxToolResultTokens" must be a whole number >= 100, got ${JSON.stringify(i.maxToolResultTokens)}`);
  if (
    i.maxPromptTokens !== undefined &&
    !(Number.isInteger(i.maxPromptTokens) && (i.maxPromptTokens as number) >= MIN_PROMPT_TOKENS)
  )
    problems.push(
      `"maxPromptTokens" must be a whole number >= ${MIN_PROMPT_TOKENS}, got ${JSON.stringify(i.maxPromptTokens)}`,
    );
  if (i.summaryModel !== undefined && (typeof i.summaryModel !== 'string' || !i.summaryModel.trim()))
    problems.push('"summaryModel" must be a model name');
  if (i.onBudget !== undefined && i.onBudget !== 'stop' && i.onBudget !== 'wrap_up')
    problems.push(`"onBudget" must be "stop" or "wrap_up", got ${JSON.stringify(i.onBudget)}`);
  if (i.system !== undefined && typeof i.system !== 'string') problems.push('"system" must be a string');
  if (i.output !== undefined && (i.output === null || typeof i.output !== 'object' || Array.isArray(i.output)))
    problems.push('"output" must be a JSON Schema object');
  for (const key of ['tools', 'immediateTools', 'approvalTools'] as const) {
    const v = i[key];
    if (v !== undefined && !isToolList(v)) problems.push(`"${key}" must be an array of tool names`);
  }
  for (const key of ['inputGuardrails', 'outputGuardrails', 'toolGuardrails'] as const) {
    const v = i[key];
    if (v !== undefined && !isToolList(v)) problems.push(`"${key}" must be an array of guardrail names`);
  }
  if (i.maxIterations !== undefined && !(Number.isInteger(i.maxIterations) && (i.maxIterations as number) >= 1)) {
    problems.push(`"maxIterations" must be an integer >= 1, got ${JSON.stringify(i.maxIterations)}`);
  }
  if (i.onApprovalTimeout !== undefined && !['reject', 'approve', 'escalate'].includes(i.onApprovalTimeout as string))
    problems.push(
      `"onApprovalTimeout" must be "reject", "approve" or "escalate", got ${JSON.stringify(i.onApprovalTimeout)}`,
    );
  if (i.waitsCountTowardTimeLimit !== undefined && typeof i.waitsCountTowardTimeLimit !== 'boolean')
    problems.push(
      `"waitsCountTowardTimeLimit" must be true or false, got ${JSON.stringify(i.waitsCountTowardTimeLimit)}`,
    );
  for (const key of ['maxExecutionTime', 'approvalTimeout', 'modelCallTimeout', 'maxWait'] as const) {
    const problem = durationProblem(key, i[key]);
    if (problem) problems.push(problem);
  }
  if (i.onLimit !== undefined && i.onLimit !== 'stop' && i.onLimit !== 'generate') {
    problems.push(`"onLimit" must be "stop" or "generate", got ${JSON.stringify(i.onLimit)}`);
  }
  if (i.stream !== undefined && typeof i.stream !== 'boolean')
    problems.push(`"stream" must be true or false, got ${JSON.stringify(i.stream)}`);
  if (i.toolCalling !== undefined && !TOOL_CALLING_MODES.includes(i.toolCalling as ToolCallingMode)) {
    problems.push(
      `"toolCalling" must be one of ${TOOL_CALLING_MODES.join(', ')}, got ${JSON.stringify(i.toolCalling)}`,
    );
  }
  return problems;
}

/** The checks of {@link runOptionProblems} that workflows do not make (see {@link InputChecks}). */
function laterOptionProblems(i: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const settings = modelSettingsProblem(i.modelSettings);
  if (settings) problems.push(settings);
  if (i.delegatedBy !== undefined && !delegatedByOf({ [DELEGATED_BY_KEY]: i.delegatedBy }))
    problems.push(
      '"delegatedBy" must list 1 to 16 agents it works for, each {"agent": "...", "tenant"?: "...", "user"?: "..."}',
    );
  return problems;
}

/**
 * What is wrong with `modelSettings`, or undefined when it is fine. Checked before a run starts:
 * a model that is not a name would otherwise fail the workflow's tasks (its search attribute).
 */
export function modelSettingsProblem(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    return '"modelSettings" must be an object: {"model"?, "temperature"?, "maxTokens"?, "thinking"?, "reasoningEffort"?, "fallbackModels"?}';
  const m = v as Record<string, unknown>;
  const name = (x: unknown) => typeof x === 'string' && x.trim() !== '' && x.length <= 256;
  if (m.model !== undefined && !name(m.model))
    return `"modelSettings.model" must be a model name ("openai:gpt-5.4-mini"), got ${JSON.stringify(m.model)}`;
  if (m.temperature !== undefined && !(typeof m.temperature === 'number' && m.temperature >= 0 && m.temperature <= 2))
    return `"modelSettings.temperature" must be a number from 0 to 2, got ${JSON.stringify(m.temperature)}`;
  if (m.maxTokens !== undefined && !(Number.isInteger(m.maxTokens) && (m.maxTokens as number) >= 1))
    return `"modelSettings.maxTokens" must be a whole number >= 1, got ${JSON.stringify(m.maxTokens)}`;
  const budget = (m.thinking as { budgetTokens?: unknown } | null | undefined)?.budgetTokens;
  if (m.thinking !== undefined && !(Number.isInteger(budget) && (budget as number) >= 1024))
    return `"modelSettings.thinking" must be {"budgetTokens": a whole number >= 1024}, got ${JSON.stringify(m.thinking)}`;
  if (m.reasoningEffort !== undefined && !REASONING_EFFORTS.includes(m.reasoningEffort as string))
    return `"modelSettings.reasoningEffort" must be one of ${REASONING_EFFORTS.join(', ')}, got ${JSON.stringify(m.reasoningEffort)}`;
  if (m.fallbackModels !== undefined && !(Array.isArray(m.fallbackModels) && m.fallbackModels.every(name)))
    return '"modelSettings.fallbackModels" must be a list of model names';
  return undefined;
}

const REASONING_EFFORTS = ['minimal', 'low', 'medium', 'high'];

/** Every field of {@link AgentInput}, checked against the type: a request's others are refused. */
const AGENT_INPUT_FIELDS = {
  message: true,
  images: true,
  agent: true,
  system: true,
  tools: true,
  immediateTools: true,
  approvalTools: true,
  modelSettings: true,
  stream: true,
  output: true,
  rerun: true,
  continueAsNewAfter: true,
  tenant: true,
  user: true,
  delegatedBy: true,
  ...RUN_OPTION_FIELDS,
} satisfies Record<keyof AgentInput, true>;

/** The fields a run's input takes (see {@link unknownFieldProblem}). */
export const AGENT_INPUT_FIELD_NAMES: readonly string[] = Object.keys(AGENT_INPUT_FIELDS);

/**
 * A field of `body` that is none of `known`, named with the one it was likely meant to be (a
 * misspelt `maxIteration` would otherwise be dropped, and the run go on with the default), or
 * undefined when every field is known.
 */
export function unknownFieldProblem(body: Record<string, unknown>, known: readonly string[]): string | undefined {
  const unknown = Object.keys(body).find((k) => !known.includes(k));
  if (unknown === undefined) return undefined;
  const near = known.find((k) => k.toLowerCase() === unknown.toLowerCase() || editDistance(k, unknown) <= 2);
  return `unknown field "${unknown}"${near ? ` (did you mean "${near}"?)` : ''}; the fields are ${known.join(', ')}`;
}

/** Levenshtein distance, for {@link unknownFieldProblem}'s suggestion (names are short). */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length];
}

/** What is wrong with a run or conversation id, or undefined when Temporal will take it. */
export function workflowIdProblem(id: string, what = 'the id'): string | undefined {
  if (!id.trim()) return `${what} must not be empty`;
  // An id is shown in terminals, logs and the Web UI: a newline, NUL or bidi override in it would
  // let it pass for another, or break the line it is printed on.
  if (UNPRINTABLE.test(id)) return `${what} must not contain control, bidirectional-override or invisible characters`;
  // TextEncoder, not Buffer: this module is imported by workflow code too.
  const bytes = new TextEncoder().encode(id).length;
  if (bytes > MAX_WORKFLOW_ID_BYTES)
    return `${what} is ${bytes} bytes long; Temporal accepts at most ${MAX_WORKFLOW_ID_BYTES}`;
  return undefined;
}

/** C0 and C1 controls, DEL, zero-width and bidirectional formatting characters, line separators, BOM. */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;

/** Whether `v` is a list of tool names. */
export function isToolList(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((n) => typeof n === 'string' && n !== '');
}

/** What is wrong with an optional duration option, or undefined. */
export function durationProblem(key: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  try {
    parseDuration(value as string | number);
    return undefined;
  } catch (err) {
    return `"${key}": ${(err as Error).message}`;
  }
}

/** Applies defaults to a validated input's limits. */
export function runLimits(input: Omit<AgentInput, 'message'>): RunLimits {
  const limits: RunLimits = {
    maxIterations: input.maxIterations ?? DEFAULT_MAX_ITERATIONS,
    maxExecutionTimeMs: input.maxExecutionTime === undefined ? undefined : parseDuration(input.maxExecutionTime),
    onLimit: input.onLimit ?? 'stop',
  };
  // Only when set, so run states recorded before approvals existed compare equal.
  if (input.approvalTimeout !== undefined) limits.approvalTimeoutMs = parseDuration(input.approvalTimeout);
  if (input.onApprovalTimeout !== undefined && input.onApprovalTimeout !== 'reject')
    limits.onApprovalTimeout = input.onApprovalTimeout;
  if (input.maxWait !== undefined) limits.maxWaitMs = parseDuration(input.maxWait);
  if (input.waitsCountTowardTimeLimit) limits.waitsCountTowardTimeLimit = true;
  if (input.modelCallTimeout !== undefined) limits.modelCallTimeoutMs = parseDuration(input.modelCallTimeout);
  if (input.budget !== undefined) limits.budget = input.budget;
  if (input.onBudget !== undefined) limits.onBudget = input.onBudget;
  if (input.maxToolResultTokens !== undefined) limits.maxToolResultTokens = input.maxToolResultTokens;
  if (input.maxPromptTokens !== undefined) limits.maxPromptTokens = input.maxPromptTokens;
  if (input.summaryModel !== undefined) limits.summaryModel = input.summaryModel;
  return limits;
}

/**
 * The most of one tool output the model sees, in tokens: the run's choice, else the default, but
 * never more than a quarter of `maxPromptTokens`, so one output cannot fill a request by itself.
 */
export function maxToolResultTokens(limits: RunLimits): number {
  if (limits.maxToolResultTokens !== undefined) return limits.maxToolResultTokens;
  const quarter = limits.maxPromptTokens === undefined ? Infinity : Math.floor(limits.maxPromptTokens / 4);
  return Math.min(DEFAULT_MAX_TOOL_RESULT_TOKENS, quarter);
}

/** The bound on one model call with all its retries, in ms. */
export function modelCallTimeoutMs(limits: RunLimits): number {
  return limits.modelCallTimeoutMs ?? DEFAULT_MODEL_CALL_TIMEOUT_MS;
}
