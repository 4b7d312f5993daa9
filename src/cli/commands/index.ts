import type { CliCommand } from '../command';
import { ANY_RUN_COMMANDS } from './any-run';
import { CHANGE_COMMANDS } from './changes';
import { CONVERSATION_COMMANDS } from './conversations';
import { RUN_COMMANDS } from './runs';
import { SERVER_COMMANDS } from './servers';
import { TENANT_COMMANDS } from './tenants';

/**
 * Every command of the command line, in the order the overview lists them: help, dispatch and
 * the bin read this table and nothing else. A new command is one entry here (see `CliCommand`).
 */
export const COMMANDS: readonly CliCommand<any>[] = [
  ...RUN_COMMANDS,
  ...CONVERSATION_COMMANDS,
  ...ANY_RUN_COMMANDS,
  ...TENANT_COMMANDS,
  ...CHANGE_COMMANDS,
  ...SERVER_COMMANDS,
];

/** The command of this name, if there is one. */
export function findCommand(name: string): CliCommand<any> | undefined {
  return COMMANDS.find((c) => c.name === name);
}
