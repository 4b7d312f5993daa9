/**
 * The command-line client: one agent run, an interactive chat, and commands on conversations
 * and runs; `mcp` serves the agents as an MCP server.
 * Exit codes: 0 done, 1 the run or turn failed, 2 bad usage, a refused request or
 * Temporal unreachable, 3 `--wait` ran out (the run goes on) or a message was queued for a
 * conversation that cannot answer now, 130 Ctrl+C while waiting.
 */
import { isConversationCommand, parseConversationArgs } from './parse-conversation-args';
import { commandHelp, HELP_COMMANDS, overviewHelp, usageOf, wantsHelp } from './help';
import { runConversationCommand } from './conversation-commands';
import { parseScheduleArgs, runScheduleCommand } from './schedule-commands';
import { parseReplayArgs, runReplayCommand } from './replay-command';
import { parseDeployArgs, runDeployCommand } from './deploy-command';
import { parseEvalArgs, runEvalCommand } from './eval-command';
import { parseRerunArgs, runRerunCommand } from './rerun-command';
import { outcomeJson } from '../client/outcome-json';
import { outcomeText } from './format-outcome';
import { parseFlags, takeTaskQueue } from './option-flags';
import { parseRunArgs, UsageError } from './parse-run-args';
import { TASK_QUEUE_HINT, type CommandTarget, type LocalWorker } from './session';
import { runFromCommandLine } from './run-flow';
import { readImageArguments } from './image-arguments';
import { EventPrinter } from './event-printer';
import { READ_TOOL_OUTPUT, SLEEP, WAIT_FOR_EVENT, type AgentEvent } from '../core';
import { clientSettings, type ClientSettings } from '../connection/settings';
import { ClientError } from '../client/client-error';
import { installRuntimeLogging } from '../telemetry/logging';
import { installTemporalCli } from '../connection/temporal-cli';
import { mcpServersFromEnv } from '../tools/mcp/mcp-config';
import { commandName } from './command-name';
import { packageVersion } from '../connection/package-version';
import { exitWhenFlushed } from './exit';

/** What the program that runs the command line brings (see {@link LocalWorker}). */
export interface CliHost {
  /** A worker to run in the command's process while the dev server is embedded; the package's bin has none. */
  localWorker?: LocalWorker;
  /** What the environment says; default: `clientSettings()` of the process's environment, read once per command. */
  settings?: ClientSettings;
}

/** Runs one command line and returns its exit code; failures people can act on are thrown. */
export async function main(argv: string[], host: CliHost = {}): Promise<number> {
  const [command, ...afterCommand] = argv;
  if (!command || command === '--help' || command === '-h' || (command === 'help' && afterCommand.length === 0)) {
    console.log(overviewHelp());
    return command ? 0 : 2;
  }
  if (command === 'help' || wantsHelp(afterCommand)) {
    const topic = command === 'help' ? afterCommand[0] : command;
    const page = commandHelp(topic);
    if (!page) throw new UsageError(`no command "${topic}" (the commands: ${HELP_COMMANDS.join(', ')})`);
    console.log(page);
    return 0;
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    console.log(packageVersion());
    return 0;
  }
  let settings: ClientSettings;
  try {
    settings = host.settings ?? clientSettings();
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (command === 'install-temporal') return installTemporal(afterCommand, settings.env);
  const { taskQueue = settings.taskQueue, rest } = takeTaskQueue(afterCommand);
  const target: CommandTarget = { taskQueue, settings, localWorker: host.localWorker };
  // The tools are known here only when a worker runs in this process (never against TEMPORAL_ADDRESS:
  // the workers are elsewhere, with tools of their own); otherwise the worker checks them.
  let registered: string[] | undefined;
  if (host.localWorker && !settings.address) {
    let mcpServers: string[];
    try {
      mcpServers = Object.keys(host.localWorker.mcpServers ?? mcpServersFromEnv(settings.env));
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    registered = [
      ...(host.localWorker.registry?.names() ?? []),
      ...mcpServers.map((s) => `${s}__*`),
      READ_TOOL_OUTPUT,
      SLEEP,
      WAIT_FOR_EVENT,
    ];
  }
  // Ctrl+C is ours: it cancels a chat turn or stops waiting; the SDK must not stop the in-process worker.
  const logging = () => installRuntimeLogging('ERROR', { ...settings.logging, handleSignals: false });
  const io = { stdout: (text: string) => console.log(text), stderr: (line: string) => console.error(line) };
  if (isConversationCommand(command)) {
    const cmd = parseConversationArgs(command, rest, registered);
    logging();
    return runConversationCommand(cmd, target, {
      ...io,
      stdin: process.stdin,
      write: (text, toStderr) => (toStderr ? process.stderr : process.stdout).write(text),
    });
  }
  if (command === 'rerun') {
    const cmd = parseRerunArgs(rest);
    logging();
    return runRerunCommand(cmd, target, io);
  }
  if (command === 'eval') {
    const cmd = parseEvalArgs(rest, registered);
    logging();
    return runEvalCommand(cmd, target, io);
  }
  if (command === 'replay') {
    const cmd = parseReplayArgs(rest, settings.env);
    logging();
    return runReplayCommand(cmd, target, io);
  }
  if (command === 'deploy') {
    const cmd = parseDeployArgs(rest, settings.env);
    logging();
    return runDeployCommand(cmd, target, io);
  }
  if (command === 'schedule') {
    const cmd = parseScheduleArgs(rest, registered);
    logging();
    return runScheduleCommand(cmd, target, io);
  }
  if (command !== 'run')
    throw new UsageError(`unknown command "${command}" (the commands: ${HELP_COMMANDS.join(', ')})`);
  const { input, workflowId, waitMs, json, events, images } = parseRunArgs(rest, registered);
  // The run's outcome says what failed; the SDK's per-attempt warnings would only repeat it.
  logging();
  const note = (line: string) => process.stderr.write(`${line}\n`);
  // Text mode shows the answer as it is written (stdout) and each step (stderr); --events prints every event.
  const printer = json || events ? undefined : new EventPrinter({ text: (text) => process.stdout.write(text), note });
  const onEvent = events
    ? (e: AgentEvent) => console.log(JSON.stringify(e))
    : printer
      ? (e: AgentEvent) => printer.show(e)
      : undefined;
  const r = await runFromCommandLine({
    input,
    images: await readImageArguments(images),
    workflowId,
    waitMs,
    ...target,
    note: json || events ? () => undefined : note,
    alert: note,
    onEvent,
  });
  if ('outcome' in r) {
    printer?.endLine();
    if (json) console.log(JSON.stringify(outcomeJson(r.outcome)));
    else if (!events) console.log(outcomeText(r.outcome, r.uiLink, { answerShown: printer?.answerShown ?? false }));
    if (r.outcome.status === 'failed' && r.outcome.errorType === 'Agent.UnknownAgent')
      note(`Is the agent's worker on another task queue? Pick it with ${TASK_QUEUE_HINT}.`);
    return r.outcome.status === 'failed' ? 1 : 0;
  }
  note(r.followUp);
  if (json)
    console.log(
      JSON.stringify({
        workflowId: r.workflowId,
        status: 'running',
        error: r.followUp,
        errorType: 'Client.StillRunning',
      }),
    );
  return r.stoppedWaiting === 'interrupted' ? 130 : 3;
}

/** `install-temporal [--dir DIR]`: the Temporal CLI for the embedded dev server, on request. */
function installTemporal(argv: string[], env: NodeJS.ProcessEnv): number {
  const { values, positionals } = parseFlags(argv, { dir: { type: 'string' } });
  if (positionals.length) throw new UsageError(`install-temporal takes no arguments, got ${positionals.join(' ')}`);
  installTemporalCli({ dir: values.dir, log: (line) => console.log(line), env });
  console.log('The embedded dev server finds it there when run from this directory (or set TEMPORAL_CLI_PATH to it).');
  return 0;
}

/** The `errorType` of a failure that ended the command. */
function errorType(err: unknown): string {
  if (err instanceof UsageError) return 'Client.Usage';
  if (err instanceof ClientError) return err.errorType;
  return 'Client.Error';
}

/**
 * The command-line program: runs `process.argv`, prints failures (one JSON object under
 * `--json`) and exits with the command's code. `client.ts` and the `durable-agents` bin call it.
 */
export function runMain(argv: string[] = process.argv.slice(2), host: CliHost = {}): void {
  main(argv, host).then(
    (code) => exitWhenFlushed(code),
    (err) => {
      const message = err instanceof Error ? err.message : String(err);
      console.error(
        err instanceof UsageError
          ? `${commandName()}: ${message}\n${usageOf(argv[0] === 'help' ? undefined : argv[0])}`
          : `${commandName()}: ${message}`,
      );
      // What the server knows of a workflow that cannot answer (its status and search attributes).
      const lastKnown = err instanceof ClientError ? err.lastKnown : undefined;
      if (lastKnown)
        console.error(
          `Last known: ${Object.entries(lastKnown)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')}`,
        );
      // Under --json, stdout always holds exactly one JSON object, errors included.
      if (argv.includes('--json'))
        console.log(JSON.stringify({ error: message, errorType: errorType(err), ...(lastKnown ? { lastKnown } : {}) }));
      // A message queued durably, or a wait that ran out (drain-wait), is not a failure: it goes on, as after --wait.
      exitWhenFlushed(err instanceof ClientError && (err.kind === 'queued' || err.kind === 'still_running') ? 3 : 2);
    },
  );
}
