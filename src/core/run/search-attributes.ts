import { runStatus } from './run-result';
import type { NextStep, RunState, RunStatus } from '../state/run-state';
import type { Usage } from '../messages/chat-message';
import { tenantProblem } from '../fleet/tenants';
import { canonicalListQuery } from '../events/list-query';

/**
 * The custom search attributes the agent workflows keep up to date, with their Temporal types.
 * Operators filter on them in the Temporal UI and with `temporal workflow list --query`.
 */
export const AGENT_SEARCH_ATTRIBUTES = {
  AgentName: 'Keyword',
  AgentStatus: 'Keyword',
  AgentIterations: 'Int',
  AgentTotalTokens: 'Int',
  AgentModel: 'Keyword',
  AgentVersion: 'Keyword',
  AgentTenant: 'Keyword',
} as const;

/** The name of one of {@link AGENT_SEARCH_ATTRIBUTES}. */
export type AgentSearchAttributeName = keyof typeof AGENT_SEARCH_ATTRIBUTES;

/** Every agent search attribute name, in a fixed order. */
export const AGENT_SEARCH_ATTRIBUTE_NAMES = Object.keys(AGENT_SEARCH_ATTRIBUTES) as AgentSearchAttributeName[];

/**
 * `AgentStatus`: what a run or conversation is doing now (`thinking`: a model call,
 * `running_tools`, `awaiting_approval`, `escalated`: an approval past its first deadline,
 * `waiting`: a durable `sleep` or `wait_for_event`, `idle`: a conversation between turns), or how
 * it ended (a run's final status; `closed` for a conversation).
 */
export type AgentSearchStatus =
  'thinking' | 'running_tools' | 'awaiting_approval' | 'escalated' | 'waiting' | 'idle' | RunStatus | 'closed';

/** Every `AgentStatus` value, for documentation and validation of filters. */
export const AGENT_SEARCH_STATUSES: readonly AgentSearchStatus[] = [
  'thinking',
  'running_tools',
  'awaiting_approval',
  'escalated',
  'waiting',
  'idle',
  'completed',
  'immediate',
  'max_iterations',
  'time_limit',
  'budget_exceeded',
  'guardrail_tripped',
  'failed',
  'cancelled',
  'closed',
];

/** The values of the agent search attributes at one moment; absent ones are not known (no name, no model). */
export interface AgentSearchValues {
  AgentName?: string;
  AgentStatus: AgentSearchStatus;
  AgentIterations: number;
  AgentTotalTokens: number;
  AgentModel?: string;
  /** The named agent's version (see `agentVersion`): which definition answered. */
  AgentVersion?: string;
  /**
   * The run's tenant: set when the workflow starts (so a tenant's list finds it at once), carried
   * to its children and across continue-as-new; never upserted.
   */
  AgentTenant?: string;
}

/**
 * How often the workflows upsert: on every status change the server can see (`steps`: a run shows
 * `thinking` and `running_tools` as it alternates between model calls and activity tools, two
 * upserts per such step; steps with only local tools upsert nothing, see
 * `stepStaysInWorkflowTask`), or only at `milestones` (start, approvals, idle, the end).
 * Each upsert is one billable action on Temporal Cloud.
 */
export type SearchAttributeUpdates = 'steps' | 'milestones';

/** What the worker told the workflow about search attributes (recorded once per run). */
export interface SearchAttributeSettings {
  /** The agent attributes registered in the namespace; only these are upserted (others would fail the workflow task). */
  registered: AgentSearchAttributeName[];
  updates: SearchAttributeUpdates;
  /** The worker's default model, for runs whose agent names none. */
  defaultModel?: string;
}

/**
 * The run's values: its status, model calls, tokens, and the agent and model it is on now (after a
 * handoff, the target's). A run that names no model shows the worker's `defaultModel`.
 */
export function runSearchValues(state: RunState, base: { defaultModel?: string }): AgentSearchValues {
  const values: AgentSearchValues = {
    AgentStatus: runStatus(state).state,
    AgentIterations: state.iterations,
    AgentTotalTokens: state.usage.totalTokens,
  };
  const agent = state.agent.name;
  if (agent !== undefined) values.AgentName = agent;
  const model = state.agent.modelSettings?.model ?? base.defaultModel;
  if (model !== undefined) values.AgentModel = model;
  if (state.agentVersion !== undefined) values.AgentVersion = state.agentVersion;
  return values;
}

/**
 * The values of a conversation between turns (`idle`), once closed, or ended by cancellation or
 * failure: the last turn's model calls, the whole conversation's tokens.
 */
export function conversationSearchValues(
  status: 'idle' | 'closed' | 'cancelled' | 'failed',
  totals: { usage: Usage; lastTurnIterations: number },
  base: { agent?: string; model?: string; defaultModel?: string; agentVersion?: string },
): AgentSearchValues {
  const values: AgentSearchValues = {
    AgentStatus: status,
    AgentIterations: totals.lastTurnIterations,
    AgentTotalTokens: totals.usage.totalTokens,
  };
  if (base.agent !== undefined) values.AgentName = base.agent;
  const model = base.model ?? base.defaultModel;
  if (model !== undefined) values.AgentModel = model;
  if (base.agentVersion !== undefined) values.AgentVersion = base.agentVersion;
  return values;
}

/** Whether an `AgentStatus` change is a milestone (worth an upsert with `updates: 'milestones'`). */
export function isMilestone(previous: AgentSearchStatus | undefined, next: AgentSearchStatus): boolean {
  const working = (s: AgentSearchStatus | undefined) => s === 'thinking' || s === 'running_tools';
  return !(working(previous) && working(next));
}

/**
 * The attributes whose change makes an upsert due: what the run is doing or who does it. The
 * counters (`AgentIterations`, `AgentTotalTokens`) ride along with them rather than cost an
 * upsert of their own, since each upsert is a billable action.
 */
const STATUS_ATTRIBUTES: readonly AgentSearchAttributeName[] = [
  'AgentStatus',
  'AgentName',
  'AgentModel',
  'AgentVersion',
];

/**
 * What to upsert to go from `previous` (what the workflow last upserted) to `next`: only changed,
 * registered attributes; with `milestones` nothing while a run goes back and forth between
 * model calls and tools; nothing when only the counters moved. Empty when nothing is to be sent.
 */
export function searchAttributeChanges(
  previous: Partial<AgentSearchValues>,
  next: AgentSearchValues,
  settings: SearchAttributeSettings,
): Partial<AgentSearchValues> {
  if (settings.updates === 'milestones' && !isMilestone(previous.AgentStatus, next.AgentStatus)) return {};
  const changes: Partial<AgentSearchValues> = {};
  for (const name of settings.registered) {
    const value = next[name];
    if (value !== undefined && value !== previous[name]) (changes as Record<string, unknown>)[name] = value;
  }
  if (!STATUS_ATTRIBUTES.some((name) => name in changes)) return {};
  return changes;
}

/**
 * Whether a step's work is all done inside the workflow task that plans it: tool calls already
 * resolved (refused, unknown tools), local tools and handoffs (local activities). The server
 * only sees a run between workflow tasks, so it would never see the run in such a step: an
 * upsert of `running_tools` there would be overwritten by the next one before anyone could list
 * it, and would only cost an action. (A local tool that outlasts the workflow task is still
 * shown as `thinking`; local tools are meant to be quick.)
 */
export function stepStaysInWorkflowTask(step: NextStep): boolean {
  if (step.type !== 'run_tools') return false;
  return step.calls.every(
    (c) =>
      c.resolved !== undefined || c.tool.handoff !== undefined || (c.tool.local === true && c.tool.agent === undefined),
  );
}

/** The registered attributes missing from a namespace's custom search attributes (name → type), with what each should be. */
export function missingSearchAttributes(
  existing: Record<string, string>,
): { name: AgentSearchAttributeName; type: string; problem: 'missing' | 'wrong_type'; actual?: string }[] {
  const missing: {
    name: AgentSearchAttributeName;
    type: string;
    problem: 'missing' | 'wrong_type';
    actual?: string;
  }[] = [];
  for (const name of AGENT_SEARCH_ATTRIBUTE_NAMES) {
    const want = AGENT_SEARCH_ATTRIBUTES[name];
    const actual = existing[name];
    if (actual === undefined) missing.push({ name, type: want, problem: 'missing' });
    else if (actual.toLowerCase() !== want.toLowerCase())
      missing.push({ name, type: want, problem: 'wrong_type', actual });
  }
  return missing;
}

/**
 * The `temporal` CLI command that registers the given attributes in a namespace, in one list (one
 * element): each `--name` with its own `--type`, as the CLI pairs them (`--name A --name B --type
 * Keyword` adds only A, and says it added them).
 */
export function searchAttributeCreateCommands(
  namespace: string,
  attributes: { name: string; type: string }[],
): string[] {
  if (attributes.length === 0) return [];
  const pairs = attributes.map((a) => `--name ${a.name} --type ${a.type}`).join(' ');
  return [`temporal operator search-attribute create --namespace ${namespace} ${pairs}`];
}

/** Filters of `client.ts list` and `GET /runs`. */
export interface AgentListFilter {
  status?: string;
  agent?: string;
  /** Only the runs and conversations of this task queue. */
  taskQueue?: string;
  /** Only those answered by this version of their agent (`AgentVersion`, see `agentVersion`). */
  agentVersion?: string;
  /** Only this tenant's (`AgentTenant`). */
  tenant?: string;
  /** Any visibility query besides, ANDed (`"TemporalWorkerDeploymentVersion = 'shop:b2'"`). */
  query?: string;
}

/** Why a list filter cannot be used, or undefined. */
export function agentListFilterProblem(filter: AgentListFilter): string | undefined {
  if (filter.status !== undefined && !(AGENT_SEARCH_STATUSES as readonly string[]).includes(filter.status)) {
    return `unknown status "${filter.status}"; one of: ${AGENT_SEARCH_STATUSES.join(', ')}`;
  }
  if (filter.taskQueue !== undefined && !/^[A-Za-z0-9_.:/-]{1,200}$/.test(filter.taskQueue))
    return `"${filter.taskQueue}" is not a task queue name (letters, digits, _ . : / -)`;
  if (filter.agent !== undefined && !/^[A-Za-z0-9_.-]{1,64}$/.test(filter.agent))
    return `"${filter.agent}" is not an agent name (letters, digits, _ . -)`;
  if (filter.agentVersion !== undefined && !/^[A-Za-z0-9_.-]{1,64}$/.test(filter.agentVersion))
    return `"${filter.agentVersion}" is not an agent version (av- and 16 hex digits, as status shows it)`;
  const tenant = tenantProblem(filter.tenant, 'the tenant');
  if (tenant) return tenant;
  if (filter.query !== undefined) {
    const parsed = canonicalListQuery(filter.query);
    if ('problem' in parsed) return parsed.problem;
  }
  return undefined;
}

/**
 * The visibility query (Temporal's list filter) for agent runs and conversations, newest first:
 * the same text works with `temporal workflow list --query` and in the UI's search box.
 */
export function agentListQuery(filter: AgentListFilter, workflowTypes: readonly string[]): string {
  const problem = agentListFilterProblem(filter);
  if (problem) throw new Error(problem);
  const parts = [`WorkflowType IN (${workflowTypes.map((t) => `'${t}'`).join(', ')})`];
  // First, and the user's query in parentheses after it: no query can widen a tenant's list.
  if (filter.tenant) parts.push(`AgentTenant = '${filter.tenant}'`);
  if (filter.status) parts.push(`AgentStatus = '${filter.status}'`);
  if (filter.agent) parts.push(`AgentName = '${filter.agent}'`);
  if (filter.taskQueue) parts.push(`TaskQueue = '${filter.taskQueue}'`);
  if (filter.agentVersion) parts.push(`AgentVersion = '${filter.agentVersion}'`);
  // Never the caller's text: the query as parsed, printed again (see list-query.ts).
  if (filter.query) parts.push(`(${(canonicalListQuery(filter.query) as { query: string }).query})`);
  return parts.join(' AND ');
}
