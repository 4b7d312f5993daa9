import { readStatus } from '../../client/workflow-controls';
import type { CommandContext } from '../command';
import { statusText } from '../format-conversation';
import { commandSession } from './command-session';
import { parseIdCommand, type IdCommand } from './conversation-args';

/** `status <id> [--json]`: what a run or conversation is doing now. */
export function parse(argv: string[]): IdCommand {
  return parseIdCommand('status', argv);
}

/** Runs `status`; resolves to its exit code. */
export function run(cmd: IdCommand, context: CommandContext): Promise<number> {
  const id = cmd.conversationId;
  return commandSession(context, { json: cmd.json, workflowId: id }, async ({ client, print, uiLink }) => {
    const status = await readStatus(client, id);
    print(status, statusText(status, uiLink(id)));
    return 0;
  });
}
