import { parseDuration } from '../time/duration';
import { validateAgentInput, workflowIdProblem } from '../run/run-input';
import { turnProblem, validateConversationOptions } from '../conversation/conversation';
import type { ConversationOptions } from '../conversation/conversation-state';
import type { AgentInput } from '../state/run-options';

/**
 * Schedules of agent runs and conversation turns, on Temporal Schedules: what a schedule request
 * may hold, checked before anything reaches the server, and the names the schedule and its runs
 * carry. Pure: the client turns a checked request into a Temporal schedule.
 */

/**
 * What a schedule does when its next time comes while the previous action still runs. `skip`
 * (the default) drops the new one; the others are Temporal's overlap policies by their own names.
 */
export const SCHEDULE_OVERLAPS = [
  'skip',
  'buffer_one',
  'buffer_all',
  'cancel_other',
  'terminate_other',
  'allow_all',
] as const;

/** See {@link SCHEDULE_OVERLAPS}. */
export type ScheduleOverlap = (typeof SCHEDULE_OVERLAPS)[number];

/** The shortest interval a schedule may have (shorter ones load a cluster with runs nobody reads). */
export const MIN_SCHEDULE_INTERVAL_MS = 1_000;

/** A schedule as clients ask for it: when, what, and how overlaps and missed times are handled. */
export interface AgentScheduleRequest {
  /** The schedule's id (a business name, e.g. `daily-digest`); its runs' workflow ids start with it. */
  scheduleId: string;
  /** An interval, e.g. `"4s"`, `"1h"`, `"1d"` (exactly one of `every` and `cron`). */
  every?: string;
  /** A cron expression, e.g. `"0 8 * * 1-5"` (minute hour day month weekday) or `"@daily"`. */
  cron?: string;
  /** The time zone cron times are in, e.g. `"Europe/Berlin"` (default UTC). */
  timezone?: string;
  /** The message each run starts with (each turn sends, with `conversationId`). */
  message: string;
  /** A named agent of the worker; shorthand for `options.agent`. */
  agent?: string;
  /** The tenant its runs and turns work for; shorthand for `options.tenant`. */
  tenant?: string;
  /**
   * The run's options (a conversation's, with `conversationId`: they apply when a scheduled turn
   * opens it; `tools` and `approvalTools` reach an open conversation with each turn).
   */
  options?: Omit<ConversationOptions, 'images'>;
  /**
   * Send each message to this conversation (opened when it is not), so a long-lived agent gets a
   * scheduled turn with its memory, instead of starting a one-shot run each time.
   */
  conversationId?: string;
  /** When the previous action still runs: `skip` (default) or another {@link ScheduleOverlap}. */
  overlap?: ScheduleOverlap;
  /** After an outage of the server, missed times within this window still run (default `"1m"`). */
  catchupWindow?: string;
  /**
   * Each time is moved later by a random amount up to this, e.g. `"5m"` (spreads load); at most
   * the interval with `every`, a day with `cron` (a week, month or year for `@weekly`, `@monthly`, `@yearly`).
   */
  jitter?: string;
  /** A note on the schedule, shown by `schedule describe` and the Temporal UI. */
  note?: string;
  /** Create it paused (unpause to start). */
  paused?: boolean;
}

/** What a schedule's memo records of its request, so lists show it as written. */
export interface ScheduleMemo {
  target: 'run' | 'conversation';
  message: string;
  agent?: string;
  tenant?: string;
  conversationId?: string;
  every?: string;
  cron?: string;
  timezone?: string;
}

/** The memo key under which a schedule records its {@link ScheduleMemo}. */
export const SCHEDULE_MEMO_KEY = 'durableAgents';

const CRON_KEYWORDS = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];
const CRON_FIELD = /^[0-9A-Za-z*,/?#-]+$/;

/** Why `cron` is not a cron expression Temporal takes, or undefined. The server checks the values. */
export function cronProblem(cron: string): string | undefined {
  const expr = cron.trim();
  if (!expr) return '"cron" must not be empty';
  if (expr.startsWith('@')) {
    if (CRON_KEYWORDS.includes(expr.toLowerCase()) || /^@every\s+\S+$/i.test(expr)) return undefined;
    return `"cron" "${expr}" is not one of ${CRON_KEYWORDS.join(', ')}`;
  }
  const fields = expr.split(/\s+/);
  if (fields.length < 5 || fields.length > 7 || !fields.every((f) => CRON_FIELD.test(f)))
    return `"cron" "${expr}" is not a cron expression: five fields, minute hour day-of-month month day-of-week (e.g. "0 8 * * 1-5" is 08:00 on weekdays)`;
  return undefined;
}

/**
 * The most a schedule's times may be moved (its `jitter`): its interval with `every`; with `cron`,
 * a day (a week, a month, a year for `@weekly`, `@monthly`, `@yearly`), since a later time
 * would pass the next one. Undefined when the schedule itself is invalid.
 */
function jitterBound(request: AgentScheduleRequest): { ms: number; says: string } | undefined {
  if (typeof request.every === 'string' && !durationProblem('every', request.every))
    return { ms: parseDuration(request.every), says: `the interval ("${request.every}")` };
  if (typeof request.cron !== 'string') return undefined;
  const day = 86_400_000;
  const keyword = request.cron.trim().toLowerCase();
  if (keyword === '@weekly') return { ms: 7 * day, says: 'a week for @weekly' };
  if (keyword === '@monthly') return { ms: 28 * day, says: '28 days for @monthly' };
  if (keyword === '@yearly' || keyword === '@annually') return { ms: 365 * day, says: 'a year for @yearly' };
  return { ms: day, says: 'a day with "cron"' };
}

/** What is wrong with a schedule request (every problem, for one error), or an empty list. */
export function scheduleRequestProblems(request: AgentScheduleRequest): string[] {
  const problems: string[] = [];
  const r = request as unknown as Record<string, unknown>;
  if (typeof r.scheduleId !== 'string') problems.push('"scheduleId" must be a string');
  else {
    const idProblem = workflowIdProblem(r.scheduleId, 'the schedule id');
    if (idProblem) problems.push(idProblem);
  }
  if ((request.every === undefined) === (request.cron === undefined))
    problems.push('give exactly one of "every" (e.g. "1h") and "cron" (e.g. "0 8 * * *")');
  if (request.every !== undefined) {
    const every = durationProblem('every', request.every);
    if (every) problems.push(every);
    else if (parseDuration(request.every) < MIN_SCHEDULE_INTERVAL_MS)
      problems.push(`"every" must be at least ${MIN_SCHEDULE_INTERVAL_MS / 1000}s, got "${request.every}"`);
  }
  if (request.cron !== undefined) {
    const cron = typeof request.cron === 'string' ? cronProblem(request.cron) : '"cron" must be a string';
    if (cron) problems.push(cron);
  }
  if (request.timezone !== undefined && (typeof request.timezone !== 'string' || !validTimeZone(request.timezone)))
    problems.push(
      `"timezone" must be an IANA time zone such as "Europe/Berlin", got ${JSON.stringify(request.timezone)}`,
    );
  for (const key of ['catchupWindow', 'jitter'] as const) {
    const problem = request[key] === undefined ? undefined : durationProblem(key, request[key]);
    if (problem) problems.push(problem);
    else if (key === 'jitter' && request.jitter !== undefined) {
      const bound = jitterBound(request);
      if (bound && parseDuration(request.jitter) > bound.ms)
        problems.push(`"jitter" must be at most ${bound.says}, got "${request.jitter}"`);
    }
  }
  if (request.overlap !== undefined && !SCHEDULE_OVERLAPS.includes(request.overlap))
    problems.push(`"overlap" must be one of ${SCHEDULE_OVERLAPS.join(', ')}, got ${JSON.stringify(request.overlap)}`);
  if (request.note !== undefined && typeof request.note !== 'string') problems.push('"note" must be a string');
  if (request.paused !== undefined && typeof request.paused !== 'boolean')
    problems.push('"paused" must be true or false');
  if (request.conversationId !== undefined) {
    const idProblem =
      typeof request.conversationId === 'string'
        ? workflowIdProblem(request.conversationId, 'the conversation id')
        : '"conversationId" must be a string';
    if (idProblem) problems.push(idProblem);
    const options = scheduledOptions(request);
    problems.push(...validateConversationOptions(options));
    const turn = turnProblem({ message: request.message }, undefined, false);
    if (turn) problems.push(turn);
  } else {
    const options = scheduledOptions(request) as Record<string, unknown>;
    for (const key of ['memoryWindow', 'idleTimeout'])
      if (options[key] !== undefined) problems.push(`"${key}" applies to conversations: give "conversationId" too`);
    const { memoryWindow: _m, idleTimeout: _i, ...runOptions } = options;
    problems.push(...validateAgentInput({ ...runOptions, message: request.message }));
  }
  return problems;
}

/** The run or conversation options of a request, `agent` folded in. */
export function scheduledOptions(request: AgentScheduleRequest): ConversationOptions {
  const options: ConversationOptions = { ...(request.options ?? {}) };
  if (request.agent !== undefined) options.agent = request.agent;
  if (request.tenant !== undefined) options.tenant = request.tenant;
  return options;
}

/** The input of each scheduled one-shot run. */
export function scheduledRunInput(request: AgentScheduleRequest): AgentInput {
  return { ...(scheduledOptions(request) as Omit<AgentInput, 'message'>), message: request.message };
}

/** The memo a schedule records of its request. */
export function scheduleMemo(request: AgentScheduleRequest): ScheduleMemo {
  const memo: ScheduleMemo = {
    target: request.conversationId === undefined ? 'run' : 'conversation',
    message: request.message,
  };
  const { agent, tenant } = scheduledOptions(request);
  if (agent !== undefined) memo.agent = agent;
  if (tenant !== undefined) memo.tenant = tenant;
  for (const key of ['conversationId', 'every', 'cron', 'timezone'] as const)
    if (request[key] !== undefined) memo[key] = request[key];
  return memo;
}

/**
 * The workflow id a schedule gives its actions; Temporal appends the time of each (`s1-run-2026-…`),
 * so a schedule's runs sort together and say where they came from.
 */
export function scheduledWorkflowIdPrefix(scheduleId: string, target: 'run' | 'conversation'): string {
  return `${scheduleId}-${target === 'run' ? 'run' : 'turn'}`;
}

function durationProblem(key: string, value: unknown): string | undefined {
  if (typeof value !== 'string') return `"${key}" must be a duration such as "30s" or "1h"`;
  try {
    parseDuration(value);
    return undefined;
  } catch (err) {
    return `"${key}": ${(err as Error).message}`;
  }
}

function validTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
