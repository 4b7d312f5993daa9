import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  type Client,
  type ScheduleDescription,
  type ScheduleOptions,
  type ScheduleSummary,
} from '@temporalio/client';
import { formatDuration } from '../core/time/duration';
import { runSummary } from '../core/context/summaries';
import {
  SCHEDULE_MEMO_KEY,
  scheduledOptions,
  scheduledRunInput,
  scheduledWorkflowIdPrefix,
  scheduleMemo,
  scheduleRequestProblems,
  type AgentScheduleRequest,
  type ScheduleMemo,
  type ScheduleOverlap,
} from '../core/schedules/schedules';
import { AGENT_WORKFLOW_TYPE, SCHEDULED_TURN_WORKFLOW_TYPE } from '../contracts/definitions';
import type { ScheduledTurnInput } from '../contracts/activity-interface';
import { tenantStartOptions } from './tenant-scope';
import { ClientError } from './client-error';
import { describeKind, lookupWorkflow } from './workflow-lookup';

/**
 * Agents on Temporal's clock: schedules of agent runs (or of turns in one conversation) on
 * Temporal Schedules, so the server starts each run on time, whether or not any client is up,
 * and the Temporal UI lists them. Each scheduled run is an ordinary run: its search attributes,
 * events and `list --agent` work as for any other (Temporal adds `TemporalScheduledById`).
 */

/** Where a schedule's runs run. */
export interface ScheduleAgentOptions {
  /** The task queue the agents' worker polls. */
  taskQueue: string;
}

/** A schedule as the CLI, HTTP API and library show it. */
export interface AgentSchedule {
  scheduleId: string;
  /** Each action starts a one-shot run, or sends a turn to `conversationId`. */
  target: 'run' | 'conversation';
  message?: string;
  agent?: string;
  /** The tenant its runs and turns work for. */
  tenant?: string;
  conversationId?: string;
  /** As given: `every`, or `cron` (and its `timezone`). */
  every?: string;
  cron?: string;
  timezone?: string;
  paused: boolean;
  note?: string;
  /** The next times it will act (ISO 8601). */
  nextRuns: string[];
  /** The latest actions, oldest first: the workflow each started, and when. */
  recentRuns: { workflowId: string; scheduledAt: string; startedAt: string }[];
  /** Only from {@link describeSchedule}: */
  overlap?: ScheduleOverlap;
  catchupWindow?: string;
  jitter?: string;
  /** Workflows it started that still run. */
  running?: string[];
  actionsTaken?: number;
  /** Times skipped because the previous action still ran (`overlap: 'skip'`). */
  skippedOverlaps?: number;
  createdAt?: string;
}

/**
 * Creates a schedule: every `every` (or at each `cron` time) it starts a run of `message` with the
 * request's options, or sends `message` to `conversationId`. The request is checked first (a
 * {@link ClientError} of kind `invalid` names every problem; nothing is created); an id that is
 * taken is `already_running`. Overlaps are skipped unless `overlap` says otherwise.
 */
export async function scheduleAgent(
  client: Client,
  request: AgentScheduleRequest,
  options: ScheduleAgentOptions,
): Promise<AgentSchedule> {
  const problems = scheduleRequestProblems(request);
  if (problems.length) throw new ClientError('invalid', problems.join('; '));
  if (request.conversationId !== undefined) {
    // Each firing would be refused by the workflow: say so now, not at every firing.
    const found = await lookupWorkflow(client, request.conversationId);
    if (found && found.kind !== 'conversation')
      throw new ClientError(
        'wrong_kind',
        `"${request.conversationId}" is ${describeKind(found)}, not a conversation: give a conversation id (a new one opens at the first firing)`,
        request.conversationId,
      );
  }
  const memo = scheduleMemo(request);
  // The SDK's schedule action type leaves out `priority`, which its encoder sends (SDK 1.24): cast.
  const tenant = tenantStartOptions({ tenant: memo.tenant }) as Record<string, unknown>;
  const workflowId = scheduledWorkflowIdPrefix(request.scheduleId, memo.target);
  const action: ScheduleOptions['action'] =
    request.conversationId === undefined
      ? {
          type: 'startWorkflow',
          workflowType: AGENT_WORKFLOW_TYPE,
          taskQueue: options.taskQueue,
          workflowId,
          args: [scheduledRunInput(request)],
          staticSummary: runSummary(request.message),
          ...tenant,
        }
      : {
          type: 'startWorkflow',
          workflowType: SCHEDULED_TURN_WORKFLOW_TYPE,
          taskQueue: options.taskQueue,
          workflowId,
          args: [scheduledTurn(request)],
          staticSummary: `Scheduled message to ${request.conversationId}: ${runSummary(request.message)}`,
          ...tenant,
        };
  const spec: ScheduleOptions['spec'] =
    request.every !== undefined
      ? { intervals: [{ every: request.every as `${number}s` }] }
      : { cronExpressions: [request.cron!.trim()], ...(request.timezone ? { timezone: request.timezone } : {}) };
  if (request.jitter !== undefined) spec.jitter = request.jitter as `${number}s`;
  try {
    await client.schedule.create({
      scheduleId: request.scheduleId,
      spec,
      action,
      policies: {
        overlap: (request.overlap ?? 'skip').toUpperCase() as Uppercase<ScheduleOverlap>,
        // Temporal's own default is a year: a server down for a day would start every missed run at once.
        catchupWindow: (request.catchupWindow ?? DEFAULT_CATCHUP_WINDOW) as `${number}s`,
      },
      memo: { [SCHEDULE_MEMO_KEY]: memo },
      state: {
        ...(request.paused ? { paused: true } : {}),
        ...(request.note !== undefined ? { note: request.note } : {}),
      },
    });
  } catch (err) {
    if (err instanceof ScheduleAlreadyRunning)
      throw new ClientError(
        'already_running',
        `a schedule with id "${request.scheduleId}" exists; choose another id, or delete it first`,
      );
    throw invalidFromServer(err, request);
  }
  return describeSchedule(client, request.scheduleId);
}

/** How long after a missed time (a server outage) a schedule still acts on it, unless the request says. */
const DEFAULT_CATCHUP_WINDOW = '1m';

/** The schedules of agent runs and conversation turns, by id (other schedules of the namespace are left out). */
export async function listSchedules(client: Client, options: { limit?: number } = {}): Promise<AgentSchedule[]> {
  const limit = options.limit ?? 100;
  const found: AgentSchedule[] = [];
  for await (const s of client.schedule.list()) {
    if (!isAgentSchedule(s)) continue;
    found.push(fromSummary(s));
    if (found.length >= limit) break;
  }
  return found.sort((a, b) => a.scheduleId.localeCompare(b.scheduleId));
}

/** One schedule in full: its policies, its next times, the runs it started. `not_found` when there is none. */
export async function describeSchedule(client: Client, scheduleId: string): Promise<AgentSchedule> {
  let d: ScheduleDescription;
  try {
    d = await client.schedule.getHandle(scheduleId).describe();
  } catch (err) {
    throw notFound(err, scheduleId);
  }
  const s = fromSummary(d);
  s.overlap = (d.policies.overlap?.toLowerCase() ?? 'skip') as ScheduleOverlap;
  s.catchupWindow = formatDuration(d.policies.catchupWindow);
  if (d.spec.jitter) s.jitter = formatDuration(d.spec.jitter);
  s.running = d.info.runningActions.map((a) => a.workflow.workflowId);
  s.actionsTaken = d.info.numActionsTaken;
  s.skippedOverlaps = d.info.numActionsSkippedOverlap;
  s.createdAt = d.info.createdAt.toISOString();
  return s;
}

/** Pauses a schedule (no run starts until it is unpaused); `note` says why. */
export async function pauseSchedule(client: Client, scheduleId: string, note?: string): Promise<AgentSchedule> {
  await onHandle(client, scheduleId, (h) => h.pause(note ?? 'paused by durable-agents'));
  return describeSchedule(client, scheduleId);
}

/** Unpauses a schedule. */
export async function unpauseSchedule(client: Client, scheduleId: string, note?: string): Promise<AgentSchedule> {
  await onHandle(client, scheduleId, (h) => h.unpause(note ?? 'unpaused by durable-agents'));
  return describeSchedule(client, scheduleId);
}

/**
 * Starts one action now, whatever the schedule's times (paused schedules too), under its overlap
 * policy unless `overlap` says otherwise.
 */
export async function triggerSchedule(
  client: Client,
  scheduleId: string,
  overlap?: ScheduleOverlap,
): Promise<{ scheduleId: string; triggered: true }> {
  await onHandle(client, scheduleId, (h) =>
    h.trigger(overlap ? (overlap.toUpperCase() as Uppercase<ScheduleOverlap>) : undefined),
  );
  return { scheduleId, triggered: true };
}

/** Deletes a schedule: no more runs start; those it started go on. */
export async function deleteSchedule(
  client: Client,
  scheduleId: string,
): Promise<{ scheduleId: string; deleted: true }> {
  await onHandle(client, scheduleId, (h) => h.delete());
  return { scheduleId, deleted: true };
}

function scheduledTurn(request: AgentScheduleRequest): ScheduledTurnInput {
  const options = scheduledOptions(request);
  const turn: ScheduledTurnInput['turn'] = { message: request.message };
  // Tools and approval tools reach an open conversation with each message, as `send` does.
  if (options.tools) turn.tools = options.tools;
  if (options.approvalTools) turn.approvalTools = options.approvalTools;
  return { conversationId: request.conversationId!, turn, options };
}

function memoOf(s: { memo?: Record<string, unknown> }): ScheduleMemo | undefined {
  const memo = s.memo?.[SCHEDULE_MEMO_KEY];
  return memo && typeof memo === 'object' ? (memo as ScheduleMemo) : undefined;
}

function isAgentSchedule(s: ScheduleSummary): boolean {
  const type = s.action?.workflowType;
  return memoOf(s) !== undefined || type === AGENT_WORKFLOW_TYPE || type === SCHEDULED_TURN_WORKFLOW_TYPE;
}

function fromSummary(s: ScheduleSummary | ScheduleDescription): AgentSchedule {
  const memo = memoOf(s);
  const target = memo?.target ?? (s.action?.workflowType === SCHEDULED_TURN_WORKFLOW_TYPE ? 'conversation' : 'run');
  const out: AgentSchedule = {
    scheduleId: s.scheduleId,
    target,
    paused: s.state.paused,
    nextRuns: s.info.nextActionTimes.map((t) => t.toISOString()),
    recentRuns: s.info.recentActions.map((a) => ({
      workflowId: a.action.workflow.workflowId,
      scheduledAt: a.scheduledAt.toISOString(),
      startedAt: a.takenAt.toISOString(),
    })),
  };
  if (memo) {
    for (const key of ['message', 'agent', 'tenant', 'conversationId', 'every', 'cron', 'timezone'] as const)
      if (memo[key] !== undefined) out[key] = memo[key];
  } else if (s.spec?.intervals?.length) out.every = formatDuration(s.spec.intervals[0].every);
  if (s.state.note) out.note = s.state.note;
  return out;
}

async function onHandle(
  client: Client,
  scheduleId: string,
  act: (h: ReturnType<Client['schedule']['getHandle']>) => Promise<unknown>,
): Promise<void> {
  try {
    await act(client.schedule.getHandle(scheduleId));
  } catch (err) {
    throw notFound(err, scheduleId);
  }
}

function notFound(err: unknown, scheduleId: string): unknown {
  if (err instanceof ScheduleNotFoundError || /not found/i.test((err as Error)?.message ?? ''))
    return new ClientError('not_found', `no schedule "${scheduleId}" exists (schedule list shows them)`);
  return err;
}

/**
 * The server refuses a spec it cannot read (a cron value out of range): a clear `invalid` that
 * names the field, not a crash. The SDK reports it as a TypeError, or with the gRPC code (3,
 * INVALID_ARGUMENT) and the server's reason on its cause.
 */
function invalidFromServer(err: unknown, request: AgentScheduleRequest): unknown {
  const message = (err as Error)?.message ?? '';
  const cause = (err as { cause?: { code?: number; details?: string } }).cause;
  const refused =
    err instanceof TypeError ||
    /invalid|INVALID_ARGUMENT/i.test(message) ||
    (err as { code?: number }).code === 3 ||
    cause?.code === 3;
  if (!refused) return err;
  const what = request.cron !== undefined ? `cron "${request.cron}"` : 'the schedule';
  return new ClientError('invalid', `Temporal refused ${what}: ${cause?.details ?? message}`);
}
