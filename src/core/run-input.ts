import { parseDuration } from './duration';
import { DEFAULT_MAX_ITERATIONS } from './stop-conditions';
import type { AgentInput, OnLimit } from './types';

/** Longest user message a run accepts; a guard against pasting a file into the event history by mistake. */
export const MAX_MESSAGE_CHARS = 100_000;

/** The run limits after defaults are applied. */
export interface RunLimits {
  maxIterations: number;
  maxExecutionTimeMs?: number;
  onLimit: OnLimit;
}

/**
 * Checks an {@link AgentInput} and returns one readable line per problem (empty when valid).
 * Clients call it before starting a workflow; the workflow calls it again because not every
 * caller is our client.
 */
export function validateAgentInput(input: unknown): string[] {
  if (input === null || typeof input !== 'object') return ['the input must be an object with a "message"'];
  const i = input as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof i.message !== 'string' || i.message.trim() === '') problems.push('"message" must be a non-empty string');
  else if (i.message.length > MAX_MESSAGE_CHARS) problems.push(`"message" is longer than ${MAX_MESSAGE_CHARS} characters`);
  if (i.system !== undefined && typeof i.system !== 'string') problems.push('"system" must be a string');
  for (const key of ['tools', 'immediateTools'] as const) {
    const v = i[key];
    if (v !== undefined && !(Array.isArray(v) && v.every((n) => typeof n === 'string' && n !== ''))) {
      problems.push(`"${key}" must be an array of tool names`);
    }
  }
  if (i.maxIterations !== undefined && !(Number.isInteger(i.maxIterations) && (i.maxIterations as number) >= 1)) {
    problems.push(`"maxIterations" must be an integer >= 1, got ${JSON.stringify(i.maxIterations)}`);
  }
  if (i.maxExecutionTime !== undefined) {
    try {
      parseDuration(i.maxExecutionTime as string | number);
    } catch (err) {
      problems.push(`"maxExecutionTime": ${(err as Error).message}`);
    }
  }
  if (i.onLimit !== undefined && i.onLimit !== 'stop' && i.onLimit !== 'generate') {
    problems.push(`"onLimit" must be "stop" or "generate", got ${JSON.stringify(i.onLimit)}`);
  }
  return problems;
}

/** Applies defaults to a validated input's limits. */
export function runLimits(input: AgentInput): RunLimits {
  return {
    maxIterations: input.maxIterations ?? DEFAULT_MAX_ITERATIONS,
    maxExecutionTimeMs: input.maxExecutionTime === undefined ? undefined : parseDuration(input.maxExecutionTime),
    onLimit: input.onLimit ?? 'stop',
  };
}
