import { ledgerOf, ModelTimeBudget } from '../../src/activities/attempt-ledger';

describe('what an activity carries from attempt to attempt', () => {
  it('reads heartbeat details defensively', () => {
    expect(ledgerOf(undefined)).toEqual({});
    expect(ledgerOf('beat')).toEqual({});
    expect(ledgerOf({ modelMs: 1200, toolFailures: 2 })).toEqual({ modelMs: 1200, toolFailures: 2 });
    expect(ledgerOf({ modelMs: -1, toolFailures: 1.5 })).toEqual({});
    expect(ledgerOf({ modelMs: Infinity, toolFailures: '2' })).toEqual({});
  });

  it('counts the model budget in time spent waiting for the model only', () => {
    let now = 0;
    const budget = new ModelTimeBudget(5_000, 1_500, () => now);
    expect([budget.spent(), budget.remaining(), budget.exhausted()]).toEqual([1_500, 3_500, false]);
    now = 10_000; // time outside a wait (an outage, back-off, loading the conversation) is not counted
    budget.start();
    now = 12_000;
    expect(budget.spent()).toBe(3_500);
    budget.start(); // starting twice does not reset the wait
    now = 13_000;
    budget.stop();
    now = 60_000;
    expect([budget.spent(), budget.remaining(), budget.exhausted()]).toEqual([4_500, 500, false]);
    budget.start();
    now = 60_600;
    expect([budget.remaining(), budget.exhausted()]).toEqual([0, true]);
  });
});

it('carries the attempt in which the tool last failed, so the next attempt can tell a failure from a lost worker', () => {
  expect(ledgerOf({ toolFailures: 1, lastToolFailure: 2 })).toEqual({ toolFailures: 1, lastToolFailure: 2 });
  expect(ledgerOf({ toolFailures: 1, lastToolFailure: 0 })).toEqual({ toolFailures: 1 });
  expect(ledgerOf({ lastToolFailure: 'two' })).toEqual({});
});
