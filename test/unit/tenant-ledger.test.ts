import {
  newTenantLedger,
  periodOf,
  reserve,
  setTenantBudget,
  settle,
  tenantBudgetProblem,
  tenantUsage,
  HOLD_MS,
} from '../../src/core/fleet/tenant-ledger';
import { stopForTenantBudget } from '../../src/core/run/agent-loop';

const NOV_27 = Date.UTC(2026, 10, 27, 12);
const NOV_28 = Date.UTC(2026, 10, 28, 0, 0, 1);

describe('a tenant ledger (pure)', () => {
  it('checks budgets and names periods in UTC', () => {
    expect(tenantBudgetProblem({ tokens: 100, per: 'day' })).toBeUndefined();
    expect(tenantBudgetProblem({ per: 'day' })).toMatch(/needs "tokens" or "usd"/);
    expect(tenantBudgetProblem({ tokens: 1.5, per: 'day' })).toMatch(/whole number/);
    expect(tenantBudgetProblem({ usd: 5, per: 'week' })).toMatch(/"per" must be "day" or "month"/);
    expect(periodOf('day', NOV_27)).toBe('2026-11-27');
    expect(periodOf('month', NOV_27)).toBe('2026-11');
  });

  it('grants calls while the budget has room, then refuses with the figures; a call overruns by at most itself', () => {
    let s = setTenantBudget(newTenantLedger('acme', NOV_27), { tokens: 100, per: 'day' }, NOV_27);
    const take = (key: string, tokens: number, used: number) => {
      const r = reserve(s, { key, tokens }, NOV_27);
      s = r.state;
      if (r.answer.granted) s = settle(s, { key, attempt: 1, tokens: used }, NOV_27);
      return r.answer;
    };
    expect(take('c1', 50, 60)).toEqual({ granted: true });
    expect(take('c2', 50, 60)).toEqual({ granted: true }); // 60 spent < 100: admitted, and passes it
    const refused = take('c3', 50, 60);
    expect(refused).toMatchObject({
      granted: false,
      report: {
        tenant: 'acme',
        period: '2026-11-27',
        limit: { tokens: 100, per: 'day' },
        spent: { tokens: 120, calls: 2 },
      },
    });
    // The next day starts from nothing; the last one is kept.
    const next = reserve(s, { key: 'c4', tokens: 50 }, NOV_28);
    expect(next.answer).toEqual({ granted: true });
    expect(tenantUsage(next.state, NOV_28)).toMatchObject({
      period: '2026-11-28',
      spent: { tokens: 0 },
      held: { tokens: 50 },
      history: [{ period: '2026-11-27', tokens: 120, calls: 2 }],
    });
  });

  it('counts calls in flight: concurrent calls cannot all pass the budget', () => {
    let s = setTenantBudget(newTenantLedger('acme', NOV_27), { tokens: 100, per: 'day' }, NOV_27);
    const answers = ['a', 'b', 'c'].map((key) => {
      const r = reserve(s, { key, tokens: 60 }, NOV_27);
      s = r.state;
      return r.answer.granted;
    });
    expect(answers).toEqual([true, true, false]);
    // A reservation never settled (its call was lost) stops holding budget when it expires.
    expect(reserve(s, { key: 'd', tokens: 60 }, NOV_27 + HOLD_MS + 1).answer).toEqual({ granted: true });
  });

  it('charges each reply once: a repeated reservation or settlement changes nothing, a later attempt’s reply is charged too', () => {
    let s = setTenantBudget(newTenantLedger('acme', NOV_27), { tokens: 1000, per: 'month' }, NOV_27);
    s = reserve(s, { key: 'k', tokens: 100 }, NOV_27).state;
    const again = reserve(s, { key: 'k', tokens: 100 }, NOV_27);
    expect(again.answer).toEqual({ granted: true });
    expect(tenantUsage(again.state, NOV_27).held.tokens).toBe(100);
    s = settle(again.state, { key: 'k', attempt: 1, tokens: 40 }, NOV_27);
    s = settle(s, { key: 'k', attempt: 1, tokens: 40 }, NOV_27);
    expect(tenantUsage(s, NOV_27)).toMatchObject({ spent: { tokens: 40, calls: 1 }, held: { tokens: 0 } });
    // The call was retried after its reply was charged (its worker died before it reported it).
    s = settle(s, { key: 'k', attempt: 2, tokens: 45 }, NOV_27);
    expect(tenantUsage(s, NOV_27).spent).toEqual({ tokens: 85, usd: 0, calls: 2 });
  });

  it('grants everything without a budget, and still counts', () => {
    const r = reserve(newTenantLedger('acme', NOV_27), { key: 'k', tokens: 10 }, NOV_27);
    expect(r.answer).toEqual({ granted: true, unlimited: true });
    expect(tenantUsage(settle(r.state, { key: 'k', attempt: 1, tokens: 7, usd: 0.01 }, NOV_27), NOV_27)).toMatchObject({
      spent: { tokens: 7, usd: 0.01, calls: 1 },
    });
  });

  it('stops a run as budget_exceeded with the tenant’s figures', () => {
    const report = {
      tenant: 'acme',
      period: '2026-11',
      limit: { tokens: 10, per: 'month' as const },
      spent: { tokens: 12, usd: 0, calls: 1 },
      held: { tokens: 0, usd: 0 },
    };
    const state = stopForTenantBudget({ phase: { kind: 'model' } } as never, report);
    expect(state.phase).toMatchObject({ kind: 'done', status: 'budget_exceeded' });
    expect(state.tenantBudget).toBe(report);
  });
});
