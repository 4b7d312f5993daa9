import { defineCommand } from '../command';
import { parseWorkspaceArgs, WORKSPACE_USAGE } from '../workspace-command';
import { lazyCommand, idCommandPage, JSON_HELP } from './conversation-kinds';

const group = 'Any run or conversation';

/** `status <id>`. */
export const statusCommand = lazyCommand('status', () => import('../conversation/status-command'), {
  group,
  synopsis: 'status <id>',
  summary: 'what it is doing now',
  page: (me) =>
    idCommandPage(
      me,
      'status',
      'Prints what the run or conversation is doing: its state, turn, pending tool calls and approvals, usage.',
    ),
});

/** `history <id>`. */
export const historyCommand = lazyCommand('history', () => import('../conversation/history-command'), {
  group,
  synopsis: 'history <id>',
  summary: 'its messages',
  page: (me) => `usage: ${me} history <id> [--branch <branch>] [--json]

  Prints the messages of the run or conversation (a conversation: its whole transcript).
  <id> is a conversation's id or a one-shot run's workflow id.
  --branch <branch>      a conversation's branch other than the current one (see branches)
${JSON_HELP}`,
});

/** `approve <id> <callId>`. */
export const approveCommand = lazyCommand(
  'approve',
  async () => {
    const m = await import('../conversation/approve-command');
    return { parse: m.parseApprove, run: m.run };
  },
  {
    group,
    synopsis: 'approve <id> <callId>',
    summary: 'let a tool call that waits for approval run',
    page: (me) => `usage: ${me} approve <id> <callId> [--reason "..."] [--json]

  Approves a tool call waiting for approval (status lists them with their call ids); the tool runs.
  --reason "..."         the answer, when a running tool asked a question (status shows it)
${JSON_HELP}`,
  },
);

/** `reject <id> <callId>`. */
export const rejectCommand = lazyCommand(
  'reject',
  async () => {
    const m = await import('../conversation/approve-command');
    return { parse: m.parseReject, run: m.run };
  },
  {
    group,
    synopsis: 'reject <id> <callId>',
    summary: 'refuse it (the LLM reads why)',
    page: (me) => `usage: ${me} reject <id> <callId> [--reason "..."] [--json]

  Rejects a tool call waiting for approval; it does not run, and the LLM reads the reason.
  --reason "..."         why; the LLM reads it as the tool's result
${JSON_HELP}`,
  },
);

/** `event <id> <name> [json]`. */
export const eventCommand = lazyCommand('event', () => import('../conversation/event-command'), {
  group,
  synopsis: 'event <id> <name> [json]',
  summary: 'deliver an event a wait_for_event waits for',
  page: (me) => `usage: ${me} event <id> <name> ['<json>' | @file.json] [--event-id ID] [--json]

  Delivers an event to a run or conversation: a wait_for_event call of that name gets the JSON
  payload as its result (default null). An event that arrives before the agent waits is kept.
  Names: letters, digits and _ . : - (up to 128); payloads up to 256 KiB.
  --event-id ID          the event's id: delivered again under the same id (a retry), it is
                         dropped (the last 1,000 ids of a run or conversation are remembered)
${JSON_HELP}`,
});

/** `cancel <id>`. */
export const cancelCommand = lazyCommand('cancel', () => import('../conversation/cancel-command'), {
  group,
  synopsis: 'cancel <id>',
  summary: 'cancel a run, or the current turn of a conversation',
  page: (me) =>
    idCommandPage(me, 'cancel', 'Cancels a one-shot run, or the turn under way in a conversation (which stays open).'),
});

/** `delete <id>`. */
export const deleteCommand = lazyCommand('delete', () => import('../conversation/delete-command'), {
  group,
  synopsis: 'delete <id>',
  summary: 'delete a finished one: its history, stored payloads, workspace states',
  page: (me) =>
    idCommandPage(
      me,
      'delete',
      `Deletes a finished run or conversation with what it left: its history (every run it continued
  through), the payloads it put in the payload store, and its workspace states. An open one is
  refused: cancel the run, or end the conversation, first. Facts it remembered stay (memory delete).`,
    ),
});

/** `workspace <id> ls|cat|get|diff|export|log`: the files its tools left, at any step. */
export const workspaceCommand = defineCommand({
  name: 'workspace',
  group,
  synopsis: 'workspace <id> ls|cat|get|diff|export|log',
  summary: 'the files its tools made: list, read, diff, export, at any step',
  page: () => `${WORKSPACE_USAGE}

  The workspace of a run or conversation whose tools run commands and edit files (bash,
  write_file, ...; see docs/workspaces.md): every call that changed it committed a state, read here
  from the run's histories and the blob store the worker saved it in (AGENT_BLOB_DIR, or the
  S3 bucket of AGENT_PAYLOAD_STORE); no worker is needed, and the run may be closed.
  ls [path]              its files and sizes (under path)
  cat <path>             a file, to stdout
  get <path> --out FILE  a file, to FILE
  diff                   what changed, as a unified diff: from the start (or before step A,
                         --from-step A) to now (or before step B, --to-step B)
  export --out FILE.tar  all of it, as a tar
  log                    the calls that changed it: step, call, paths added, changed, removed
  --step N               as it was before model call N (as rerun --from-step N starts from it)
${JSON_HELP}`,
  parse: (args) => parseWorkspaceArgs(args),
  run: async (command, { target, io }) =>
    (await import('../workspace-command')).runWorkspaceCommand(command, target, io),
});

/** The commands of "Any run or conversation", in the overview's order. */
export const ANY_RUN_COMMANDS = [
  statusCommand,
  historyCommand,
  approveCommand,
  rejectCommand,
  eventCommand,
  cancelCommand,
  workspaceCommand,
  deleteCommand,
];
