import type { ConversationOptions } from '../../core/conversation/conversation-state';
import { newConversationId } from '../../client/conversations';
import type { CommandContext, ParseContext } from '../command';
import { chat } from '../chat';
import { parseFlags, UsageError } from '../option-flags';
import { workflowIdProblem } from '../../core/run/run-input';
import { commandSession } from './command-session';
import { conversationOptions, expectPositionals, JSON_FLAG, OPTION_FLAGS } from './conversation-args';

/** `chat [--conversation <id>] [options] [--json]`. */
export interface ChatCommand {
  conversationId?: string;
  options: ConversationOptions;
  json: boolean;
}

/** `chat`'s arguments, every mistake a `UsageError` before anything connects. */
export function parse(argv: string[], { registered }: ParseContext): ChatCommand {
  const { values, positionals } = parseFlags(argv, { ...OPTION_FLAGS, ...JSON_FLAG, conversation: { type: 'string' } });
  expectPositionals('chat', positionals, []);
  const idProblem =
    values.conversation === undefined ? undefined : workflowIdProblem(values.conversation, '--conversation');
  if (idProblem) throw new UsageError(idProblem);
  return {
    ...(values.conversation !== undefined ? { conversationId: values.conversation } : {}),
    options: conversationOptions(values, registered),
    json: values.json ?? false,
  };
}

/** A conversation in the terminal, until Ctrl+D or /end. */
export function run(cmd: ChatCommand, context: CommandContext): Promise<number> {
  const { io } = context;
  return commandSession(
    context,
    { json: cmd.json, needsWorker: true },
    async ({ client, taskQueue, uiLink, scoped }) => {
      const id = cmd.conversationId ?? newConversationId();
      await chat({
        client,
        conversationId: id,
        start: { taskQueue, options: cmd.options },
        io: {
          input: io.stdin,
          out: io.stdout,
          note: cmd.json ? io.stderr : io.stdout,
          prompt: (text) => io.write(text, cmd.json),
        },
        json: cmd.json,
        uiLink: uiLink(id),
        scoped,
      });
      return 0;
    },
  );
}
