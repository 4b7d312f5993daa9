import { deleteRun } from '../../client/delete-run';
import type { CommandContext } from '../command';
import { commandSession } from './command-session';
import { parseIdCommand, type IdCommand } from './conversation-args';

/** `delete <id> [--json]`: a finished run or conversation, with its payloads and workspace states. */
export function parse(argv: string[]): IdCommand {
  return parseIdCommand('delete', argv);
}

/** Runs `delete`; resolves to its exit code. */
export function run(cmd: IdCommand, context: CommandContext): Promise<number> {
  const id = cmd.conversationId;
  return commandSession(context, { json: cmd.json }, async ({ client, print }) => {
    const deleted = await deleteRun(client, id);
    const what = deleted.kind === 'conversation' ? 'the conversation' : 'the run';
    print(
      deleted,
      `Deleted ${what} ${id}: its history, ${plural(deleted.payloads, 'stored payload')} and ${plural(deleted.workspaceBlobs, 'workspace blob')}.`,
    );
    return 0;
  });
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
