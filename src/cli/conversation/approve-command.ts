import { decideApproval } from '../../client/workflow-controls';
import type { CommandContext } from '../command';
import { parseFlags } from '../option-flags';
import { commandSession } from './command-session';
import { expectPositionals, JSON_FLAG } from './conversation-args';

/** `approve <id> <callId>` and `reject <id> <callId>`, with `--reason`. */
export interface DecisionCommand {
  approve: boolean;
  conversationId: string;
  callId: string;
  reason?: string;
  json: boolean;
}

function parseDecision(name: 'approve' | 'reject', argv: string[]): DecisionCommand {
  const { values, positionals } = parseFlags(argv, { ...JSON_FLAG, reason: { type: 'string' } });
  const [conversationId, callId] = expectPositionals(name, positionals, ['<id>', '<callId>']);
  const reason = (values as { reason?: string }).reason;
  return {
    approve: name === 'approve',
    conversationId,
    callId,
    ...(reason ? { reason } : {}),
    json: values.json ?? false,
  };
}

/** `approve`'s arguments. */
export const parseApprove = (argv: string[]) => parseDecision('approve', argv);
/** `reject`'s arguments. */
export const parseReject = (argv: string[]) => parseDecision('reject', argv);

/** Decides a tool call that waits for approval; the LLM reads a rejection's reason. */
export function run(cmd: DecisionCommand, context: CommandContext): Promise<number> {
  const id = cmd.conversationId;
  return commandSession(context, { json: cmd.json, workflowId: id }, async ({ client, print }) => {
    const decision = { callId: cmd.callId, approve: cmd.approve, ...(cmd.reason ? { reason: cmd.reason } : {}) };
    const r = await decideApproval(client, id, decision);
    print(
      r,
      `${r.approved ? 'Approved' : 'Rejected'} ${r.callId}${r.stillPending ? ` (${r.stillPending} more awaiting approval)` : ''}`,
    );
    return 0;
  });
}
