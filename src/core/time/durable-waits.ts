import { formatDuration, parseDuration } from './duration';
import { toolErrorText } from '../messages/tool-results';
import type { ActiveWait, RunState } from '../state/run-state';
import type { ToolOutcome } from '../messages/tool-results';

/**
 * Durable waits as built-in tools: `sleep` (a workflow timer) and `wait_for_event` (a workflow
 * condition until an event of that name is delivered). The model sees them like any tool when a
 * run or agent names them; the workflow carries them out without an activity, holding no worker,
 * and they survive restarts. Pure: planning a call, validating events, the results the model reads.
 */

/** The built-in tool that sleeps durably (a workflow timer): `{ duration | until, reason }`. */
export const SLEEP = 'sleep';
/** The built-in tool that waits for an event delivered to the run: `{ name, timeout? }`. */
export const WAIT_FOR_EVENT = 'wait_for_event';

/** Names of the built-in durable waits, for agents' `tools` (`tools: [sleep, waitForEvent]`). */
export const sleep = SLEEP;
/** See {@link sleep}. */
export const waitForEvent = WAIT_FOR_EVENT;

/** The longest wait a run allows unless it sets `maxWait` (a sleep, or an event's timeout). */
export const DEFAULT_MAX_WAIT_MS = 30 * 24 * 60 * 60 * 1000;

/** The largest event payload accepted (as JSON): events are recorded in the workflow's history. */
export const MAX_EVENT_PAYLOAD_BYTES = 256 * 1024;

/** Events a run keeps before anything waits for them (oldest dropped first beyond it). */
export const MAX_BUFFERED_EVENTS = 100;

const EVENT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/** The descriptions and JSON Schemas the model is offered for the durable waits. */
export const DURABLE_WAIT_SPECS = {
  [SLEEP]: {
    description:
      'Pauses this task durably until a time, then continues (for example to follow up later). Give either a duration ("90s", "3h", "2d") or an ISO 8601 time to sleep until, and the reason.',
    parameters: {
      type: 'object',
      properties: {
        duration: { type: 'string', description: 'How long to sleep: "30s", "15m", "3h", "2d"' },
        until: { type: 'string', description: 'An ISO 8601 time to sleep until, e.g. 2026-12-01T09:00:00Z' },
        reason: { type: 'string', description: 'Why, in a few words (shown to people watching the run)' },
      },
      required: ['reason'],
      additionalProperties: false,
    },
  },
  [WAIT_FOR_EVENT]: {
    description:
      'Waits durably until an event of the given name is delivered to this task (a webhook, another system, a person), and returns its JSON payload. With a timeout, returns a note saying none arrived when it runs out.',
    parameters: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'The event name, e.g. payment_received' },
        timeout: {
          type: 'string',
          description: 'How long to wait at most: "30m", "3d" (default: the longest allowed)',
        },
      },
      required: ['name'],
      additionalProperties: false,
    },
  },
} as const;

/** A durable wait the workflow carries out for one tool call. */
export type WaitPlan =
  | { kind: 'sleep'; ms: number; until: string; reason: string }
  | { kind: 'event'; name: string; timeoutMs: number; until: string };

/** An event delivered to a run or conversation, as the workflow keeps it until a wait takes it. */
export interface DeliveredEvent {
  name: string;
  payload: unknown;
  /** When it arrived (ISO 8601, workflow time). */
  at: string;
  /** The id its sender gave it (a webhook's delivery id, `Idempotency-Key`): a second delivery under it is dropped. */
  id?: string;
}

/**
 * How many event ids a run or conversation remembers (conversations across continue-as-new): a
 * delivery repeating one of the last this many ids is acknowledged and dropped. Webhook senders
 * retry within hours, far fewer deliveries than this apart.
 */
export const REMEMBERED_EVENT_IDS = 1000;

/** Why an event id cannot be used (it must be 1-200 printable characters), or undefined. */
export function eventIdProblem(id: unknown): string | undefined {
  if (typeof id !== 'string' || id.length === 0 || id.length > 200 || !/^[\x21-\x7e]+$/.test(id))
    return `an event id must be 1 to 200 printable characters without spaces, not ${JSON.stringify(id)}`;
  return undefined;
}

/**
 * Receives an event: kept in the inbox unless its id is among the ids seen (a repeated delivery,
 * such as a webhook's retry, which is dropped). Returns the inbox and the ids seen after it.
 */
export function receiveEvent(
  inbox: readonly DeliveredEvent[],
  seenIds: readonly string[],
  event: DeliveredEvent,
): { inbox: DeliveredEvent[]; seenIds: string[]; duplicate: boolean } {
  if (event.id === undefined) return { inbox: withEvent(inbox, event), seenIds: [...seenIds], duplicate: false };
  if (seenIds.includes(event.id)) return { inbox: [...inbox], seenIds: [...seenIds], duplicate: true };
  const seen = [...seenIds, event.id];
  return {
    inbox: withEvent(inbox, event),
    seenIds: seen.length > REMEMBERED_EVENT_IDS ? seen.slice(seen.length - REMEMBERED_EVENT_IDS) : seen,
    duplicate: false,
  };
}

/**
 * Plans a call to a durable wait: the wait, or an error outcome the model can fix (a bad duration,
 * a time in the past that cannot be slept to, a wait longer than the run allows).
 */
export function planWait(
  tool: string,
  args: Record<string, unknown>,
  nowMs: number,
  maxWaitMs = DEFAULT_MAX_WAIT_MS,
): { plan: WaitPlan } | { resolved: ToolOutcome } {
  const fail = (message: string) => ({ resolved: { result: toolErrorText(`${tool}: ${message}`), error: true } });
  const limit = `at most ${formatDuration(maxWaitMs)} (the run's maxWait)`;
  if (tool === SLEEP) {
    const reason = typeof args.reason === 'string' && args.reason.trim() ? args.reason.trim().slice(0, 200) : 'sleep';
    let ms: number;
    if (typeof args.duration === 'string' || typeof args.duration === 'number') {
      try {
        ms = parseDuration(args.duration);
      } catch (err) {
        return fail(`${(err as Error).message}; give "duration" like "90s", "3h" or "2d"`);
      }
    } else if (typeof args.until === 'string') {
      const at = Date.parse(args.until);
      if (Number.isNaN(at)) return fail(`"until" must be an ISO 8601 time such as 2026-12-01T09:00:00Z`);
      ms = Math.max(0, at - nowMs);
    } else return fail('give "duration" (e.g. "3h") or "until" (an ISO 8601 time)');
    if (ms > maxWaitMs) return fail(`cannot sleep ${formatDuration(ms)}: sleeps may last ${limit}`);
    return { plan: { kind: 'sleep', ms, until: new Date(nowMs + ms).toISOString(), reason } };
  }
  const name = args.name;
  if (typeof name !== 'string' || !EVENT_NAME.test(name))
    return fail('"name" must be an event name: letters, digits, "_", ".", ":" or "-", up to 128 characters');
  let timeoutMs = maxWaitMs;
  if (args.timeout !== undefined) {
    try {
      timeoutMs = parseDuration(args.timeout as string);
    } catch (err) {
      return fail(`${(err as Error).message}; give "timeout" like "30m" or "3d"`);
    }
    if (timeoutMs > maxWaitMs) return fail(`cannot wait ${formatDuration(timeoutMs)}: waits may last ${limit}`);
  }
  return { plan: { kind: 'event', name, timeoutMs, until: new Date(nowMs + timeoutMs).toISOString() } };
}

/** Why an event cannot be delivered (a bad name, a payload too large or not JSON), or undefined. */
export function eventProblem(name: unknown, payload: unknown): string | undefined {
  if (typeof name !== 'string' || !EVENT_NAME.test(name))
    return `the event name must be letters, digits, "_", ".", ":" or "-" (up to 128 characters, starting with a letter or digit), not ${JSON.stringify(name)}`;
  let json: string | undefined;
  try {
    json = JSON.stringify(payload ?? null);
  } catch {
    return 'the event payload must be JSON';
  }
  const bytes = new TextEncoder().encode(json).length;
  if (bytes > MAX_EVENT_PAYLOAD_BYTES)
    return `the event payload is ${bytes} bytes, more than the ${MAX_EVENT_PAYLOAD_BYTES} an event may carry: send a reference (a URL, an id) instead`;
  return undefined;
}

/** The events with one more (the oldest dropped beyond {@link MAX_BUFFERED_EVENTS}). */
export function withEvent(inbox: readonly DeliveredEvent[], event: DeliveredEvent): DeliveredEvent[] {
  const next = [...inbox, event];
  return next.length > MAX_BUFFERED_EVENTS ? next.slice(next.length - MAX_BUFFERED_EVENTS) : next;
}

/** The first event of that name, and the inbox without it; undefined when none arrived. */
export function takeEvent(
  inbox: readonly DeliveredEvent[],
  name: string,
): { event: DeliveredEvent; rest: DeliveredEvent[] } | undefined {
  const i = inbox.findIndex((e) => e.name === name);
  if (i < 0) return undefined;
  return { event: inbox[i], rest: [...inbox.slice(0, i), ...inbox.slice(i + 1)] };
}

/** What the model reads when a wait ends: the event's payload as JSON, or that it elapsed or timed out. */
export function waitOutcome(plan: WaitPlan, event?: DeliveredEvent): ToolOutcome {
  if (plan.kind === 'sleep')
    return { result: `Slept ${formatDuration(plan.ms)}; it is now ${plan.until}.`, error: false };
  if (event) return { result: JSON.stringify(event.payload ?? null), value: event.payload ?? null, error: false };
  return {
    result: `No "${plan.name}" event arrived within ${formatDuration(plan.timeoutMs)} (timed out at ${plan.until}).`,
    error: false,
  };
}

/** The Temporal UI's summary of a wait's timer. */
export function waitSummary(plan: WaitPlan): string {
  return plan.kind === 'sleep'
    ? `sleep ${formatDuration(plan.ms)}: ${plan.reason}`
    : `wait for event ${plan.name} (up to ${formatDuration(plan.timeoutMs)})`;
}

/** The run with a wait under way (`status` shows it; `AgentStatus` is `waiting`). */
export function startWaiting(state: RunState, callId: string, plan: WaitPlan): RunState {
  const wait: ActiveWait =
    plan.kind === 'sleep'
      ? { callId, kind: 'sleep', reason: plan.reason, until: plan.until }
      : { callId, kind: 'event', name: plan.name, until: plan.until };
  return { ...state, waits: [...(state.waits ?? []).filter((w) => w.callId !== callId), wait] };
}

/** The run without that wait (and without `waits` once none is left, so its state keeps its shape). */
export function endWaiting(state: RunState, callId: string): RunState {
  const waits = (state.waits ?? []).filter((w) => w.callId !== callId);
  if (waits.length > 0) return { ...state, waits };
  const { waits: _waits, ...rest } = state;
  return rest;
}
