import type { Usage } from '../messages/chat-message';

/**
 * The most a run may spend (a conversation: all its turns; an agent: the agents it calls too, out
 * of the same budget). Each limit is optional.
 */
export interface Budget {
  /** Tokens, input and output together (what `usage.totalTokens` counts). */
  tokens?: number;
  /** US dollars, by the worker's price table (`usage.costUsd`; a model without a price cannot be run under it). */
  costUsd?: number;
}

/** When the next model call would pass the budget: `stop` (the default) or `wrap_up` (one last call without tools for the best answer so far). */
export type OnBudget = 'stop' | 'wrap_up';

/** A budget's state, as `status` and the run result report it. */
export interface BudgetReport {
  limit: Budget;
  spent: { tokens: number; costUsd: number };
  /** What is left of each limit that is set (never below 0). */
  left: Budget;
}

/**
 * Budgets: the most tokens, or dollars, a run (a conversation, an agent and the agents it calls)
 * may spend. Pure decisions: whether the next model call would pass the budget, what is left for
 * a child agent or the next turn, and the report clients show.
 */

/** The answer of a run stopped by its budget. */
export const BUDGET_STOP_MESSAGE = 'Agent stopped: the run spent its budget.';

/** What the model is told on its last call when a run wraps up (`onBudget: 'wrap_up'`). */
export const WRAP_UP_INSTRUCTION =
  'The budget for this task is spent: you cannot call tools any more. Give your best final answer now from what you have found so far, and say what is left undone.';

/** What is wrong with a `budget` option, or undefined. */
export function budgetProblem(budget: unknown): string | undefined {
  if (budget === undefined) return undefined;
  if (budget === null || typeof budget !== 'object' || Array.isArray(budget))
    return '"budget" must be an object { "tokens"?, "costUsd"? }';
  const { tokens, costUsd, ...rest } = budget as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length) return `"budget" takes "tokens" and "costUsd", not ${unknown.map((k) => `"${k}"`).join(', ')}`;
  if (tokens === undefined && costUsd === undefined) return '"budget" needs "tokens" or "costUsd"';
  // 0 is a budget too: what an agent called as a tool gets when its caller's is spent.
  if (tokens !== undefined && !(Number.isInteger(tokens) && (tokens as number) >= 0))
    return `"budget.tokens" must be a whole number of tokens, got ${JSON.stringify(tokens)}`;
  if (costUsd !== undefined && !(typeof costUsd === 'number' && Number.isFinite(costUsd) && costUsd >= 0))
    return `"budget.costUsd" must be a number of dollars, got ${JSON.stringify(costUsd)}`;
  return undefined;
}

/** What is left of `budget` after `spent` (limits that are set only; 0 at the least). */
export function budgetLeft(budget: Budget, spent: Pick<Usage, 'totalTokens' | 'costUsd'>): Budget {
  const left: Budget = {};
  if (budget.tokens !== undefined) left.tokens = Math.max(0, budget.tokens - spent.totalTokens);
  if (budget.costUsd !== undefined) left.costUsd = Math.max(0, round(budget.costUsd - (spent.costUsd ?? 0)));
  return left;
}

/** Whether nothing is left of the budget: its tokens or its cost are all spent. */
export function budgetExhausted(budget: Budget, spent: Pick<Usage, 'totalTokens' | 'costUsd'>): boolean {
  if (budget.tokens !== undefined && spent.totalTokens >= budget.tokens) return true;
  return budget.costUsd !== undefined && (spent.costUsd ?? 0) >= budget.costUsd;
}

/**
 * Whether the next model call would pass the budget: what is spent plus the size of the last
 * call (the next one re-reads that prompt and adds to it, so it is at least as large). The first
 * call goes ahead unless the budget is spent already.
 */
export function wouldPassBudget(
  budget: Budget,
  spent: Pick<Usage, 'totalTokens' | 'costUsd'>,
  lastCall?: { tokens: number; costUsd?: number },
  /** Tokens the conversation grew by since the last call (tool results): the next prompt holds them too. */
  added = 0,
): boolean {
  if (budgetExhausted(budget, spent)) return true;
  const next = lastCall ? lastCall.tokens + added : 0;
  if (budget.tokens !== undefined && spent.totalTokens + next > budget.tokens) return true;
  return budget.costUsd !== undefined && (spent.costUsd ?? 0) + (lastCall?.costUsd ?? 0) > budget.costUsd;
}

/** The report of a budget: its limits, what was spent, what is left. */
export function budgetReport(budget: Budget, spent: Pick<Usage, 'totalTokens' | 'costUsd'>): BudgetReport {
  return {
    limit: budget,
    spent: { tokens: spent.totalTokens, costUsd: round(spent.costUsd ?? 0) },
    left: budgetLeft(budget, spent),
  };
}

/** Dollars to a millionth, so sums of prices do not print as 0.30000000000000004. */
function round(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}

/** What a run has spent toward its budget: what was spent before it (a conversation's earlier turns) and its own usage. */
export function budgetSpent(state: {
  usage: Usage;
  spentBefore?: Pick<Usage, 'totalTokens' | 'costUsd'>;
}): Pick<Usage, 'totalTokens' | 'costUsd'> {
  const before = state.spentBefore;
  if (!before) return state.usage;
  const costUsd =
    before.costUsd === undefined && state.usage.costUsd === undefined
      ? undefined
      : (before.costUsd ?? 0) + (state.usage.costUsd ?? 0);
  return { totalTokens: before.totalTokens + state.usage.totalTokens, ...(costUsd !== undefined ? { costUsd } : {}) };
}

/** Default `maxIterations`, as in LangChain's AgentExecutor. */
export const DEFAULT_MAX_ITERATIONS = 15;

/** The answer of a run stopped by a limit, worded as LangChain's AgentExecutor words it. */
export const LIMIT_STOP_MESSAGE = 'Agent stopped due to iteration limit or time limit.';

/** True once the run has made as many LLM calls as it may. */
export function iterationLimitReached(iterations: number, maxIterations: number): boolean {
  return iterations >= maxIterations;
}

/** The fewest history events a run's `continueAsNewAfter` may name: a run must get somewhere in each. */
export const MIN_CONTINUE_AS_NEW_AFTER = 100;

/** Temporal's default limit on workflow ids (`limit.maxIDLength`), in bytes. */
export const MAX_WORKFLOW_ID_BYTES = 1000;
