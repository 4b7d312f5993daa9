import { IMAGE_HELP, WAIT_HELP } from '../option-flags';
import { CONVERSATION_OPTION_HELP } from '../conversation/conversation-args';
import { lazyCommand, JSON_HELP } from './conversation-kinds';

/** `chat`: a conversation in the terminal. */
export const chatCommand = lazyCommand('chat', () => import('../conversation/chat-command'), {
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
export const sendCommand = lazyCommand('send', () => import('../conversation/send-command'), {
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
export const endCommand = lazyCommand('end', () => import('../conversation/end-command'), {
  group: 'Conversations',
  synopsis: 'end <id>',
  summary: 'end a conversation',
  page: (me) => `usage: ${me} end <id> [--json]

  Closes conversation <id> once the messages it has accepted are answered (it takes no new ones),
  and prints its totals.
${JSON_HELP}`,
});

/** `fork`: a branch at an earlier message. */
export const forkCommand = lazyCommand('fork', () => import('../conversation/fork-command'), {
  group: 'Conversations',
  synopsis: 'fork <id> <index> ["<message>"]',
  summary: 'answer an earlier message again, or an edited one (a branch)',
  page: (me) => `usage: ${me} fork <id> <index> ["<message>"] [--into <new id> [--branch <branch>]] [--json]

  Forks conversation <id> at its user message number <index> (as history --json counts them, from
  0): "<message>" takes that message's place (absent: the same message again, a new answer), and
  its turn sees only what came before it. The branch it replaces stays readable (history
  --branch) and can be made current again (branches --switch).
  --into <new id>        fork into a new conversation instead; <id> stays as it is
  --branch <branch>      with --into: fork from that branch (default: the current one)
${JSON_HELP}`,
});

/** `branches`: list, or make one current again. */
export const branchesCommand = lazyCommand('branches', () => import('../conversation/branches-command'), {
  group: 'Conversations',
  synopsis: 'branches <id> [--switch <branch>]',
  summary: 'its branches; make one current again',
  page: (me) => `usage: ${me} branches <id> [--switch <branch>] [--json]

  Lists the branches of conversation <id> (fork, and regenerate or edit in a chat page, make
  them), the current one first (*), with where each parted from the one it was forked from.
  --switch <branch>      make that branch current again (between turns): new messages go on
                         from its end, and the branch that was current stays readable
${JSON_HELP}`,
});

/** The commands of "Conversations", in the overview's order. */
export const CONVERSATION_COMMANDS = [chatCommand, sendCommand, forkCommand, branchesCommand, endCommand];
