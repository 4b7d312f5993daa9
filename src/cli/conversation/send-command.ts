import type { ConversationOptions } from '../../core/conversation/conversation-state';
import { queueMessage, startMessage, type MessageRequest } from '../../client/conversations';
import type { CommandContext, ParseContext } from '../command';
import { hintCommand } from '../command-name';
import { turnJson } from '../format-conversation';
import { outcomeText } from '../format-outcome';
import { readImageArguments } from '../image-arguments';
import { stopWaiting } from '../interrupt';
import { durationMs, IMAGE_FLAG, parseFlags, startOnlyWarning, UsageError, WAIT_FLAG } from '../option-flags';
import { retryText, watchProgress } from '../progress';
import { commandSession, type CommandSession } from './command-session';
import { conversationOptions, expectPositionals, JSON_FLAG, OPTION_FLAGS } from './conversation-args';

/** `send <id> "<message>" [options] [--image f]... [--no-wait | --wait 2m] [--json]`. */
export interface SendCommand {
  conversationId: string;
  message: string;
  /** `--image`: files or URLs sent with the message. */
  images?: string[];
  options: ConversationOptions;
  noWait: boolean;
  waitMs?: number;
  json: boolean;
}

/** `send`'s arguments, every mistake a `UsageError` before anything connects. */
export function parse(argv: string[], { registered }: ParseContext): SendCommand {
  const { values, positionals } = parseFlags(argv, {
    ...OPTION_FLAGS,
    ...JSON_FLAG,
    ...WAIT_FLAG,
    ...IMAGE_FLAG,
    'no-wait': { type: 'boolean', default: false },
  });
  const [conversationId, message] = expectPositionals('send', positionals, ['<id>', '"<message>"']);
  if (values['no-wait'] && values.wait !== undefined) throw new UsageError('--no-wait and --wait exclude each other');
  const send: SendCommand = {
    conversationId,
    message,
    options: conversationOptions(values, registered),
    noWait: values['no-wait'] ?? false,
    json: values.json ?? false,
  };
  if (values.wait !== undefined) send.waitMs = durationMs('--wait', values.wait);
  if (values.image?.length) send.images = values.image;
  return send;
}

/**
 * Sends the message (starting the conversation when it is not open) and prints the answer: 0, 1
 * when the turn failed, 3 when `--wait` ran out, 130 on Ctrl+C (the turn goes on).
 */
export function run(cmd: SendCommand, context: CommandContext): Promise<number> {
  const { io } = context;
  return commandSession(context, { json: cmd.json, needsWorker: true }, async (session) => {
    const { client, taskQueue, print } = session;
    const start = { taskQueue, options: cmd.options };
    const turn = await turnOf(cmd);
    const warn = (wasOpen: boolean) => {
      const warning = wasOpen ? startOnlyWarning(cmd.conversationId, cmd.options) : undefined;
      if (warning) io.stderr(warning);
    };
    if (cmd.noWait) {
      warn((await queueMessage(client, cmd.conversationId, turn, start)).wasOpen);
      print(
        { conversationId: cmd.conversationId, queued: true },
        `Queued for ${cmd.conversationId}; see it with: ${hintCommand()} status ${cmd.conversationId}`,
      );
      return 0;
    }
    const sent = await startMessage(client, cmd.conversationId, turn, start, { note: io.stderr });
    warn(sent.wasOpen);
    return awaitAnswer(cmd, session, context, sent.result);
  });
}

/** The message as sent: per-message options reach an open conversation too (the others only apply when it starts). */
async function turnOf(cmd: SendCommand): Promise<MessageRequest> {
  const turn: MessageRequest = { message: cmd.message };
  if (cmd.images) turn.images = await readImageArguments(cmd.images);
  if (cmd.options.tools) turn.tools = cmd.options.tools;
  if (cmd.options.approvalTools) turn.approvalTools = cmd.options.approvalTools;
  // What the message does while a turn runs: for this message, whether the conversation is open or new.
  if (cmd.options.busy) turn.busy = cmd.options.busy;
  return turn;
}

/** Waits for the turn's answer, showing retries and stuck workflow tasks, until `--wait` or Ctrl+C. */
async function awaitAnswer(
  cmd: SendCommand,
  { client, print, uiLink, scoped }: CommandSession,
  { io }: CommandContext,
  result: () => Promise<Parameters<typeof turnJson>[0]>,
): Promise<number> {
  let stopWatching = () => undefined as void;
  const stopped = stopWaiting(cmd.waitMs);
  try {
    const answer = await scoped(() => {
      stopWatching = watchProgress(client, cmd.conversationId, 'conversation', {
        retry: (r) => io.stderr(retryText(r)),
        failing: (reason) =>
          io.stderr(`The conversation makes no progress: its workers fail its workflow tasks: ${reason}`),
      });
      return Promise.race([result(), stopped.reason]);
    });
    if (typeof answer === 'string') {
      const follow = `Stopped waiting; the turn goes on in ${cmd.conversationId}. Follow it with: ${hintCommand()} status ${cmd.conversationId}`;
      io.stderr(follow);
      if (cmd.json)
        print(
          { conversationId: cmd.conversationId, status: 'running', error: follow, errorType: 'Client.StillRunning' },
          '',
        );
      return answer === 'interrupted' ? 130 : 3;
    }
    print(turnJson(answer), outcomeText(answer, uiLink(cmd.conversationId)));
    return answer.status === 'failed' ? 1 : 0;
  } finally {
    stopWatching();
    stopped.dispose();
  }
}
