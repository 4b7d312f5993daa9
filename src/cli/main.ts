/**
 * The command line: reads the command table (`commands/index.ts`), parses the command's arguments
 * and runs it. Each command loads its own code when it runs, so `status` loads no worker code.
 * Exit codes: 0 done, 1 the run or turn failed, 2 bad usage, a refused request or
 * Temporal unreachable, 3 `--wait` ran out (the run goes on) or a message was queued for a
 * conversation that cannot answer now, 130 Ctrl+C while waiting.
 */
import { memoryTools } from '../core/facts/memory-tools';
import { workspaceTools } from '../core/workspace/workspace-tools';
import { READ_TOOL_OUTPUT } from '../core/messages/tool-results';
import { SLEEP, WAIT_FOR_EVENT } from '../core/time/durable-waits';
import { clientSettings, processEnv, type ClientSettings } from '../connection/settings';
import { ClientError } from '../client/client-error';
import { packageVersion } from '../connection/package-version';
import { mcpServersFromEnv } from '../tools/mcp-client/mcp-config';
import type { CommandIo } from './command';
import { findCommand } from './commands';
import { commandHelp, HELP_COMMANDS, overviewHelp, usageOf, wantsHelp } from './help';
import { takeTaskQueue, UsageError } from './option-flags';
import { mayRunLocalWorker, type CommandTarget, type LocalWorker } from './session';
import { commandName } from './command-name';
import { exitWhenFlushed } from './exit';

/** What the program that runs the command line brings (see {@link LocalWorker}). */
export interface CliHost {
  /** The agents to run in the command's process (a worker while the dev server is embedded, or `worker` and `serve`); the package's bin has none. */
  localWorker?: LocalWorker;
  /** What the environment says; default: `clientSettings()` of the process's environment, read once per command. */
  settings?: ClientSettings;
}

/** The process's own streams. */
const PROCESS_IO: CommandIo = {
  stdout: (text) => console.log(text),
  stderr: (line) => console.error(line),
  write: (text, toStderr) => (toStderr ? process.stderr : process.stdout).write(text),
  stdin: process.stdin,
};

/** Runs one command line and returns its exit code; failures people can act on are thrown. */
export async function main(argv: string[], host: CliHost = {}): Promise<number> {
  const [name, ...afterName] = argv;
  if (!name || name === '--help' || name === '-h' || (name === 'help' && afterName.length === 0)) {
    console.log(overviewHelp());
    return name ? 0 : 2;
  }
  if (name === 'help' || wantsHelp(afterName)) {
    const topic = name === 'help' ? afterName[0] : name;
    const page = commandHelp(topic);
    if (!page) throw new UsageError(`no command "${topic}" (the commands: ${HELP_COMMANDS.join(', ')})`);
    console.log(page);
    return 0;
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    console.log(packageVersion());
    return 0;
  }
  const command = findCommand(name);
  if (!command) throw new UsageError(`unknown command "${name}" (the commands: ${HELP_COMMANDS.join(', ')})`);
  if (command.talksToTemporal === false) {
    const env = host.settings?.env ?? processEnv();
    const parsed = await command.parse(afterName, { env });
    return command.run(parsed, {
      env,
      io: PROCESS_IO,
      get target(): CommandTarget {
        throw new Error(`${name} talks to no Temporal: it has no task queue or client settings`);
      },
    });
  }
  let settings: ClientSettings;
  try {
    settings = host.settings ?? clientSettings();
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { taskQueue = settings.taskQueue, rest } = takeTaskQueue(afterName);
  const target: CommandTarget = { taskQueue, settings, localWorker: host.localWorker };
  const { env } = settings;
  const parsed = await command.parse(rest, { env, settings, registered: registeredTools(host, settings) });
  // Ctrl+C is ours: it cancels a chat turn or stops waiting; the SDK must not stop the in-process
  // worker. A server sets up its own (its worker stops on Ctrl+C). A client of other workers opens
  // no worker connection, so it has no Runtime to set up (and loads none of the worker SDK).
  if (!command.server && mayRunLocalWorker(target)) {
    const { installRuntimeLogging } = await import('../telemetry/logging');
    installRuntimeLogging('ERROR', { ...settings.logging, handleSignals: false });
  }
  return command.run(parsed, { target, env, io: PROCESS_IO });
}

/**
 * The tools known in this process: a local worker's, when it runs here (never against
 * TEMPORAL_ADDRESS: the workers are elsewhere, with tools of their own); otherwise undefined, and
 * the worker checks them.
 */
function registeredTools(host: CliHost, settings: ClientSettings): string[] | undefined {
  if (!host.localWorker || settings.address) return undefined;
  let mcpServers: string[];
  try {
    mcpServers = Object.keys(host.localWorker.mcpServers ?? mcpServersFromEnv(settings.env));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return [
    ...(host.localWorker.registry?.names() ?? []),
    ...mcpServers.map((s) => `${s}__*`),
    READ_TOOL_OUTPUT,
    SLEEP,
    WAIT_FOR_EVENT,
    ...memoryTools,
    ...workspaceTools,
  ];
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
      // A server's failure names it (`durable-agents serve: port 8080 is in use ...`): its output is a log.
      const me = findCommand(argv[0] ?? '')?.server ? `${commandName()} ${argv[0]}` : commandName();
      console.error(
        err instanceof UsageError
          ? `${me}: ${message}\n${usageOf(argv[0] === 'help' ? undefined : argv[0])}`
          : `${me}: ${message}`,
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
