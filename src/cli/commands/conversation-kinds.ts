import { defineCommand, type CliCommand, type CommandGroup } from '../command';
import { parseConversationArgs, type ConversationCommand } from '../parse-conversation-args';

/** The `--json` line of the help pages. */
export const JSON_HELP = '  --json                 print exactly one JSON object (errors too: {"error", "errorType"})';

/**
 * A command `conversation-commands.ts` carries out (the conversation commands, and those that
 * take any run or conversation by id): parsed there, run there, loaded when run.
 */
export function conversationCommand(
  name: ConversationCommand['kind'],
  entry: { group: CommandGroup; synopsis: string; summary: string; page(me: string): string },
): CliCommand<ConversationCommand> {
  return defineCommand<ConversationCommand>({
    name,
    ...entry,
    parse: (args, { registered }) => parseConversationArgs(name, args, registered),
    run: async (command, { target, io }) =>
      (await import('../conversation-commands')).runConversationCommand(command, target, io),
  });
}

/** The page of a command that takes one id and `--json`. */
export function idCommandPage(me: string, name: string, what: string): string {
  return `usage: ${me} ${name} <id> [--json]

  ${what}
  <id> is a conversation's id or a one-shot run's workflow id.
${JSON_HELP}`;
}
