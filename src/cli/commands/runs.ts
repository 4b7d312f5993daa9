import { AGENT_SEARCH_STATUSES } from '../../core/run/search-attributes';
import { defineCommand } from '../command';
import { IMAGE_HELP, RUN_OPTION_HELP, WAIT_HELP } from '../option-flags';
import { parseRunArgs, RUN_USAGE } from '../parse-run-args';
import { parseScheduleArgs, runScheduleCommand, SCHEDULE_HELP, SCHEDULE_USAGE } from '../schedule-commands';
import { lazyCommand, JSON_HELP } from './conversation-kinds';

/** `run`: one agent run. */
export const runCommand = defineCommand({
  name: 'run',
  group: 'Runs',
  synopsis: 'run "<message>"',
  summary: 'run an agent once and print its answer',
  page: () => `${RUN_USAGE}

${RUN_OPTION_HELP}
${IMAGE_HELP}
  --id ID                workflow id (default: agent-<words>-<random>)
${WAIT_HELP}
${JSON_HELP}
  --events               print the run's events as JSON lines as they happen (text deltas, tool calls, ...)

  The answer streams to stdout as it is written, each step to stderr. The run is a workflow: it goes
  on when this command stops waiting, and status, history and cancel follow it by its id.`,
  parse: (args, { registered }) => parseRunArgs(args, registered),
  run: async (command, context) => (await import('../run-command')).runRunCommand(command, context),
});

/** `list`: runs and conversations. */
export const listCommand = lazyCommand('list', () => import('../conversation/list-command'), {
  group: 'Runs',
  synopsis: 'list',
  summary: 'runs and conversations, newest first',
  page: (
    me,
  ) => `usage: ${me} list [--status S] [--agent NAME] [--version AV] [--tenant T] [--query Q] [--limit 20] [--json]

  Lists runs and conversations, newest first (Temporal visibility; search attributes give the
  status and agent columns).
  --status S             one of ${AGENT_SEARCH_STATUSES.join(', ')}
  --agent NAME           only this agent's
  --version AV           only those its agent version answered (AgentVersion, as status shows it)
  --query "..."          any visibility query besides, e.g. "TemporalWorkerDeploymentVersion = 'shop:b2'"
  --limit N              at most N (default 20)
${JSON_HELP}`,
});

/** `schedule`: runs on Temporal Schedules. */
export const scheduleCommand = defineCommand({
  name: 'schedule',
  group: 'Runs',
  synopsis: 'schedule create|list|describe|pause|unpause|trigger|delete',
  summary: 'runs on Temporal Schedules',
  page: () => `${SCHEDULE_USAGE}

  Runs an agent on Temporal's clock (Temporal Schedules): every interval or at cron times, each
  time a new run of "<message>" with the run options below, or a turn sent to --conversation.
  Scheduled runs are ordinary runs (list, status, the Temporal UI: TemporalScheduledById='<id>');
  the server starts them, so no client needs to be up; a worker must poll the task queue.
  describe shows the next times and recent runs; trigger starts one now; delete stops new runs.

${SCHEDULE_HELP}
${RUN_OPTION_HELP}
  --note "..."           (pause) why it is paused
${JSON_HELP}`,
  parse: (args, { registered }) => parseScheduleArgs(args, registered),
  run: (command, { target, io }) => runScheduleCommand(command, target, io),
});

/** The commands of "Runs", in the overview's order. */
export const RUN_COMMANDS = [runCommand, listCommand, scheduleCommand];
