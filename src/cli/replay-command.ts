import { replayAgentHistories, type ReplayReport } from '../worker/replay-histories';
import { queryRefused } from '../client/client-error';
import { durationMs, parseFlags, UsageError, wholeNumber } from './option-flags';
import { commandName } from './command-name';
import { openSession, type CommandTarget } from './session';

/** The usage line of `replay`. */
export const REPLAY_USAGE = `usage: ${commandName()} replay [--since 7d | --query "<visibility query>"] [--limit N] [--histories <dir or file>] [--json]`;

/** A parsed `replay` command. */
export interface ReplayCommand {
  since?: string;
  query?: string;
  limit?: number;
  histories?: string;
  json: boolean;
}

/** Parses `replay` arguments. */
export function parseReplayArgs(argv: string[]): ReplayCommand {
  const { values, positionals } = parseFlags(argv, {
    since: { type: 'string' },
    query: { type: 'string' },
    limit: { type: 'string' },
    histories: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  if (positionals.length) throw new UsageError(`replay takes no arguments, got ${positionals.join(' ')}`);
  if (values.since !== undefined && values.query !== undefined)
    throw new UsageError('--since and --query exclude each other (put a StartTime condition in the query)');
  if (values.histories !== undefined && (values.since !== undefined || values.query !== undefined))
    throw new UsageError('--histories reads files: --since and --query choose histories on a cluster');
  const cmd: ReplayCommand = { json: values.json ?? false };
  if (values.since !== undefined) {
    durationMs('--since', values.since);
    cmd.since = values.since;
  }
  if (values.query !== undefined) {
    if (!values.query.trim()) throw new UsageError('--query must not be empty');
    cmd.query = values.query;
  }
  if (values.limit !== undefined) cmd.limit = wholeNumber('--limit', values.limit, 1);
  if (values.histories !== undefined) cmd.histories = values.histories;
  return cmd;
}

/**
 * Replays agent and conversation histories against this installation's workflow code; exit 0
 * when every one replays, 1 when one does not (non-determinism: the code would break it).
 */
export async function runReplayCommand(
  cmd: ReplayCommand,
  target: CommandTarget,
  io: { stdout: (text: string) => void; stderr: (line: string) => void },
): Promise<number> {
  const line = (r: { workflowId: string; file?: string; error?: string }) => {
    if (!cmd.json) io.stdout(r.error ? `✗ ${r.file ?? r.workflowId}: ${r.error}` : `✓ ${r.file ?? r.workflowId}`);
  };
  let report: ReplayReport;
  if (cmd.histories !== undefined) {
    try {
      report = await replayAgentHistories({ dir: cmd.histories }, { onResult: line });
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  } else {
    const session = await openSession({
      taskQueue: target.taskQueue,
      settings: target.settings,
      note: (l) => (cmd.json ? undefined : io.stderr(l)),
    });
    try {
      report = await replayAgentHistories(
        { client: session.client, since: cmd.since, query: cmd.query, limit: cmd.limit },
        { onResult: line },
      );
    } catch (err) {
      throw queryRefused(err, cmd.query === undefined ? '--since' : '--query');
    } finally {
      await session.close();
    }
  }
  if (report.skipped?.length && !cmd.json)
    io.stderr(
      `Skipped ${report.skipped.length} histor${report.skipped.length === 1 ? 'y' : 'ies'} of other workflows: ${report.skipped.map((h) => `${h.file ?? h.workflowId} (${h.workflowType})`).join(', ')}`,
    );
  if (cmd.json) io.stdout(JSON.stringify(report));
  else
    io.stdout(
      report.replayed === 0
        ? `No histories to replay${report.query ? ` (query: ${report.query})` : ''}`
        : `Replayed ${report.replayed} histor${report.replayed === 1 ? 'y' : 'ies'}: ${report.failed.length === 0 ? 'all replay with this code' : `${report.failed.length} failed (this code would break them: keep the old behaviour behind patched(), or route them to workers of the old build)`}`,
    );
  return report.failed.length ? 1 : 0;
}
