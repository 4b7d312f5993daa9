import {
  SCHEDULE_OVERLAPS,
  scheduleRequestProblems,
  type AgentScheduleRequest,
  type ScheduleOverlap,
} from '../core/schedules/schedules';
import { workflowIdProblem } from '../core/run/run-input';
import type { ConversationOptions } from '../core/conversation/conversation-state';
import {
  deleteSchedule,
  describeSchedule,
  listSchedules,
  pauseSchedule,
  scheduleAgent,
  triggerSchedule,
  unpauseSchedule,
  type AgentSchedule,
} from '../client/schedules';
import { liveWorkers } from '../client/task-queue-workers';
import { commandName, hintCommand } from './command-name';
import { duration, parseFlags, RUN_OPTION_FLAGS, runOptionsFromFlags, UsageError, wholeNumber } from './option-flags';
import { inSession, type CommandTarget } from './session';
import { tableText } from './table';

/** The usage lines of `schedule`. */
export const SCHEDULE_USAGE = `usage: ${commandName()} schedule create <id> (--every 4s | --cron "0 8 * * *" [--timezone Europe/Berlin]) [--conversation <id>] [options] "<message>" [--json]
       ${commandName()} schedule list [--json]
       ${commandName()} schedule describe|unpause|trigger|delete <id> [--json]
       ${commandName()} schedule pause <id> [--note "..."] [--json]`;

/** The `--help` lines of `schedule create`'s own flags. */
export const SCHEDULE_HELP = `  --every 1h             act at this interval (at least 1s)
  --cron "EXPR"          or at these times: minute hour day-of-month month day-of-week ("0 8 * * 1-5"
                         is 08:00 on weekdays), or @daily, @hourly, @weekly
  --timezone ZONE        the time zone of --cron times (default UTC), e.g. Europe/Berlin
  --conversation ID      send each message to this conversation (opened if needed), so the agent
                         keeps its memory between scheduled turns; default: a new run each time
  --overlap POLICY       when the previous run still runs: ${SCHEDULE_OVERLAPS.join(', ')} (default skip)
  --catchup-window 1m    after a server outage, missed times within this window still run (default 1m)
  --jitter 30s           start each run up to this much later, at random (spreads load)
  --note "..."           a note shown by schedule describe and the Temporal UI
  --paused               create it paused (schedule unpause starts it)
  --memory N, --idle-timeout 24h   with --conversation, as for send`;

/** A parsed `schedule` command. */
export type ScheduleCommand =
  | { action: 'create'; request: AgentScheduleRequest; json: boolean }
  | { action: 'list'; json: boolean }
  | { action: 'describe' | 'unpause' | 'trigger' | 'delete'; scheduleId: string; json: boolean }
  | { action: 'pause'; scheduleId: string; note?: string; json: boolean };

const ACTIONS = ['create', 'list', 'describe', 'pause', 'unpause', 'trigger', 'delete'] as const;
const JSON_FLAG = { json: { type: 'boolean', default: false } } as const;

/** Parses `schedule <action> ...`; every mistake is a {@link UsageError} before anything connects. */
export function parseScheduleArgs(argv: string[], registeredTools: readonly string[] | undefined): ScheduleCommand {
  const [action, ...rest] = argv;
  if (!action) throw new UsageError(`schedule needs an action: ${ACTIONS.join(', ')}`);
  if (!(ACTIONS as readonly string[]).includes(action))
    throw new UsageError(`unknown schedule action "${action}" (the actions: ${ACTIONS.join(', ')})`);
  if (action === 'create') return parseCreate(rest, registeredTools);
  if (action === 'list') {
    const { values, positionals } = parseFlags(rest, JSON_FLAG);
    if (positionals.length) throw new UsageError(`schedule list takes no arguments, got ${positionals.join(' ')}`);
    return { action, json: values.json ?? false };
  }
  const { values, positionals } = parseFlags(rest, {
    ...JSON_FLAG,
    ...(action === 'pause' ? { note: { type: 'string' } } : {}),
  });
  const scheduleId = scheduleIdArg(action, positionals);
  const note = (values as { note?: string }).note;
  if (action === 'pause') return { action, scheduleId, ...(note ? { note } : {}), json: values.json ?? false };
  return { action: action as 'describe', scheduleId, json: values.json ?? false };
}

function parseCreate(argv: string[], registeredTools: readonly string[] | undefined): ScheduleCommand {
  const { values, positionals } = parseFlags(argv, {
    ...RUN_OPTION_FLAGS,
    ...JSON_FLAG,
    every: { type: 'string' },
    cron: { type: 'string' },
    timezone: { type: 'string' },
    conversation: { type: 'string' },
    overlap: { type: 'string' },
    'catchup-window': { type: 'string' },
    jitter: { type: 'string' },
    note: { type: 'string' },
    paused: { type: 'boolean' },
    memory: { type: 'string' },
    'idle-timeout': { type: 'string' },
  });
  if (positionals.length !== 2)
    throw new UsageError(
      positionals.length < 2
        ? 'schedule create expects <id> and "<message>"'
        : `schedule create expects <id> and one message, got ${positionals.length} arguments (quote the message)`,
    );
  const [scheduleId, message] = positionals;
  const idProblem = workflowIdProblem(scheduleId, 'schedule create: <id>');
  if (idProblem) throw new UsageError(idProblem);
  if ((values.every === undefined) === (values.cron === undefined))
    throw new UsageError(
      'schedule create needs exactly one of --every (e.g. --every 1h) and --cron (e.g. --cron "0 8 * * *")',
    );
  if (values.timezone !== undefined && values.cron === undefined)
    throw new UsageError('--timezone applies to --cron times');
  const options: ConversationOptions = runOptionsFromFlags(values, registeredTools);
  if (values.memory !== undefined || values['idle-timeout'] !== undefined) {
    if (values.conversation === undefined) throw new UsageError('--memory and --idle-timeout need --conversation');
    if (values.memory !== undefined) options.memoryWindow = wholeNumber('--memory', values.memory, 3);
    if (values['idle-timeout'] !== undefined) options.idleTimeout = duration('--idle-timeout', values['idle-timeout']);
  }
  if (values.overlap !== undefined && !(SCHEDULE_OVERLAPS as readonly string[]).includes(values.overlap))
    throw new UsageError(`--overlap must be one of ${SCHEDULE_OVERLAPS.join(', ')}, got "${values.overlap}"`);
  const request: AgentScheduleRequest = { scheduleId, message };
  if (values.every !== undefined) request.every = duration('--every', values.every);
  if (values.cron !== undefined) request.cron = values.cron;
  if (values.timezone !== undefined) request.timezone = values.timezone;
  if (values.conversation !== undefined) request.conversationId = values.conversation;
  if (Object.keys(options).length) request.options = options;
  if (values.overlap !== undefined) request.overlap = values.overlap as ScheduleOverlap;
  if (values['catchup-window'] !== undefined)
    request.catchupWindow = duration('--catchup-window', values['catchup-window']);
  if (values.jitter !== undefined) request.jitter = duration('--jitter', values.jitter);
  if (values.note !== undefined) request.note = values.note;
  if (values.paused) request.paused = true;
  const problems = scheduleRequestProblems(request);
  if (problems.length)
    throw new UsageError(
      problems
        .join('; ')
        .replace(/"every"/g, '--every')
        .replace(/"cron"/g, '--cron'),
    );
  return { action: 'create', request, json: values.json ?? false };
}

function scheduleIdArg(action: string, positionals: string[]): string {
  if (positionals.length !== 1)
    throw new UsageError(
      `schedule ${action} expects <id>, got ${positionals.length === 0 ? 'none' : positionals.map((p) => JSON.stringify(p)).join(' ')}`,
    );
  const problem = workflowIdProblem(positionals[0], `schedule ${action}: <id>`);
  if (problem) throw new UsageError(problem);
  return positionals[0];
}

/** Runs a `schedule` command and returns its exit code; failures people can act on throw a `ClientError`. */
export async function runScheduleCommand(
  cmd: ScheduleCommand,
  target: CommandTarget,
  io: { stdout: (text: string) => void; stderr: (line: string) => void },
): Promise<number> {
  const { taskQueue } = target;
  const print = (json: unknown, text: string) => io.stdout(cmd.json ? JSON.stringify(json) : text);
  // A schedule lives in the server; its runs need a worker there, not in this (short) process.
  return inSession(
    { ...target, serve: false, note: (line) => (cmd.json ? undefined : io.stderr(line)) },
    async (session) => {
      const { client } = session;
      switch (cmd.action) {
        case 'create': {
          const created = await scheduleAgent(client, cmd.request, { taskQueue });
          print(created, `Created schedule ${created.scheduleId}\n${scheduleText(created)}`);
          if (session.mode === 'embedded-started')
            io.stderr(
              `Note: the dev server this command started stops when it ends; the schedule acts while a dev server with this data runs (npm start, or ${hintCommand()} with your worker).`,
            );
          else if ((await liveWorkers(client, taskQueue).catch(() => ['?'])).length === 0)
            io.stderr(
              `Note: no worker polls task queue "${taskQueue}" yet; the scheduled runs wait until one does (start your worker).`,
            );
          return 0;
        }
        case 'list': {
          const schedules = await listSchedules(client);
          print(schedules, schedulesText(schedules));
          return 0;
        }
        case 'describe': {
          const s = await describeSchedule(client, cmd.scheduleId);
          print(s, scheduleText(s));
          return 0;
        }
        case 'pause': {
          const s = await pauseSchedule(client, cmd.scheduleId, cmd.note);
          print(s, `Paused ${s.scheduleId}; ${hintCommand()} schedule unpause ${s.scheduleId} resumes it`);
          return 0;
        }
        case 'unpause': {
          const s = await unpauseSchedule(client, cmd.scheduleId);
          print(s, `Unpaused ${s.scheduleId}${s.nextRuns[0] ? `; next run ${s.nextRuns[0]}` : ''}`);
          return 0;
        }
        case 'trigger': {
          const r = await triggerSchedule(client, cmd.scheduleId);
          print(r, `Triggered ${r.scheduleId}: one run starts now`);
          return 0;
        }
        case 'delete': {
          const r = await deleteSchedule(client, cmd.scheduleId);
          print(r, `Deleted ${r.scheduleId}; runs it started go on`);
          return 0;
        }
      }
    },
  );
}

/** The schedules as a table. */
export function schedulesText(schedules: readonly AgentSchedule[]): string {
  if (schedules.length === 0)
    return `No schedules; create one with: ${hintCommand()} schedule create <id> --every 1h "<message>"`;
  const rows = schedules.map((s) => [
    s.scheduleId,
    whenText(s),
    s.paused ? 'paused' : 'active',
    s.target === 'conversation' ? `conversation ${s.conversationId}` : (s.agent ?? '-'),
    s.nextRuns[0]?.replace('T', ' ').slice(0, 19) ?? '-',
    s.recentRuns.at(-1)?.workflowId ?? '-',
  ]);
  const header = ['ID', 'WHEN', 'STATE', 'AGENT / TARGET', 'NEXT (UTC)', 'LAST RUN'];
  return tableText(header, rows);
}

/** One schedule, as `schedule describe` prints it. */
export function scheduleText(s: AgentSchedule): string {
  const lines = [
    `${s.scheduleId}: ${whenText(s)}, ${s.paused ? 'paused' : 'active'}${s.note ? ` (${s.note})` : ''}`,
    s.target === 'conversation'
      ? `  sends to conversation ${s.conversationId}: ${JSON.stringify(s.message ?? '')}`
      : `  starts a run${s.agent ? ` of ${s.agent}` : ''}: ${JSON.stringify(s.message ?? '')}`,
  ];
  if (s.overlap)
    lines.push(`  overlap ${s.overlap}; catch-up window ${s.catchupWindow}${s.jitter ? `; jitter ${s.jitter}` : ''}`);
  if (s.nextRuns.length) lines.push(`  next: ${s.nextRuns.slice(0, 3).join(', ')}`);
  if (s.actionsTaken !== undefined)
    lines.push(
      `  runs started: ${s.actionsTaken}${s.skippedOverlaps ? ` (${s.skippedOverlaps} skipped: the previous still ran)` : ''}`,
    );
  for (const r of s.recentRuns.slice(-5)) lines.push(`  ${r.startedAt}  ${r.workflowId}`);
  if (s.running?.length) lines.push(`  running now: ${s.running.join(', ')}`);
  return lines.join('\n');
}

function whenText(s: AgentSchedule): string {
  if (s.every) return `every ${s.every}`;
  if (s.cron) return `cron "${s.cron}"${s.timezone ? ` ${s.timezone}` : ''}`;
  return '-';
}
