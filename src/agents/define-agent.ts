import type { z } from 'zod';
import type { GuardrailRef } from './define-guardrail';
import { agentNameProblem } from '../core/state/agents';
import { budgetProblem } from '../core/state/limits';
import { parseDuration } from '../core/time/duration';
import { priorityKeyProblem } from '../core/fleet/tenants';
import { agentMemoryProblem, type AgentMemory } from '../core/facts/memory-options';
import { workspaceOptionsProblem } from '../core/workspace/workspace-options';
import { TOOL_CALLING_MODES } from '../core/run/run-input';
import type { RunOptions } from '../core/state/run-options';
import type { AnyToolDefinition } from '../tools/define-tool';

/** A tool as an agent names it: its definition (registered with the agent) or a registered tool's name. */
export type ToolRef = AnyToolDefinition | string;

/** Another agent as an agent names it: its definition (registered with the agent) or a registered agent's name. */
export type AgentRef = AgentDefinition<any> | string;

/**
 * A named agent: instructions, tools, model and limits, declared in the worker like tools are.
 * Runs and conversations pick it by name (`agent: "support"`); whatever they set themselves
 * overrides the agent's settings, except approval tools, which add up.
 */
export interface AgentDefinition<O = unknown> extends Omit<
  RunOptions,
  'inputGuardrails' | 'outputGuardrails' | 'toolGuardrails' | 'memory'
> {
  /**
   * Memory across conversations for the run's `user` (see `AgentMemory`): `recall` at the start
   * of each turn, `extract` at its end, and `profile`, a zod object: the user's profile (working
   * memory) that extraction keeps up to date and recall shows.
   */
  memory?: Omit<AgentMemory, 'profile'> & { profile?: z.ZodObject };
  /** Letters, digits, `_` and `-`, at most 64 characters. */
  name: string;
  /** What the agent is for; `durable-agents agents` and `GET /agents` list it. */
  description?: string;
  /** A few questions to try (at most 10), which the chat page offers on an empty conversation and `GET /agents` lists. */
  examples?: readonly string[];
  /** The system message of every run of this agent. */
  instructions: string;
  /** The tools the agent may call. Definitions given here are registered on the worker with the agent. */
  tools: readonly ToolRef[];
  /**
   * The model, with its provider as a prefix: `anthropic:claude-sonnet-5`, `openai-responses:gpt-5.4`,
   * or a plain name for the worker's OpenAI-compatible endpoint, or a named model of the worker;
   * default: the worker's `AGENT_MODEL`. A list is the model and its fallbacks, in order
   * (`["smart", "fast"]`): when a model call fails after its attempts (at once when the provider
   * is overloaded), the next answers.
   */
  model?: string | readonly string[];
  /** Default 0. */
  temperature?: number;
  maxTokens?: number;
  /** Anthropic's extended thinking: `{ budgetTokens: 4000 }` lets Claude think that many tokens before it answers. */
  thinking?: { budgetTokens: number };
  /** Reasoning models: how hard the model thinks (OpenAI's `reasoning.effort`, Anthropic's `effort`). */
  reasoningEffort?: 'minimal' | 'low' | 'medium' | 'high';
  /**
   * MCP servers (by their name in the worker's `mcpServers`) whose tools the agent may call, as
   * `<server>__<tool>`, or `"all"` for every server of the worker. Default: none.
   */
  mcpServers?: readonly string[] | 'all';
  /**
   * Agents this one may call as tools, by the agent's name with one argument, `message`. A call
   * runs the agent as a child workflow (its own history, limits and approvals, under this run in
   * the Temporal UI); its final answer is the result. A failed or cut-short child is a tool error
   * for this agent, not a failure of its run. Cancelling this run cancels the child. Agents must
   * not call themselves, directly or through others.
   */
  agents?: readonly AgentRef[];
  /**
   * Agents this one may hand the run or conversation off to, offered as `transfer_to_<name>`.
   * After the call, the target's instructions, tools, model settings and tool-calling mode apply
   * from the next model call on (its name is at most 52 characters, to fit OpenAI's 64).
   */
  handoffs?: readonly AgentRef[];
  /** Tools (among `tools`) whose calls end the run without another LLM call (see "Immediate return"). */
  immediateTools?: readonly ToolRef[];
  /** Tools (among `tools`) whose calls wait for a person's approval. */
  approvalTools?: readonly ToolRef[];
  /**
   * Guardrails (see `defineGuardrail`, or the name of one given to the plugin) on the user's
   * message, before the first model call: one may refuse it (status `guardrail_tripped`).
   */
  inputGuardrails?: readonly GuardrailRef[];
  /** Guardrails on the final answer: refuse it, or send it back to the model with the reason. */
  outputGuardrails?: readonly GuardrailRef[];
  /** Guardrails on each tool call's arguments, before it runs: refuse it, or require approval. */
  toolGuardrails?: readonly GuardrailRef[];
  /**
   * Structured output: the final answer must be JSON valid under this zod schema. It is asked for
   * with `response_format: json_schema` where the endpoint supports it, checked in any case, sent
   * back to the LLM with the exact error when invalid, and returned parsed as the run's `output`.
   */
  output?: z.ZodType<O>;
}

/**
 * Declares a named agent. Settings are checked here, so a typo fails when the worker starts, not
 * in the middle of a run.
 */
export function defineAgent<O = unknown>(definition: AgentDefinition<O>): AgentDefinition<O> {
  const problems: string[] = [];
  const nameProblem =
    agentNameProblem(definition.name) ?? (definition.name === undefined ? '"name" is required' : undefined);
  if (nameProblem) problems.push(nameProblem.replace('"agent"', '"name"'));
  if (typeof definition.instructions !== 'string' || !definition.instructions.trim())
    problems.push('"instructions" must be a non-empty string');
  const examples = definition.examples;
  if (
    examples !== undefined &&
    !(
      Array.isArray(examples) &&
      examples.length <= 10 &&
      examples.every((e) => typeof e === 'string' && e.trim() !== '' && e.length <= 500)
    )
  ) {
    problems.push('"examples" must be a list of at most 10 non-empty questions of at most 500 characters');
  }
  if (!Array.isArray(definition.tools)) problems.push('"tools" must be a list of tools (definitions or names)');
  if (
    definition.maxIterations !== undefined &&
    !(Number.isInteger(definition.maxIterations) && definition.maxIterations >= 1)
  )
    problems.push('"maxIterations" must be an integer >= 1');
  const priority = priorityKeyProblem(definition.priority);
  if (priority) problems.push(priority);
  const workspace = workspaceOptionsProblem(definition.workspace);
  if (workspace) problems.push(workspace);
  const { profile, ...memorySettings } = definition.memory ?? {};
  const memory = agentMemoryProblem(definition.memory === undefined ? undefined : memorySettings);
  if (memory) problems.push(memory);
  if (profile !== undefined && typeof (profile as { safeParse?: unknown }).safeParse !== 'function')
    problems.push('"memory.profile" must be a zod object (z.object({ ... })): the schema of the user\'s profile');
  if (
    definition.temperature !== undefined &&
    !(typeof definition.temperature === 'number' && definition.temperature >= 0 && definition.temperature <= 2)
  ) {
    problems.push('"temperature" must be a number from 0 to 2');
  }
  if (definition.onLimit !== undefined && definition.onLimit !== 'stop' && definition.onLimit !== 'generate')
    problems.push('"onLimit" must be "stop" or "generate"');
  if (definition.toolCalling !== undefined && !TOOL_CALLING_MODES.includes(definition.toolCalling))
    problems.push(`"toolCalling" must be one of ${TOOL_CALLING_MODES.join(', ')}`);
  const budgetError = budgetProblem(definition.budget);
  if (budgetError) problems.push(budgetError);
  if (definition.onBudget !== undefined && definition.onBudget !== 'stop' && definition.onBudget !== 'wrap_up')
    problems.push('"onBudget" must be "stop" or "wrap_up"');
  if (
    definition.onApprovalTimeout !== undefined &&
    !['reject', 'approve', 'escalate'].includes(definition.onApprovalTimeout)
  )
    problems.push('"onApprovalTimeout" must be "reject", "approve" or "escalate"');
  for (const key of ['maxExecutionTime', 'approvalTimeout', 'modelCallTimeout', 'maxWait'] as const) {
    const value = definition[key];
    if (value === undefined) continue;
    try {
      parseDuration(value);
    } catch (err) {
      problems.push(`"${key}": ${(err as Error).message}`);
    }
  }
  for (const key of ['agents', 'handoffs'] as const) {
    const refs = definition[key];
    if (
      refs !== undefined &&
      !(
        Array.isArray(refs) &&
        refs.every(
          (r) =>
            (typeof r === 'string' && r !== '') || (typeof r === 'object' && r !== null && typeof r.name === 'string'),
        )
      )
    ) {
      problems.push(`"${key}" must be a list of agents (definitions or names)`);
    }
  }
  const mcp = definition.mcpServers;
  if (
    mcp !== undefined &&
    mcp !== 'all' &&
    !(Array.isArray(mcp) && mcp.every((s) => typeof s === 'string' && s !== ''))
  )
    problems.push('"mcpServers" must be a list of MCP server names or "all"');
  const model = definition.model;
  if (
    model !== undefined &&
    !(typeof model === 'string'
      ? model !== ''
      : Array.isArray(model) && model.length > 0 && model.every((m) => typeof m === 'string' && m !== ''))
  )
    problems.push('"model" must be a model name, or a list of them (the model, then its fallbacks)');
  const budget = definition.thinking?.budgetTokens;
  if (definition.thinking !== undefined && !(Number.isInteger(budget) && budget! >= 1024))
    problems.push('"thinking" must be { budgetTokens: <a whole number of at least 1024> }');
  if (
    definition.reasoningEffort !== undefined &&
    !['minimal', 'low', 'medium', 'high'].includes(definition.reasoningEffort)
  )
    problems.push('"reasoningEffort" must be one of minimal, low, medium, high');
  if (definition.output !== undefined && typeof (definition.output as { safeParse?: unknown }).safeParse !== 'function')
    problems.push('"output" must be a zod schema');
  if (problems.length) throw new Error(`defineAgent(${JSON.stringify(definition.name)}): ${problems.join('; ')}`);
  return definition;
}

/** The name of an agent reference. */
export function agentRefName(ref: AgentRef): string {
  return typeof ref === 'string' ? ref : ref.name;
}

/** The name of a tool reference. */
export function toolRefName(ref: ToolRef): string {
  return typeof ref === 'string' ? ref : ref.name;
}
