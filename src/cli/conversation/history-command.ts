import { readStatus, readTranscript } from '../../client/workflow-controls';
import type { CommandContext } from '../command';
import { transcriptText, versionText } from '../format-conversation';
import { parseFlags } from '../option-flags';
import { commandSession } from './command-session';
import { expectPositionals, JSON_FLAG, nonEmpty } from './conversation-args';

/** `history <id> [--branch <branch>] [--json]`. */
export interface HistoryCommand {
  conversationId: string;
  branch?: string;
  json: boolean;
}

/** `history`'s arguments, every mistake a `UsageError` before anything connects. */
export function parse(argv: string[]): HistoryCommand {
  const { values, positionals } = parseFlags(argv, { ...JSON_FLAG, branch: { type: 'string' } });
  const [conversationId] = expectPositionals('history', positionals, ['<id>']);
  const branch = nonEmpty('--branch', values.branch);
  return { conversationId, ...(branch ? { branch } : {}), json: values.json ?? false };
}

/** The messages of a run or conversation (a branch's), with the definition and build that answered. */
export function run(cmd: HistoryCommand, context: CommandContext): Promise<number> {
  const id = cmd.conversationId;
  return commandSession(context, { json: cmd.json, workflowId: id }, async ({ client, print }) => {
    const transcript = await readTranscript(client, id, cmd.branch ? { branch: cmd.branch } : {});
    // Which definition and build answered (the status knows; a run it cannot read still has its history).
    const status = await readStatus(client, id).catch(() => undefined);
    const versions = {
      ...(status?.agentVersion ? { agentVersion: status.agentVersion } : {}),
      ...(status?.buildId ? { buildId: status.buildId } : {}),
    };
    const header = versionText(versions);
    print(
      { workflowId: id, ...transcript, ...versions },
      `${header ? `(${header})\n` : ''}${transcriptText(transcript)}`,
    );
    return 0;
  });
}
