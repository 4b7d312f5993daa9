/**
 * The fleet's rate governor for one model: every worker's calls of that model take their turn
 * from one schedule, so together they stay under the provider's requests and tokens per minute.
 * Pure decisions (a generic cell rate algorithm, GCRA: each request and each token advances a
 * "theoretical arrival time"), carried out by the rate governor workflow of the model (one per
 * limited model) for every worker. A call is told when it may go, not refused: it waits its turn.
 * A 429's Retry-After pauses the model for every call until then.
 */

/** A model's limits, as the provider sets them (set them a little under the provider's own). */
export interface RateLimit {
  requestsPerMinute?: number;
  tokensPerMinute?: number;
  /**
   * The longest a call waits its turn before its agent falls back to its next model (when it has
   * one), in ms. Without it, or without a fallback, a call waits as long as its turn takes.
   */
  maxWaitMs?: number;
}

/** Why `limit` is not a rate limit, or undefined. */
export function rateLimitProblem(model: string, limit: unknown): string | undefined {
  if (limit === null || typeof limit !== 'object')
    return `the rate limit of "${model}" must be an object: { requestsPerMinute?, tokensPerMinute?, maxWaitMs? }`;
  const l = limit as Record<string, unknown>;
  for (const key of ['requestsPerMinute', 'tokensPerMinute', 'maxWaitMs'] as const)
    if (l[key] !== undefined && !(typeof l[key] === 'number' && Number.isFinite(l[key]) && (l[key] as number) > 0))
      return `"${key}" of "${model}" must be a number > 0, got ${JSON.stringify(l[key])}`;
  if (l.requestsPerMinute === undefined && l.tokensPerMinute === undefined)
    return `the rate limit of "${model}" needs "requestsPerMinute" or "tokensPerMinute"`;
  const unknown = Object.keys(l).filter((k) => !['requestsPerMinute', 'tokensPerMinute', 'maxWaitMs'].includes(k));
  if (unknown.length) return `the rate limit of "${model}" has unknown keys: ${unknown.join(', ')}`;
  return undefined;
}

/**
 * Reads `AGENT_RATE_LIMITS` (`{"<model>": {"requestsPerMinute": N, "tokensPerMinute": N}}`):
 * throws with the reason on anything else.
 */
export function parseRateLimits(raw: string): Record<string, RateLimit> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new Error(
      `AGENT_RATE_LIMITS is not JSON (${(err as Error).message}); e.g. {"gpt-4o": {"requestsPerMinute": 500, "tokensPerMinute": 200000}}`,
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error('AGENT_RATE_LIMITS must be an object of models: {"<model>": {"requestsPerMinute": N}}');
  for (const [model, limit] of Object.entries(parsed)) {
    const problem = rateLimitProblem(model, limit);
    if (problem) throw new Error(`AGENT_RATE_LIMITS: ${problem}`);
  }
  return parsed as Record<string, RateLimit>;
}

/** The governor's state: plain JSON, carried across continue-as-new. */
export interface RateGovernorState {
  model: string;
  limit: RateLimit;
  /** When the next request may go, at the earliest (epoch ms): the requests' theoretical arrival time. */
  requestsAt: number;
  /** The same for tokens. */
  tokensAt: number;
  /** A 429 said to wait until then (epoch ms). */
  pausedUntil: number;
  /** How many pauses there were: a turn given before the last one is void (its caller asks again). */
  epoch: number;
  /** Turns given out lately, by call key, with their time: a repeated ask (a retried Update) gets the same. */
  given: Record<string, number>;
  /** Counters, for `status` and the bench. */
  counts: { granted: number; waitedMs: number; rateLimited: number; fellBack: number };
}

/** How long a turn given out is remembered (a repeat of the same ask later gets a new turn). */
export const GIVEN_KEPT_MS = 5 * 60_000;

/** A new governor for `model` under `limit`. */
export function newRateGovernor(model: string, limit: RateLimit, now: number): RateGovernorState {
  return {
    model,
    limit,
    requestsAt: now,
    tokensAt: now,
    pausedUntil: 0,
    epoch: 0,
    given: {},
    counts: { granted: 0, waitedMs: 0, rateLimited: 0, fellBack: 0 },
  };
}

/** A call asking for its turn: its key (the same on every attempt), its estimated tokens, how long it may wait. */
export interface TurnRequest {
  key: string;
  tokens: number;
  /** Past this wait, the turn is not taken (the caller falls back to another model). */
  maxWaitMs?: number;
  /** The limits the asking worker has (a changed configuration takes effect from this call on). */
  limit?: RateLimit;
}

/** When a call may go: in `waitMs` (its turn taken), or not at all within its bound (`taken: false`). */
export interface TurnAnswer {
  taken: boolean;
  /** From the governor's now. */
  waitMs: number;
  /**
   * When the turn comes (epoch ms): callers wait until then by their own clock, not `waitMs` from
   * when the answer reached them (answers to calls asking at once leave together, and arrive at
   * different times).
   */
  at?: number;
  /** The governor's pauses so far: a 429 after the turn was given voids it (see {@link pauseFor429}). */
  epoch?: number;
}

/**
 * Gives a call its turn: when both the requests and the tokens schedule (and any pause) allow it.
 * Each turn pushes the schedule on by one request (60,000 / requests per minute ms) and by its
 * tokens; the earliest turn is now, so an idle model starts at once and a busy one is paced
 * exactly at its limit. A call whose turn is further off than its `maxWaitMs` takes none.
 */
export function takeTurn(
  state: RateGovernorState,
  request: TurnRequest,
  now: number,
): { state: RateGovernorState; answer: TurnAnswer } {
  const limit = request.limit ?? state.limit;
  const known = state.given[request.key];
  if (known !== undefined)
    return { state, answer: { taken: true, waitMs: Math.max(0, known - now), at: known, epoch: state.epoch } };
  const at = Math.max(now, state.pausedUntil, state.requestsAt, state.tokensAt);
  const waitMs = at - now;
  if (request.maxWaitMs !== undefined && waitMs > request.maxWaitMs)
    return {
      state: { ...state, limit, counts: { ...state.counts, fellBack: state.counts.fellBack + 1 } },
      answer: { taken: false, waitMs, epoch: state.epoch },
    };
  const perRequest = limit.requestsPerMinute ? 60_000 / limit.requestsPerMinute : 0;
  const perToken = limit.tokensPerMinute ? 60_000 / limit.tokensPerMinute : 0;
  const given = Object.fromEntries(Object.entries(state.given).filter(([, t]) => t > now - GIVEN_KEPT_MS));
  given[request.key] = at;
  return {
    state: {
      ...state,
      limit,
      requestsAt: Math.max(state.requestsAt, at) + perRequest,
      // Tokens are paced from the turn too: a big request pushes the next ones back by its size.
      tokensAt: Math.max(state.tokensAt, at) + perToken * request.tokens,
      given,
      counts: { ...state.counts, granted: state.counts.granted + 1, waitedMs: state.counts.waitedMs + waitMs },
    },
    answer: { taken: true, waitMs, at, epoch: state.epoch },
  };
}

/**
 * Gives each of several calls its turn, in order (one worker's calls, asked for together: one
 * Update for many calls keeps the governor's own load low however busy the fleet is).
 */
export function takeTurns(
  state: RateGovernorState,
  requests: readonly TurnRequest[],
  now: number,
): { state: RateGovernorState; answers: TurnAnswer[] } {
  const answers: TurnAnswer[] = [];
  let next = state;
  for (const request of requests) {
    const taken = takeTurn(next, request, now);
    next = taken.state;
    answers.push(taken.answer);
  }
  return { state: next, answers };
}

/**
 * A reply's real tokens: the tokens schedule moves by the difference from the estimate (a call
 * that wrote less gives back the rest, one that wrote more pushes the next ones back).
 */
export function settleTokens(state: RateGovernorState, estimated: number, actual: number): RateGovernorState {
  const perToken = state.limit.tokensPerMinute ? 60_000 / state.limit.tokensPerMinute : 0;
  if (perToken === 0 || actual === estimated) return state;
  return { ...state, tokensAt: state.tokensAt + perToken * (actual - estimated) };
}

/**
 * The provider answered 429: no call of the model goes before `until` (its Retry-After, or a
 * default). Turns given before are void (a new epoch): their callers, waiting for them, see the
 * epoch change when their wait ends and ask again, and the schedule starts afresh at `until`, so
 * the whole fleet's calls go after the pause, in order, at the limit.
 */
export function pauseFor429(state: RateGovernorState, until: number): RateGovernorState {
  const pausedUntil = Math.max(state.pausedUntil, until);
  return {
    ...state,
    pausedUntil,
    epoch: state.epoch + 1,
    requestsAt: pausedUntil,
    tokensAt: pausedUntil,
    given: {},
    counts: { ...state.counts, rateLimited: state.counts.rateLimited + 1 },
  };
}

/** How long a 429 without Retry-After pauses the model. */
export const DEFAULT_429_PAUSE_MS = 5_000;

/** What `rate-limits` status shows of a governor. */
export interface RateGovernorStatus {
  model: string;
  limit: RateLimit;
  /** How long a call asking now would wait (ms). */
  waitMs: number;
  pausedUntil?: string;
  /** Pauses so far (a turn given in an earlier epoch is void). */
  epoch: number;
  counts: RateGovernorState['counts'];
}

/** The governor as `status` reports it. */
export function rateGovernorStatus(state: RateGovernorState, now: number): RateGovernorStatus {
  return {
    model: state.model,
    limit: state.limit,
    waitMs: Math.max(0, Math.max(state.pausedUntil, state.requestsAt, state.tokensAt) - now),
    ...(state.pausedUntil > now ? { pausedUntil: new Date(state.pausedUntil).toISOString() } : {}),
    epoch: state.epoch,
    counts: state.counts,
  };
}
