import { isInstructions } from '../context/compaction';
import type { AgentSettings, ResolvedAgent } from '../state/agents';
import type { CurrentAgent, PlannedToolCall, RunState } from '../state/run-state';
import type { ToolInfo } from '../messages/tool-info';
import type { ToolOutcome } from '../messages/tool-results';

/**
 * Handoffs: an agent offers `transfer_to_<agent>` tools (see `handoffs` on `defineAgent`); when the
 * LLM calls one, the run goes on as that agent. From the next model call on, the target's
 * instructions (the system message), tools, model settings and tool-calling mode apply; the
 * run's limits and what it has done stay. Pure functions: the workflow resolves the target (a
 * recorded activity) and folds it in.
 */

/** The tool name that hands off to `agent`. */
export function handoffToolName(agent: string): string {
  return `transfer_to_${agent}`;
}

/** The one handoff a reply's calls make (the first, if the LLM asked for several), by index. */
export function chosenHandoff(calls: readonly PlannedToolCall[]): number {
  return calls.findIndex((c) => c.tool?.handoff !== undefined);
}

/** The result the LLM reads for a handoff call: the one that went ahead, or one of the others. */
export function handoffOutcome(target: string, chosen: string | undefined, failure?: string): ToolOutcome {
  if (failure !== undefined) return { result: `Error: could not hand off to ${target}: ${failure}`, error: true };
  if (chosen === target)
    return { result: `Transferred to ${target}: the ${target} agent takes it from here.`, error: false };
  return { result: `Error: only one handoff per reply; the conversation went to ${chosen}.`, error: true };
}

/**
 * The run, handed off to `target` (resolved from the worker's declaration): its system message,
 * tools, model settings and tool-calling mode from now on. A tool that needed approval before
 * still does when the target has it too, so a gate set on the conversation is never dropped.
 * `revision` counts the changes to the system message, so the worker's message cache does not
 * serve the old one.
 */
export function applyHandoff(state: RunState, target: ResolvedAgent): RunState {
  const gated = new Set(state.tools.filter((t) => t.needsApproval).map((t) => t.name));
  const tools: ToolInfo[] = target.tools.map((t) =>
    gated.has(t.name) && !t.needsApproval ? { ...t, needsApproval: true } : t,
  );
  const settings: AgentSettings = target.settings;
  const messages = [...state.messages];
  const system = settings.instructions ?? '';
  let context = state.context;
  if (isInstructions(messages[0])) messages[0] = { role: 'system', content: system };
  else {
    messages.unshift({ role: 'system', content: system });
    // Every message moved one place on: so do the summary and the view's start.
    if (context) context = { from: context.from + 1, summary: context.summary + 1 };
  }
  const agent: CurrentAgent = { name: settings.name };
  if (settings.modelSettings) agent.modelSettings = settings.modelSettings;
  const toolCalling = settings.toolCalling ?? state.agent.toolCalling;
  if (toolCalling) agent.toolCalling = toolCalling;
  if (state.agent.output) agent.output = state.agent.output;
  return {
    ...state,
    messages,
    tools,
    agent,
    handedOff: true,
    revision: (state.revision ?? 0) + 1,
    ...(context ? { context } : {}),
  };
}
