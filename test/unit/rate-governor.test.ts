import {
  newRateGovernor,
  parseRateLimits,
  pauseFor429,
  rateGovernorStatus,
  settleTokens,
  takeTurn,
  type RateGovernorState,
} from '../../src/core/fleet/rate-governor';

const T0 = 1_800_000_000_000;

describe('the rate governor (pure)', () => {
  it('reads AGENT_RATE_LIMITS, refusing what it cannot use', () => {
    expect(parseRateLimits('{"gpt-4o": {"requestsPerMinute": 500, "tokensPerMinute": 200000}}')).toEqual({
      'gpt-4o': { requestsPerMinute: 500, tokensPerMinute: 200000 },
    });
    expect(() => parseRateLimits('{gpt')).toThrow(/AGENT_RATE_LIMITS is not JSON/);
    expect(() => parseRateLimits('[1]')).toThrow(/must be an object of models/);
    expect(() => parseRateLimits('{"m": {}}')).toThrow(/needs "requestsPerMinute" or "tokensPerMinute"/);
    expect(() => parseRateLimits('{"m": {"requestsPerMinute": -1}}')).toThrow(
      /"requestsPerMinute" of "m" must be a number > 0/,
    );
    expect(() => parseRateLimits('{"m": {"rpm": 5}}')).toThrow(/needs "requestsPerMinute"/);
  });

  it('paces requests at the limit: the first at once, then one each 60,000 / rpm ms', () => {
    let s = newRateGovernor('m', { requestsPerMinute: 600 }, T0);
    const waits = Array.from({ length: 5 }, (_, i) => {
      const r = takeTurn(s, { key: `k${i}`, tokens: 10 }, T0);
      s = r.state;
      return r.answer.waitMs;
    });
    expect(waits).toEqual([0, 100, 200, 300, 400]);
    // Later, when the schedule has passed, a call goes at once again.
    expect(takeTurn(s, { key: 'late', tokens: 10 }, T0 + 10_000).answer).toMatchObject({ taken: true, waitMs: 0 });
    // The same call asking again (a retried Update) gets the same turn, not a new one.
    expect(takeTurn(s, { key: 'k3', tokens: 10 }, T0 + 50).answer).toMatchObject({ taken: true, waitMs: 250 });
  });

  it('paces tokens too, and gives back what a reply did not use', () => {
    let s = newRateGovernor('m', { tokensPerMinute: 60_000 }, T0); // 1 token a ms
    s = takeTurn(s, { key: 'a', tokens: 500 }, T0).state;
    expect(takeTurn(s, { key: 'b', tokens: 500 }, T0).answer.waitMs).toBe(500);
    // The first reply used 100 tokens, not 500: the next call may go 400 ms sooner.
    s = settleTokens(s, 500, 100);
    expect(takeTurn(s, { key: 'b', tokens: 500 }, T0).answer.waitMs).toBe(100);
  });

  it('pauses every call after a 429 until its Retry-After, voiding the turns given before', () => {
    let s = newRateGovernor('m', { requestsPerMinute: 6000 }, T0);
    const before = takeTurn(s, { key: 'early', tokens: 1 }, T0);
    s = takeTurn(before.state, { key: 'later', tokens: 1 }, T0).state;
    s = pauseFor429(s, T0 + 2_000);
    // A new epoch: the turns given before are void; their callers ask again, after the pause.
    expect(s.epoch).toBe(before.answer.epoch! + 1);
    expect(takeTurn(s, { key: 'later', tokens: 1 }, T0).answer.waitMs).toBe(2_000);
    s = newRateGovernor('m', { requestsPerMinute: 6000 }, T0);
    s = pauseFor429(s, T0 + 2_000);
    expect(takeTurn(s, { key: 'a', tokens: 1 }, T0).answer).toMatchObject({ taken: true, waitMs: 2_000 });
    expect(rateGovernorStatus(s, T0)).toMatchObject({
      pausedUntil: new Date(T0 + 2_000).toISOString(),
      counts: { rateLimited: 1 },
    });
  });

  it('takes no turn further off than the caller may wait (it falls back to its next model)', () => {
    let s: RateGovernorState = newRateGovernor('m', { requestsPerMinute: 60 }, T0); // one a second
    s = takeTurn(s, { key: 'a', tokens: 1 }, T0).state;
    s = takeTurn(s, { key: 'b', tokens: 1 }, T0).state;
    const refused = takeTurn(s, { key: 'c', tokens: 1, maxWaitMs: 1_500 }, T0);
    expect(refused.answer).toMatchObject({ taken: false, waitMs: 2_000 });
    // Not taken: the next caller's turn is the same as it would have been.
    expect(takeTurn(refused.state, { key: 'd', tokens: 1 }, T0).answer.waitMs).toBe(2_000);
    expect(refused.state.counts.fellBack).toBe(1);
  });
});
