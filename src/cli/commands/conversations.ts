import { IMAGE_HELP, WAIT_HELP } from '../option-flags';
import { CONVERSATION_OPTION_HELP } from '../parse-conversation-args';
import { conversationCommand, JSON_HELP } from './conversation-kinds';

/** `chat`: a conversation in the terminal. */
export const chatCommand = conversationCommand('chat', {
  group: 'Conversations',
  synopsis: 'chat',
  summary: 'talk with an agent in this terminal',
  page: (me) => `usage: ${me} chat [--conversation <id>] [options] [--json]

  A conversation is one long-lived workflow. chat opens it (a new id unless --conversation names
  one), sends each line you type and shows the answer as it is written. Ctrl+C cancels the turn
  under way; Ctrl+D leaves (the conversation stays open: send or chat --conversation go on with it).
  The options apply when the conversation starts.

${CONVERSATION_OPTION_HELP}
  --json                 print one JSON object per turn`,
});

/** `send`: one message. */
export const sendCommand = conversationCommand('send', {
  group: 'Conversations',
  synopsis: 'send <id> "<message>"',
  summary: 'send one message (starts the conversation if needed)',
  page: (
    me,
  ) => `usage: ${me} send <id> "<message>" [options] [--image <file or URL>]... [--no-wait | --wait 2m] [--json]

  Sends one message to conversation <id>, starting it when it is not open, and prints the answer.
  --tools and --needs-approval apply to this message on; the other options only when it starts.

${CONVERSATION_OPTION_HELP}
${IMAGE_HELP}
  --no-wait              queue the message (a Signal) instead of waiting for the answer
${WAIT_HELP}
${JSON_HELP}`,
});

/** `end`: closes a conversation. */
export const endCommand = conversationCommand('end', {
  group: 'Conversations',
  synopsis: 'end <id>',
  summary: 'end a conversation',
  page: (me) => `usage: ${me} end <id> [--json]

  Closes conversation <id> once the messages it has accepted are answered (it takes no new ones),
  and prints its totals.
${JSON_HELP}`,
});

/** The commands of "Conversations", in the overview's order. */
export const CONVERSATION_COMMANDS = [chatCommand, sendCommand, endCommand];
