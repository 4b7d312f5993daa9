import { defineCommand, type CliCommand, type CommandContext, type CommandGroup, type ParseContext } from '../command';

/** The `--json` line of the help pages. */
export const JSON_HELP = '  --json                 print exactly one JSON object (errors too: {"error", "errorType"})';

/** A command's own module: how it reads its arguments, and what it does. */
export interface CommandModule<P> {
  parse(argv: string[], context: ParseContext): P;
  run(command: P, context: CommandContext): Promise<number>;
}

/**
 * A command whose parse and run live in a module of their own (`cli/conversation/<name>-command.ts`),
 * loaded when the command is used: the table lists it, the module does it.
 */
export function lazyCommand<P>(
  name: string,
  load: () => Promise<CommandModule<P>>,
  entry: { group: CommandGroup; synopsis: string; summary: string; page(me: string): string },
): CliCommand<P> {
  return defineCommand<P>({
    name,
    ...entry,
    parse: async (args, context) => (await load()).parse(args, context),
    run: async (command, context) => (await load()).run(command, context),
  });
}

/** The page of a command that takes one id and `--json`. */
export function idCommandPage(me: string, name: string, what: string): string {
  return `usage: ${me} ${name} <id> [--json]

  ${what}
  <id> is a conversation's id or a one-shot run's workflow id.
${JSON_HELP}`;
}
