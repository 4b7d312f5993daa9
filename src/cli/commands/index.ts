import type { CliCommand } from '../command';
import { runCommand, listCommand, scheduleCommand } from './runs';
import { chatCommand, sendCommand, endCommand } from './conversations';
import { statusCommand, historyCommand, approveCommand, rejectCommand, eventCommand, cancelCommand } from './any-run';
import { replayCommand, deployCommand, evalCommand, rerunCommand } from './changes';
import {
  agentsCommand,
  workerCommand,
  serveCommand,
  mcpCommand,
  a2aCommand,
  codecServerCommand,
  installTemporalCommand,
} from './servers';

/**
 * Every command of the command line, in the order the overview lists them: help, dispatch and
 * the bin read this table and nothing else. A new command is one entry here (see `CliCommand`).
 */
export const COMMANDS: readonly CliCommand<any>[] = [
  runCommand,
  listCommand,
  scheduleCommand,
  chatCommand,
  sendCommand,
  endCommand,
  statusCommand,
  historyCommand,
  approveCommand,
  rejectCommand,
  eventCommand,
  cancelCommand,
  replayCommand,
  deployCommand,
  evalCommand,
  rerunCommand,
  agentsCommand,
  workerCommand,
  serveCommand,
  mcpCommand,
  a2aCommand,
  codecServerCommand,
  installTemporalCommand,
];

/** The command of this name, if there is one. */
export function findCommand(name: string): CliCommand<any> | undefined {
  return COMMANDS.find((c) => c.name === name);
}
