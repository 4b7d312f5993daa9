import { listBranches, switchBranch } from '../../client/branches';
import type { BranchInfo } from '../../core/conversation/conversation-state';
import type { CommandContext } from '../command';
import { parseFlags } from '../option-flags';
import { commandSession } from './command-session';
import { expectPositionals, JSON_FLAG, nonEmpty } from './conversation-args';

/** `branches <id> [--switch <branch>] [--json]`. */
export interface BranchesCommand {
  conversationId: string;
  switchTo?: string;
  json: boolean;
}

/** `branches`'s arguments, every mistake a `UsageError` before anything connects. */
export function parse(argv: string[]): BranchesCommand {
  const { values, positionals } = parseFlags(argv, { ...JSON_FLAG, switch: { type: 'string' } });
  const [conversationId] = expectPositionals('branches', positionals, ['<id>']);
  const switchTo = nonEmpty('--switch', values.switch);
  return { conversationId, ...(switchTo ? { switchTo } : {}), json: values.json ?? false };
}

/** A conversation's branches (see `core/conversation/branches.ts`); `--switch` makes one current again. */
export function run(cmd: BranchesCommand, context: CommandContext): Promise<number> {
  const id = cmd.conversationId;
  return commandSession(context, { json: cmd.json, workflowId: id }, async ({ client, print }) => {
    const branches = cmd.switchTo ? await switchBranch(client, id, cmd.switchTo) : await listBranches(client, id);
    const note = cmd.switchTo ? `Branch ${cmd.switchTo} is current again; new messages go on from its end.\n` : '';
    print(branches, `${note}${branchesText(branches)}`);
    return 0;
  });
}

/** One line per branch: current first, where each parted, its size and its first message. */
export function branchesText(branches: readonly BranchInfo[]): string {
  return branches
    .map((b) => {
      const from = b.parent !== undefined ? `, from ${b.parent} at message ${b.forkedAt}` : '';
      const kept = b.heldBy ? ' (kept by an earlier run: readable, not switchable)' : '';
      const label = b.label ? `  "${b.label}"` : '';
      return `${b.current ? '*' : ' '} ${b.id}  ${b.messageCount} messages${from}${kept}${label}`;
    })
    .join('\n');
}
