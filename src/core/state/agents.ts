import { RUN_OPTION_FIELDS, type AgentInput, type ModelSettings, type RunOptions } from './run-options';
import type { ToolInfo } from '../messages/tool-info';

/**
 * Named agents. An agent is declared on the worker (`defineAgent`); a run or conversation names
 * it. At its start the run resolves the agent once, in an activity whose answer is recorded, so
 * replays never ask the worker again and the instructions are written to history once, not at
 * every step.
 */

/** What an agent sets for a run, as resolved from the worker's declaration. Plain JSON. */
export interface AgentSettings extends RunOptions {
  name: string;
  /** The system message. */
  instructions?: string;
  modelSettings?: ModelSettings;
}

/** The run options whose lists add up: a run can add guardrails to its agent's, never drop one. */
const ADDED_UP = ['inputGuardrails', 'outputGuardrails', 'toolGuardrails'] as const;
const RUN_OPTION_KEYS = Object.keys(RUN_OPTION_FIELDS) as (keyof RunOptions)[];

/** The resolve-agent activity's answer: the agent's settings and the run's tools. */
export interface ResolvedAgent {
  settings: AgentSettings;
  tools: ToolInfo[];
  /** The agent's version as this worker defines it (see `agentVersion`), once the worker resolved it. */
  version?: string;
}

/** The run or conversation options with an agent's settings under them: every field set in `input` wins. */
export function applyAgent<T extends Omit<AgentInput, 'message'>>(input: T, agent: AgentSettings): T {
  const merged: T = { ...input };
  const fill = <K extends keyof AgentSettings & keyof T>(key: K) => {
    if (merged[key] === undefined && agent[key] !== undefined) (merged as Record<string, unknown>)[key] = agent[key];
  };
  if (merged.system === undefined && agent.instructions !== undefined) merged.system = agent.instructions;
  for (const key of RUN_OPTION_KEYS) fill(key);
  for (const key of ADDED_UP)
    if (input[key] !== undefined && agent[key] !== undefined)
      (merged as Record<string, unknown>)[key] = [...new Set([...agent[key]!, ...input[key]!])];
  if (agent.modelSettings) merged.modelSettings = { ...agent.modelSettings, ...input.modelSettings };
  return merged;
}

/** Checks an agent name as runs and conversations give it. */
export function agentNameProblem(name: unknown): string | undefined {
  if (name === undefined) return undefined;
  if (typeof name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(name))
    return `"agent" must be an agent name (letters, digits, _ and -, at most 64), got ${JSON.stringify(name)}`;
  return undefined;
}
