import { cancelWork } from '../../client/workflow-controls';
import type { CommandContext } from '../command';
import { commandSession } from './command-session';
import { parseIdCommand, type IdCommand } from './conversation-args';

/** `cancel <id> [--json]`: a run ends cancelled; a conversation's running turn does. */
export function parse(argv: string[]): IdCommand {
  return parseIdCommand('cancel', argv);
}

/** Runs `cancel`; resolves to its exit code. */
export function run(cmd: IdCommand, context: CommandContext): Promise<number> {
  const id = cmd.conversationId;
  return commandSession(context, { json: cmd.json }, async ({ client, print }) => {
    const r = await cancelWork(client, id);
    if (r.kind === 'run')
      print({ workflowId: id, cancelled: 'run' }, `Cancelling the run ${id}; it ends with status "cancelled".`);
    else print({ conversationId: id, cancelledTurn: r.turn }, `Cancelled turn ${r.turn} of ${id}`);
    return 0;
  });
}
