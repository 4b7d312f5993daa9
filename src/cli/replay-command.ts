import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ReplayReport } from '../worker/replay-histories';
import { queryRefused } from '../client/client-error';
import { buildQuery } from '../client/deployments';
import { durationMs, parseFlags, UsageError, wholeNumber } from './option-flags';
import { commandName } from './command-name';
import { openSession, type CommandTarget } from './session';

/** The usage line of `replay`. */
export const REPLAY_USAGE = `usage: ${commandName()} replay [--since 7d | --query "<visibility query>" | --open | --build <buildId>] [--limit N] [--save DIR]
       ${commandName()} replay --histories <dir or file>
       (either with [--workflows <module>] [--json])`;

/** A parsed `replay` command. */
export interface ReplayCommand {
  since?: string;
  query?: string;
  limit?: number;
  histories?: string;
  /** The user's workflows module (their worker's `workflowsPath`), absolute. */
  workflows?: string;
  /** Where fetched histories are saved. */
  save?: string;
  json: boolean;
}

/** Parses `replay` arguments; `env` gives `AGENT_DEPLOYMENT_NAME` for `--build`. */
export function parseReplayArgs(argv: string[], env: NodeJS.ProcessEnv = {}): ReplayCommand {
  const { values, positionals } = parseFlags(argv, {
    since: { type: 'string' },
    query: { type: 'string' },
    open: { type: 'boolean', default: false },
    build: { type: 'string' },
    deployment: { type: 'string' },
    limit: { type: 'string' },
    histories: { type: 'string' },
    workflows: { type: 'string' },
    save: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  if (positionals.length) throw new UsageError(`replay takes no arguments, got ${positionals.join(' ')}`);
  const choosers = (['since', 'query', 'open', 'build'] as const).filter((k) =>
    k === 'open' ? values.open : values[k] !== undefined,
  );
  if (choosers.length > 1)
    throw new UsageError(
      `${choosers.map((k) => `--${k}`).join(' and ')} exclude each other (put a StartTime condition in --query)`,
    );
  if (values.histories !== undefined && (choosers.length || values.save !== undefined))
    throw new UsageError(
      '--histories reads files: --since, --query, --open, --build and --save choose histories on a cluster',
    );
  const cmd: ReplayCommand = { json: values.json ?? false };
  if (values.since !== undefined) {
    durationMs('--since', values.since);
    cmd.since = values.since;
  }
  if (values.query !== undefined) {
    if (!values.query.trim()) throw new UsageError('--query must not be empty');
    cmd.query = values.query;
  }
  if (values.open) cmd.query = "ExecutionStatus = 'Running'";
  if (values.build !== undefined) {
    const deployment = values.deployment ?? env.AGENT_DEPLOYMENT_NAME?.trim();
    if (!deployment)
      throw new UsageError('--build needs the deployment: give --deployment NAME or set AGENT_DEPLOYMENT_NAME');
    if (!/^[A-Za-z0-9_.\-/@+]{1,255}$/.test(values.build))
      throw new UsageError(`--build: "${values.build}" is not a build id`);
    cmd.query = buildQuery(deployment, values.build);
  } else if (values.deployment !== undefined) throw new UsageError('--deployment goes with --build');
  if (values.limit !== undefined) cmd.limit = wholeNumber('--limit', values.limit, 1);
  if (values.histories !== undefined) cmd.histories = values.histories;
  if (values.save !== undefined) cmd.save = values.save;
  if (values.workflows !== undefined) {
    const path = resolve(values.workflows);
    const found = [path, `${path}.ts`, `${path}.js`].find((p) => existsSync(p));
    if (!found)
      throw new UsageError(`--workflows: no module ${values.workflows} (the workflowsPath your worker bundles)`);
    cmd.workflows = found;
  }
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
  const line = (r: { workflowId: string; workflowType?: string; file?: string; error?: string }) => {
    const what = `${r.file ?? r.workflowId}${r.workflowType ? ` (${r.workflowType})` : ''}`;
    if (!cmd.json) io.stdout(r.error ? `✗ ${what}: ${r.error}` : `✓ ${what}`);
  };
  const options = { onResult: line, ...(cmd.workflows ? { workflowsPath: cmd.workflows } : {}) };
  // Replaying bundles the workflows, which is worker code: loaded when a replay runs, not with the command line.
  const { replayAgentHistories } = await import('../worker/replay-histories');
  let report: ReplayReport;
  if (cmd.histories !== undefined) {
    try {
      report = await replayAgentHistories({ dir: cmd.histories }, options);
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
        {
          client: session.client,
          since: cmd.since,
          query: cmd.query,
          limit: cmd.limit,
          taskQueue: target.taskQueue,
          ...(cmd.save ? { save: cmd.save } : {}),
        },
        options,
      );
    } catch (err) {
      throw queryRefused(err, cmd.query === undefined ? '--since' : '--query');
    } finally {
      await session.close();
    }
  }
  if (report.skipped?.length && !cmd.json)
    io.stderr(
      `Skipped ${report.skipped.length} histor${report.skipped.length === 1 ? 'y' : 'ies'} of other workflows: ${report.skipped.map((h) => `${h.file ?? h.workflowId} (${h.workflowType})`).join(', ')}${cmd.workflows ? ' (not defined by --workflows either)' : "; give --workflows <module> (your worker's workflowsPath) to replay your own"}`,
    );
  if (cmd.save && !cmd.json) io.stderr(`Saved the histories to ${cmd.save} (replay them with --histories ${cmd.save})`);
  if (cmd.json) io.stdout(JSON.stringify(report));
  else
    io.stdout(
      report.replayed === 0
        ? `No histories to replay${report.query ? ` (query: ${report.query})` : ''}`
        : `Replayed ${report.replayed} histor${report.replayed === 1 ? 'y' : 'ies'}: ${report.failed.length === 0 ? 'all replay with this code' : `${report.failed.length} failed (this code would break them: keep the old behaviour behind a patch (patched of @temporalio/workflow), or route them to workers of the old build)`}`,
    );
  return report.failed.length ? 1 : 0;
}
