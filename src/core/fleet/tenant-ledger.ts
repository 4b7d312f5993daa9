/**
 * A tenant's ledger: what it may spend per day or month, what it spent, and the model calls in
 * flight. Pure decisions, carried out by the tenant ledger workflow (one per tenant) for every
 * worker of the fleet: a model call reserves an estimate before it asks the provider and settles
 * the real usage after. Keys make both exact across crashes: a reservation or settlement repeated
 * (a retried Update, a retried attempt) changes nothing; each reply of the provider is charged
 * once. A call lost before its reply (its worker died mid-call) is not charged: what it cost is
 * unknown; its reservation is released when the call settles or when it expires.
 */

/** A tenant's budget per period: tokens and/or dollars. */
export interface TenantBudget {
  /** The most tokens (prompt and completion) per period. */
  tokens?: number;
  /** The most US dollars per period (by the workers' price table). */
  usd?: number;
  /** `day` or `month`, in UTC. */
  per: 'day' | 'month';
}

/** What a tenant spent in one period. */
export interface TenantSpend {
  tokens: number;
  usd: number;
  /** Model calls settled. */
  calls: number;
}

/** A reservation of a model call in flight. */
export interface HeldCall {
  tokens: number;
  usd: number;
  /** When it expires (epoch ms): a call that never settles stops holding budget then. */
  until: number;
}

/** The ledger's state: plain JSON, carried across continue-as-new. */
export interface TenantLedgerState {
  tenant: string;
  budget?: TenantBudget;
  /** The current period (`2026-11-27` or `2026-11`) and its spending. */
  period: string;
  spent: TenantSpend;
  /** Calls reserved and not yet settled, by call key. */
  held: Record<string, HeldCall>;
  /** Settled replies (`<call key>#<attempt>`) of this period and the last, oldest first: a repeat is not charged again. */
  settled: string[];
  /** Earlier periods' spending, newest first (at most {@link KEPT_PERIODS}). */
  history: ({ period: string } & TenantSpend)[];
}

/** How many earlier periods a ledger keeps. */
export const KEPT_PERIODS = 12;
/** How many settled keys a ledger remembers (a repeat older than these would be charged again). */
export const KEPT_SETTLED = 2_000;
/** How long a reservation holds budget without settling (a model call's longest time, with its retries). */
export const HOLD_MS = 30 * 60_000;

/** The message of a run stopped by its tenant's budget. */
export const TENANT_BUDGET_STOP_MESSAGE = "Agent stopped: the tenant's budget for this period is spent.";

/** The period `now` falls in: `YYYY-MM-DD` by day, `YYYY-MM` by month (UTC). */
export function periodOf(per: TenantBudget['per'], now: number): string {
  const iso = new Date(now).toISOString();
  return per === 'day' ? iso.slice(0, 10) : iso.slice(0, 7);
}

/** Why `budget` is not a tenant budget, or undefined. */
export function tenantBudgetProblem(budget: unknown): string | undefined {
  if (budget === null || typeof budget !== 'object') return 'a tenant budget is an object: { tokens?, usd?, per }';
  const b = budget as Record<string, unknown>;
  if (b.per !== 'day' && b.per !== 'month') return `"per" must be "day" or "month", got ${JSON.stringify(b.per)}`;
  if (b.tokens === undefined && b.usd === undefined) return 'a tenant budget needs "tokens" or "usd" (or both)';
  if (b.tokens !== undefined && !(Number.isInteger(b.tokens) && (b.tokens as number) >= 1))
    return `"tokens" must be a whole number >= 1, got ${JSON.stringify(b.tokens)}`;
  if (b.usd !== undefined && !(typeof b.usd === 'number' && Number.isFinite(b.usd) && b.usd > 0))
    return `"usd" must be a number > 0, got ${JSON.stringify(b.usd)}`;
  return undefined;
}

const NOTHING: TenantSpend = { tokens: 0, usd: 0, calls: 0 };

/** A new ledger for `tenant`. */
export function newTenantLedger(tenant: string, now: number): TenantLedgerState {
  return { tenant, period: periodOf('month', now), spent: { ...NOTHING }, held: {}, settled: [], history: [] };
}

/** The ledger in the period `now` falls in: a new period starts from nothing, the last one kept in history. */
export function rollPeriod(state: TenantLedgerState, now: number): TenantLedgerState {
  const period = periodOf(state.budget?.per ?? 'month', now);
  const held = Object.fromEntries(Object.entries(state.held).filter(([, h]) => h.until > now));
  if (period === state.period) return held === state.held ? state : { ...state, held };
  return {
    ...state,
    period,
    spent: { ...NOTHING },
    held,
    // A period in which nothing was spent (or one a change of `per` cut short before any call) is not kept.
    history: (state.spent.calls > 0
      ? [{ period: state.period, ...state.spent }, ...state.history]
      : state.history
    ).slice(0, KEPT_PERIODS),
  };
}

/** Sets (or, with undefined, removes) the tenant's budget; a change of `per` starts that period. */
export function setTenantBudget(
  state: TenantLedgerState,
  budget: TenantBudget | undefined,
  now: number,
): TenantLedgerState {
  const problem = budget === undefined ? undefined : tenantBudgetProblem(budget);
  if (problem) throw new Error(problem);
  const next = { ...state, budget };
  if (budget === undefined) delete next.budget;
  // The period's spending so far counts under the new budget when the period is the same.
  return rollPeriod(next, now);
}

/** A model call asking to go ahead: its key (stable across its attempts) and what it may cost. */
export interface ReserveRequest {
  key: string;
  tokens: number;
  usd?: number;
}

/** The ledger's answer to a reservation. */
export type ReserveAnswer = { granted: true; unlimited?: true } | { granted: false; report: TenantBudgetReport };

/** A tenant's budget as `status`, results and `tenants usage` report it. */
export interface TenantBudgetReport {
  tenant: string;
  period: string;
  limit: TenantBudget;
  spent: TenantSpend;
  /** Reserved by model calls in flight. */
  held: { tokens: number; usd: number };
}

/** What the ledger reports of itself now. */
export function tenantBudgetReport(state: TenantLedgerState): TenantBudgetReport | undefined {
  if (!state.budget) return undefined;
  const held = Object.values(state.held).reduce((a, h) => ({ tokens: a.tokens + h.tokens, usd: a.usd + h.usd }), {
    tokens: 0,
    usd: 0,
  });
  return { tenant: state.tenant, period: state.period, limit: state.budget, spent: state.spent, held };
}

/** Whether what is spent (and held by other calls) has reached a limit of the budget. */
function exhausted(budget: TenantBudget, spent: TenantSpend, held: { tokens: number; usd: number }): boolean {
  return (
    (budget.tokens !== undefined && spent.tokens + held.tokens >= budget.tokens) ||
    (budget.usd !== undefined && spent.usd + held.usd >= budget.usd)
  );
}

/**
 * A model call asks to go ahead: granted (and its estimate held) while the period's spending and
 * the calls in flight leave budget, else refused with the figures. A call already holding a
 * reservation (its next attempt) is granted again. So the budget is passed by at most the calls
 * admitted while it still had room, each by what it cost beyond its estimate: with calls one at a
 * time, by one call at most.
 */
export function reserve(
  state: TenantLedgerState,
  request: ReserveRequest,
  now: number,
): { state: TenantLedgerState; answer: ReserveAnswer } {
  const rolled = rollPeriod(state, now);
  if (!rolled.budget) return { state: rolled, answer: { granted: true, unlimited: true } };
  if (rolled.held[request.key]) return { state: rolled, answer: { granted: true } };
  const report = tenantBudgetReport(rolled)!;
  if (exhausted(rolled.budget, rolled.spent, report.held)) return { state: rolled, answer: { granted: false, report } };
  return {
    state: {
      ...rolled,
      held: { ...rolled.held, [request.key]: { tokens: request.tokens, usd: request.usd ?? 0, until: now + HOLD_MS } },
    },
    answer: { granted: true },
  };
}

/** A provider's reply, to be charged: the call's key, the attempt that got it, and what it cost. */
export interface SettleRequest {
  key: string;
  attempt: number;
  tokens: number;
  usd?: number;
}

/**
 * Charges a reply once (by call key and attempt; a repeat changes nothing) and releases the
 * call's reservation. A later attempt's reply (the call was retried after an earlier reply was
 * charged and then lost with its worker) is charged too: the provider was paid for both.
 */
export function settle(state: TenantLedgerState, request: SettleRequest, now: number): TenantLedgerState {
  const rolled = rollPeriod(state, now);
  const id = `${request.key}#${request.attempt}`;
  const { [request.key]: _released, ...held } = rolled.held;
  if (rolled.settled.includes(id)) return { ...rolled, held };
  return {
    ...rolled,
    held,
    spent: {
      tokens: rolled.spent.tokens + request.tokens,
      usd: rolled.spent.usd + (request.usd ?? 0),
      calls: rolled.spent.calls + 1,
    },
    settled: [...rolled.settled, id].slice(-KEPT_SETTLED),
  };
}

/** The usage `tenants usage` shows: this period's and earlier ones', with the budget. */
export interface TenantUsage {
  tenant: string;
  budget?: TenantBudget;
  period: string;
  spent: TenantSpend;
  held: { tokens: number; usd: number };
  history: ({ period: string } & TenantSpend)[];
}

/** The ledger as `tenants usage` reports it. */
export function tenantUsage(state: TenantLedgerState, now: number): TenantUsage {
  const rolled = rollPeriod(state, now);
  const held = Object.values(rolled.held).reduce((a, h) => ({ tokens: a.tokens + h.tokens, usd: a.usd + h.usd }), {
    tokens: 0,
    usd: 0,
  });
  return {
    tenant: rolled.tenant,
    ...(rolled.budget ? { budget: rolled.budget } : {}),
    period: rolled.period,
    spent: rolled.spent,
    held,
    history: rolled.history,
  };
}
