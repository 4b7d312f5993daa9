import { COMMAND_GROUPS } from './command';
import { commandName } from './command-name';
import { COMMANDS, findCommand } from './commands';
import { TASK_QUEUE_HELP } from './option-flags';

/**
 * The command line's help, read from the command table: a short overview (`--help`) and a page
 * per command (`help <command>`, or `<command> --help`). docs/cli.md is the long form.
 */

const EXIT_CODES = `Exit codes: 0 done, 1 the run or turn failed, 2 bad usage, a refused request, Temporal unreachable or no
worker on the task queue, 3 --wait ran out, 130 Ctrl+C while waiting (in both cases the run goes on in Temporal).`;

/** Every command, by name, as the table lists them. */
export const HELP_COMMANDS: readonly string[] = COMMANDS.map((c) => c.name);

/** The overview: what each command does, and where the details are. */
export function overviewHelp(): string {
  const me = commandName();
  const width = Math.max(...COMMANDS.map((c) => c.synopsis.length)) + 2;
  const groups = COMMAND_GROUPS.map((group) =>
    [
      `${group}:`,
      ...COMMANDS.filter((c) => c.group === group).map((c) => `  ${c.synopsis.padEnd(width)}${c.summary}`),
    ].join('\n'),
  );
  return `${me}: run tool-calling AI agents as durable Temporal workflows

usage: ${me} <command> [options]    ${me} help <command>: a command's page    ${me} --version

${groups.join('\n\n')}

Every command that talks to Temporal takes --task-queue NAME (default AGENT_TASK_QUEUE, else agents) and TEMPORAL_* settings.

${EXIT_CODES}`;
}

/** The page of one command, or undefined for an unknown one. */
export function commandHelp(name: string): string | undefined {
  const command = findCommand(name);
  if (!command) return undefined;
  const me = commandName();
  const taskQueue = command.talksToTemporal === false ? '' : `\n${TASK_QUEUE_HELP}`;
  return `${me} ${name}: ${command.summary}\n\n${command.page(me)}${taskQueue}`;
}

/** The usage line(s) of a command, for a usage error; the overview's usage line for anything else. */
export function usageOf(name: string | undefined): string {
  const command = name ? findCommand(name) : undefined;
  const usage = command ? command.page(commandName()).split('\n\n')[0] : `usage: ${commandName()} <command> [options]`;
  return `${usage}\n(${commandName()} help${command ? ` ${name}` : ''} for more)`;
}

/** Whether a command's arguments ask for its help page (`--help` or `-h`, before any `--`). */
export function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}
