import { endConversation } from '../../client/conversations';
import type { CommandContext } from '../command';
import { usageText } from '../usage-text';
import { commandSession } from './command-session';
import { parseIdCommand, type IdCommand } from './conversation-args';

/** `end <id> [--json]`: closes a conversation once what it accepted is answered. */
export function parse(argv: string[]): IdCommand {
  return parseIdCommand('end', argv);
}

/** Runs `end`; resolves to its exit code. */
export function run(cmd: IdCommand, context: CommandContext): Promise<number> {
  const id = cmd.conversationId;
  return commandSession(context, { json: cmd.json, workflowId: id }, async ({ client, print }) => {
    const r = await endConversation(client, id);
    const turns = `${r.turns} turn${r.turns === 1 ? '' : 's'}`;
    const text = r.alreadyClosed
      ? `${r.conversationId} was already closed (${r.reason === 'idle_timeout' ? 'idle timeout' : 'ended'} after ${turns})`
      : `Ended ${r.conversationId} after ${turns} (${usageText(r.usage)})`;
    print(r, text);
    return 0;
  });
}
